/* The data set and driver shared by the drop-in proof programs, dropin_c.c (LevelDB's
   C API) and dropin_cxx.cc (its C++ API): the same keys, values, options and order of
   writes in both, so the tables they write can be compared byte for byte.

   Valid C99 and C++11. A program defines the five dropin_db_* functions below with
   its own LevelDB API and calls dropin_main from main.

     program write DIR N   two sessions of writes, each compacted into tables
     program read DIR N    checks every key of the final state, and N absent keys

   Writes are deterministic: session 1 puts N keys in a shuffled order into one
   memtable (no automatic flush), session 2 overwrites and deletes some of them; each
   session ends with a full manual compaction, and no automatic compaction is ever
   due, so the background thread never races the writes and the same program always
   writes the same table files. */
#ifndef DROPIN_DATA_H
#define DROPIN_DATA_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* Options both programs use. Built with -DDROPIN_BITS_PER_KEY=0, a program sets no
   filter policy at all, as LevelDB's default options (tests/suite/default_bits.rs). */
#ifndef DROPIN_BITS_PER_KEY
#define DROPIN_BITS_PER_KEY 10
#endif
#define DROPIN_WRITE_BUFFER_SIZE (64 << 20) /* holds a whole session: no automatic flush */
#define DROPIN_MAX_FILE_SIZE (1 << 20)      /* the smallest LevelDB allows: more tables */

enum { DROPIN_KEY_MAX = 32, DROPIN_VALUE_MAX = 128 };

typedef struct dropin_db dropin_db;

/* Each program implements these with its LevelDB API; each call is a check
   (`dropin_check`), and on an error they print it and exit(2). dropin_db_get returns 1 and fills value/value_length when the key is
   found, 0 when it is not. */
static dropin_db* dropin_db_open(const char* dir);
static void dropin_db_put(dropin_db* db, const char* key, size_t key_length, const char* value,
                          size_t value_length);
static void dropin_db_delete(dropin_db* db, const char* key, size_t key_length);
static int dropin_db_get(dropin_db* db, const char* key, size_t key_length, char* value,
                         size_t* value_length);
/* Compacts the whole key range (memtable included) into tables, then closes. */
static void dropin_db_compact_and_close(dropin_db* db);
static void dropin_db_close(dropin_db* db);

static void dropin_fail(const char* what, const char* detail) {
  fprintf(stderr, "%s: %s\n", what, detail != NULL ? detail : "");
  exit(2);
}

/* One check: a LevelDB call that must succeed; `detail` is its error, NULL if none.
   A failed one ends the program. */
static void dropin_check(const char* what, const char* detail) {
  if (!CHECK_THAT(detail == NULL, what)) dropin_fail(what, detail);
}

