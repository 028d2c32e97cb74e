/* The databases of `make bench`'s audit and refilter rows, LevelDB's own checked
 * full scan (the yardstick of the audit's speed, scripts/bench-audit) and its full
 * compaction (the yardstick of refilter's, scripts/bench-refilter).
 *
 *   scan_db build DIR KEYS [plain]
 *                            writes KEYS keys of 24 bytes with 100-byte values
 *                            (half random, half repeated: about 2:1 under snappy),
 *                            with LevelDB's bloom filter, then compacts; plain: with
 *                            no filter policy and no final compaction (the tables
 *                            spread over the levels the writes left them at)
 *   scan_db scan DIR         reads every entry with verify_checksums, one thread,
 *                            and prints the entries and the time in nanoseconds
 *   scan_db compact DIR      opens DIR with LevelDB's bloom filter, compacts the
 *                            whole range and prints the time in nanoseconds
 *   scan_db gets DIR KEYS N  opens DIR (built with KEYS keys) with LevelDB's default
 *                            options (no filter policy), Gets N keys never written,
 *                            inside the keys' range, and prints N and the time in
 *                            nanoseconds (scripts/bench-default-bits)
 */
#define _POSIX_C_SOURCE 200809L
#include <leveldb/c.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void check(char *error, const char *what) {
  if (error != NULL) {
    fprintf(stderr, "scan_db: %s: %s\n", what, error);
    exit(1);
  }
}

static uint64_t next_random(uint64_t *state) {
  *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
  return *state >> 16;
}

static long long nanoseconds_since(const struct timespec *start) {
  struct timespec end;
  clock_gettime(CLOCK_MONOTONIC, &end);
  return (long long)(end.tv_sec - start->tv_sec) * 1000000000LL +
         (end.tv_nsec - start->tv_nsec);
}

static int build(const char *dir, long keys, int plain) {
  leveldb_options_t *options = leveldb_options_create();
  leveldb_options_set_create_if_missing(options, 1);
  leveldb_options_set_compression(options, leveldb_snappy_compression);
  leveldb_filterpolicy_t *bloom = leveldb_filterpolicy_create_bloom(10);
  if (!plain) leveldb_options_set_filter_policy(options, bloom);
  leveldb_options_set_write_buffer_size(options, 16 << 20);
  char *error = NULL;
  leveldb_t *db = leveldb_open(options, dir, &error);
  check(error, "open");
  leveldb_writeoptions_t *write = leveldb_writeoptions_create();
  uint64_t state = 42;
  char key[25], value[100];
  for (long i = 0; i < keys; i++) {
    /* Keys in a random order, so that compactions merge as they do for real data. */
    snprintf(key, sizeof key, "key%021llu",
             (unsigned long long)(next_random(&state) % (uint64_t)(keys * 4)));
    for (int j = 0; j < 50; j += 8) {
      uint64_t r = next_random(&state);
      memcpy(value + j, &r, j + 8 <= 50 ? 8 : (size_t)(50 - j));
    }
    memset(value + 50, 'v', 50);
    leveldb_put(db, write, key, 24, value, sizeof value, &error);
    check(error, "put");
  }
  if (!plain) leveldb_compact_range(db, NULL, 0, NULL, 0);
  leveldb_writeoptions_destroy(write);
  leveldb_close(db);
  leveldb_options_destroy(options);
  leveldb_filterpolicy_destroy(bloom);
  return 0;
}

static int scan(const char *dir) {
  leveldb_options_t *options = leveldb_options_create();
  char *error = NULL;
  leveldb_t *db = leveldb_open(options, dir, &error);
  check(error, "open");
  leveldb_readoptions_t *read = leveldb_readoptions_create();
  leveldb_readoptions_set_verify_checksums(read, 1);
  leveldb_readoptions_set_fill_cache(read, 0);
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  leveldb_iterator_t *it = leveldb_create_iterator(db, read);
  long entries = 0;
  for (leveldb_iter_seek_to_first(it); leveldb_iter_valid(it); leveldb_iter_next(it)) {
    entries++;
  }
  leveldb_iter_get_error(it, &error);
  check(error, "scan");
  leveldb_iter_destroy(it);
  printf("%ld %lld\n", entries, nanoseconds_since(&start));
  leveldb_readoptions_destroy(read);
  leveldb_close(db);
  leveldb_options_destroy(options);
  return 0;
}

static int compact(const char *dir) {
  leveldb_options_t *options = leveldb_options_create();
  leveldb_filterpolicy_t *bloom = leveldb_filterpolicy_create_bloom(10);
  leveldb_options_set_filter_policy(options, bloom);
  char *error = NULL;
  leveldb_t *db = leveldb_open(options, dir, &error);
  check(error, "open");
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  printf("%lld\n", nanoseconds_since(&start));
  leveldb_close(db);
  leveldb_options_destroy(options);
  leveldb_filterpolicy_destroy(bloom);
  return 0;
}

static int absent_gets(const char *dir, long keys, long n) {
  leveldb_options_t *options = leveldb_options_create();
  char *error = NULL;
  leveldb_t *db = leveldb_open(options, dir, &error);
  check(error, "open");
  leveldb_readoptions_t *read = leveldb_readoptions_create();
  uint64_t state = 7;
  char key[26];
  size_t length;
  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (long i = 0; i < n; i++) {
    /* A written key's 24 bytes and one more: never written, between written keys. */
    snprintf(key, sizeof key, "key%021llux", (unsigned long long)(next_random(&state) % (uint64_t)(keys * 4)));
    char *value = leveldb_get(db, read, key, 25, &length, &error);
    check(error, "get");
    if (value != NULL) {
      fprintf(stderr, "scan_db: an absent key was found\n");
      return 1;
    }
  }
  printf("%ld %lld\n", n, nanoseconds_since(&start));
  leveldb_readoptions_destroy(read);
  leveldb_close(db);
  leveldb_options_destroy(options);
  return 0;
}

int main(int argc, char **argv) {
  if ((argc == 4 || (argc == 5 && strcmp(argv[4], "plain") == 0)) &&
      strcmp(argv[1], "build") == 0)
    return build(argv[2], atol(argv[3]), argc == 5);
  if (argc == 3 && strcmp(argv[1], "scan") == 0) return scan(argv[2]);
  if (argc == 3 && strcmp(argv[1], "compact") == 0) return compact(argv[2]);
  if (argc == 5 && strcmp(argv[1], "gets") == 0)
    return absent_gets(argv[2], atol(argv[3]), atol(argv[4]));
  fprintf(stderr, "usage: scan_db build DIR KEYS [plain] | scan_db scan DIR | scan_db compact DIR"
                  " | scan_db gets DIR KEYS N\n");
  return 2;
}
