/* Reads a database that rusty-leveldb wrote through leveldb-bloom's policy with the
 * real LevelDB and LevelDB's own bloom policy (this program links only -lleveldb).
 *
 * Usage: rusty_db_reader DB_DIR KEY_SPACE
 * Key i is its number in 6 digits followed by i % 7 letters 'k'; its value is
 * "value <i> " repeated 1 + i % 4 times. Even keys must be found with their values,
 * odd keys must be absent, each a check. Prints "found F of N, absent A of M", and
 * reports and exits as check.h says. */
#include <leveldb/c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static void make_key(char* key, size_t size, int i) {
  int n = snprintf(key, size, "%06d", i), j;
  for (j = 0; j < i % 7; j++) key[n + j] = 'k';
  key[n + j] = '\0';
}

static int value_matches(const char* value, size_t length, int i) {
  char expected[256], unit[32];
  int j;
  expected[0] = '\0';
  snprintf(unit, sizeof unit, "value %d ", i);
  for (j = 0; j < 1 + i % 4; j++) strcat(expected, unit);
  return length == strlen(expected) && memcmp(value, expected, length) == 0;
}

int main(int argc, char** argv) {
  char* err = NULL;
  char key[32];
  int key_space, i, found = 0, absent = 0;
  leveldb_options_t* options;
  leveldb_filterpolicy_t* policy;
  leveldb_readoptions_t* read_options;
  leveldb_t* db;

  if (argc != 3) {
    fprintf(stderr, "usage: %s DB_DIR KEY_SPACE\n", argv[0]);
    return 2;
  }
  key_space = atoi(argv[2]);
  options = leveldb_options_create();
  policy = leveldb_filterpolicy_create_bloom(10);
  leveldb_options_set_filter_policy(options, policy);
  db = leveldb_open(options, argv[1], &err);
  if (err != NULL) {
    fprintf(stderr, "open: %s\n", err);
    return 1;
  }
  read_options = leveldb_readoptions_create();
  for (i = 0; i < key_space; i++) {
    size_t length = 0;
    char* value;
    make_key(key, sizeof key, i);
    value = leveldb_get(db, read_options, key, strlen(key), &length, &err);
    if (err != NULL) {
      fprintf(stderr, "get: %s\n", err);
      return 1;
    }
    if (i % 2 == 0) {
      found += CHECK_THAT(value != NULL && value_matches(value, length, i), "an even key found with its value");
    } else {
      absent += CHECK_THAT(value == NULL, "an odd key absent");
    }
    leveldb_free(value);
  }
  printf("found %d of %d, absent %d of %d\n", found, (key_space + 1) / 2, absent, key_space / 2);

  leveldb_readoptions_destroy(read_options);
  leveldb_close(db);
  leveldb_options_destroy(options);
  leveldb_filterpolicy_destroy(policy);
  return check_report("rusty_db_reader");
}