static uint32_t dropin_mix(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/* Key `id`: "user:" and ten digits, then 0..3 letters. Written keys have even ids,
   keys that are never written odd ones, so absent keys fall between present ones. */
static size_t dropin_key(uint32_t id, char* out) {
  size_t length = (size_t)snprintf(out, DROPIN_KEY_MAX, "user:%010lu", (unsigned long)id);
  uint32_t suffix = id % 4, i;
  for (i = 0; i < suffix; i++) out[length++] = (char)('a' + (id >> (i * 3)) % 26);
  return length;
}

/* The value of key `id` as written by `version` (1 or 2): 16..111 letters. */
static size_t dropin_value(uint32_t id, uint32_t version, char* out) {
  uint32_t h = dropin_mix(id * 2654435761U + version);
  size_t length = 16 + h % 96, i;
  for (i = 0; i < length; i++) {
    h = dropin_mix(h + (uint32_t)i);
    out[i] = (char)('a' + h % 26);
  }
  return length;
}

/* What session 2 does to written key number i: overwrite, delete, or nothing. */
enum dropin_fate { DROPIN_KEEP, DROPIN_OVERWRITE, DROPIN_DELETE };
static enum dropin_fate dropin_fate_of(uint32_t i) {
  if (i % 5 == 0) return DROPIN_OVERWRITE;
  if (i % 7 == 0) return DROPIN_DELETE;
  return DROPIN_KEEP;
}

/* 0..n-1 in a shuffled order fixed by `seed` (Fisher-Yates). */
static uint32_t* dropin_shuffled(uint32_t n, uint32_t seed) {
  uint32_t* order = (uint32_t*)malloc(sizeof(uint32_t) * (n > 0 ? n : 1));
  uint32_t i;
  if (order == NULL) dropin_fail("malloc", "order");
  for (i = 0; i < n; i++) order[i] = i;
  for (i = n; i > 1; i--) {
    uint32_t j = dropin_mix(seed + i) % i, t = order[i - 1];
    order[i - 1] = order[j];
    order[j] = t;
  }
  return order;
}

static void dropin_write(const char* dir, uint32_t n) {
  char key[DROPIN_KEY_MAX], value[DROPIN_VALUE_MAX];
  uint32_t* order = dropin_shuffled(n, 1);
  dropin_db* db = dropin_db_open(dir);
  uint32_t i;
  for (i = 0; i < n; i++) {
    uint32_t id = 2 * order[i];
    size_t key_length = dropin_key(id, key);
    dropin_db_put(db, key, key_length, value, dropin_value(id, 1, value));
  }
  dropin_db_compact_and_close(db);
  free(order);

  order = dropin_shuffled(n, 2);
  db = dropin_db_open(dir);
  for (i = 0; i < n; i++) {
    uint32_t id = 2 * order[i];
    size_t key_length = dropin_key(id, key);
    switch (dropin_fate_of(order[i])) {
      case DROPIN_OVERWRITE:
        dropin_db_put(db, key, key_length, value, dropin_value(id, 2, value));
        break;
      case DROPIN_DELETE:
        dropin_db_delete(db, key, key_length);
        break;
      case DROPIN_KEEP:
        break;
    }
  }
  dropin_db_compact_and_close(db);
  free(order);
  printf("wrote: %lu keys\n", (unsigned long)n);
}

/* Reads every key back, each a check: present ones must hold their last value,
   deleted and never written ones must be absent. */
static void dropin_read(const char* dir, uint32_t n) {
  char key[DROPIN_KEY_MAX], expected[DROPIN_VALUE_MAX], got[DROPIN_VALUE_MAX];
  unsigned long present = 0, absent = 0, wrong = 0;
  dropin_db* db = dropin_db_open(dir);
  uint32_t i;
  for (i = 0; i < n; i++) {
    uint32_t id = 2 * i;
    size_t key_length = dropin_key(id, key), got_length = 0, expected_length = 0;
    enum dropin_fate fate = dropin_fate_of(i);
    int found = dropin_db_get(db, key, key_length, got, &got_length);
    if (fate != DROPIN_DELETE)
      expected_length = dropin_value(id, fate == DROPIN_OVERWRITE ? 2 : 1, expected);
    if (!CHECK_THAT(fate == DROPIN_DELETE ? !found
                                          : found && got_length == expected_length &&
                                                memcmp(got, expected, got_length) == 0,
                    "a written key reads back as its last write")) {
      wrong++;
    } else if (found) {
      present++;
    } else {
      absent++;
    }
    key_length = dropin_key(id + 1, key);
    if (!CHECK_THAT(!dropin_db_get(db, key, key_length, got, &got_length),
                    "a key never written is absent")) {
      wrong++;
    } else {
      absent++;
    }
  }
  dropin_db_close(db);
  printf("read: %lu present, %lu absent, %lu wrong\n", present, absent, wrong);
}

/* The swap status as this library reports it, found at run time so the program needs
   neither its header nor its library: "absent" when it is not loaded. */
static void dropin_print_swap_status(void) {
  void* symbol = dlsym(RTLD_DEFAULT, "leveldb_bloom_swap_status");
  if (symbol == NULL) {
    printf("swap status: absent\n");
  } else {
    int (*status)(void);
    memcpy(&status, &symbol, sizeof status); /* object to function pointer, as POSIX allows */
    printf("swap status: %d\n", status());
  }
}

/* The program's main, reporting as `name` (see check.h). */
static int dropin_main(int argc, char** argv, const char* name) {
  unsigned long n;
  if (argc != 4 || (n = strtoul(argv[3], NULL, 10)) == 0 || n > 100000000UL) {
    fprintf(stderr, "usage: %s write|read DIR NUM_KEYS\n", argv[0]);
    return 2;
  }
  dropin_print_swap_status();
  if (strcmp(argv[1], "write") == 0) {
    dropin_write(argv[2], (uint32_t)n);
  } else if (strcmp(argv[1], "read") == 0) {
    dropin_read(argv[2], (uint32_t)n);
  } else {
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    return 2;
  }
  return check_report(name);
}

#endif /* DROPIN_DATA_H */
