/* LevelDB 1.23 with libleveldb_bloom's legacy policy (leveldb_bloom_legacy_policy_create,
 * "leveldb.BuiltinBloomFilter"), meeting databases of goleveldb (tests/goleveldb).
 *
 * Usage:
 *   legacy_db write DIR KEYS          create DIR, put every key (value "v" + key), compact
 *   legacy_db read  DIR KEYS ABSENT   get every key of KEYS (checking its value) and
 *                                     every key of ABSENT (which must be absent)
 * KEYS and ABSENT are files of keys, each a 4-byte little-endian length and its bytes
 * (the goleveldb tool's format). write prints "wrote N keys", read "found N of M, absent
 * A of B"; each put and each read is a check, reported as check.h says. Run it with
 * c_tests/count_filter_calls.cc preloaded to see the policy's callbacks counted. */
#include <leveldb/c.h>
#include <leveldb_bloom.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

struct keys {
  size_t count;
  char** data;
  size_t* lengths;
  char* file;
};

static void die(const char* what, const char* detail) {
  fprintf(stderr, "legacy_db: %s: %s\n", what, detail != NULL ? detail : "");
  exit(1);
}

static struct keys read_keys(const char* path) {
  struct keys keys = {0, NULL, NULL, NULL};
  FILE* file = fopen(path, "rb");
  long size, at = 0;
  if (file == NULL) die("cannot open", path);
  if (fseek(file, 0, SEEK_END) != 0 || (size = ftell(file)) < 0 || fseek(file, 0, SEEK_SET) != 0)
    die("cannot size", path);
  keys.file = malloc((size_t)size + 1);
  if (keys.file == NULL || fread(keys.file, 1, (size_t)size, file) != (size_t)size) die("cannot read", path);
  fclose(file);
  /* At most one key per 4 bytes. */
  keys.data = malloc(sizeof *keys.data * ((size_t)size / 4 + 1));
  keys.lengths = malloc(sizeof *keys.lengths * ((size_t)size / 4 + 1));
  if (keys.data == NULL || keys.lengths == NULL) die("out of memory", path);
  while (at < size) {
    const unsigned char* p = (const unsigned char*)keys.file + at;
    uint32_t length;
    if (size - at < 4) die("truncated length", path);
    length = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    at += 4;
    if ((unsigned long)(size - at) < length) die("truncated key", path);
    keys.data[keys.count] = keys.file + at;
    keys.lengths[keys.count++] = length;
    at += (long)length;
  }
  return keys;
}

static void free_keys(struct keys* keys) {
  free(keys->data);
  free(keys->lengths);
  free(keys->file);
}

/* "v" + key, as the goleveldb tool writes; the caller frees it. */
static char* value_of(const char* key, size_t length) {
  char* value = malloc(length + 1);
  if (value == NULL) die("out of memory", NULL);
  value[0] = 'v';
  memcpy(value + 1, key, length);
  return value;
}

static void write_db(leveldb_t* db, const struct keys* keys) {
  leveldb_writeoptions_t* options = leveldb_writeoptions_create();
  char* err = NULL;
  size_t i;
  for (i = 0; i < keys->count; i++) {
    char* value = value_of(keys->data[i], keys->lengths[i]);
    leveldb_put(db, options, keys->data[i], keys->lengths[i], value, keys->lengths[i] + 1, &err);
    free(value);
    if (!CHECK(err == NULL)) fprintf(stderr, "put: %s\n", err);
    leveldb_free(err);
    err = NULL;
  }
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  leveldb_writeoptions_destroy(options);
  printf("wrote %lu keys\n", (unsigned long)keys->count);
}

/* Checks that every key of `present` is found with its value and none of `absent`. */
static void read_db(leveldb_t* db, const struct keys* present, const struct keys* absent) {
  leveldb_readoptions_t* options = leveldb_readoptions_create();
  size_t i, found = 0, missing = 0;
  char* err = NULL;
  for (i = 0; i < present->count + absent->count; i++) {
    const int is_present = i < present->count;
    const struct keys* keys = is_present ? present : absent;
    const size_t k = is_present ? i : i - present->count;
    size_t length = 0;
    char* got = leveldb_get(db, options, keys->data[k], keys->lengths[k], &length, &err);
    if (err != NULL) die("get", err);
    if (is_present) {
      char* expected = value_of(keys->data[k], keys->lengths[k]);
      found += CHECK_THAT(got != NULL && length == keys->lengths[k] + 1 && memcmp(got, expected, length) == 0,
                          "a written key found with its value");
      free(expected);
    } else {
      missing += CHECK_THAT(got == NULL, "an absent key not found");
    }
    leveldb_free(got);
  }
  leveldb_readoptions_destroy(options);
  printf("found %lu of %lu, absent %lu of %lu\n", (unsigned long)found, (unsigned long)present->count,
         (unsigned long)missing, (unsigned long)absent->count);
}

int main(int argc, char** argv) {
  const int writing = argc == 4 && strcmp(argv[1], "write") == 0;
  const int reading = argc == 5 && strcmp(argv[1], "read") == 0;
  leveldb_filterpolicy_t* policy;
  leveldb_options_t* options;
  leveldb_t* db;
  struct keys keys, absent = {0, NULL, NULL, NULL};
  char* err = NULL;

  if (!writing && !reading) {
    fprintf(stderr, "usage: %s write DIR KEYS | read DIR KEYS ABSENT\n", argv[0]);
    return 2;
  }
  policy = leveldb_bloom_legacy_policy_create(10);
  if (!CHECK(policy != NULL)) return check_report("legacy_db");
  CHECK(strcmp(leveldb_filterpolicy_name(policy), "leveldb.BuiltinBloomFilter") == 0);
  options = leveldb_options_create();
  leveldb_options_set_filter_policy(options, policy);
  leveldb_options_set_create_if_missing(options, writing);
  leveldb_options_set_error_if_exists(options, writing);
  /* Small memtables and tables: many tables, each with filters. */
  leveldb_options_set_write_buffer_size(options, 64 << 10);
  leveldb_options_set_max_file_size(options, 64 << 10);
  db = leveldb_open(options, argv[2], &err);
  if (err != NULL) die("open", err);

  keys = read_keys(argv[3]);
  if (writing) {
    write_db(db, &keys);
  } else {
    absent = read_keys(argv[4]);
    read_db(db, &keys, &absent);
    free_keys(&absent);
  }
  free_keys(&keys);
  leveldb_close(db);
  leveldb_options_destroy(options);
  leveldb_filterpolicy_destroy(policy);
  return check_report("legacy_db");
}
