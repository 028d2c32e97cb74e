/* The demo's key set, shared by demo.c (swapped) and demo_stock_reader.c (stock):
   DEMO_KEYS user records, keyed "user:00000000" upwards by even numbers, so that the
   odd numbers between them are keys that are never written. */
#ifndef DEMO_KEYS_H
#define DEMO_KEYS_H

#include <leveldb/c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEMO_KEYS 200000
#define DEMO_BITS_PER_KEY 10

enum { DEMO_KEY_MAX = 32, DEMO_VALUE_MAX = 128 };

/* Key i of the written set, or of the absent set. */
static size_t demo_key(unsigned long i, int absent, char* out) {
  return (size_t)sprintf(out, "user:%08lu", 2 * i + (absent ? 1 : 0));
}

static size_t demo_value(unsigned long i, char* out) {
  return (size_t)sprintf(out, "{\"id\":%lu,\"name\":\"user-%lu\",\"visits\":%lu,\"plan\":\"%s\"}",
                         2 * i, 2 * i, (i * 7919) % 1000, i % 3 == 0 ? "pro" : "free");
}

/* Exits with LevelDB's message if `error` is set. */
static void demo_check(char* error, const char* what) {
  if (error != NULL) {
    fprintf(stderr, "%s: %s\n", what, error);
    exit(1);
  }
}

/* Looks every written key up (checking its value) and every absent one. Returns the
   number of written keys found with the right value; *absent_found counts absent keys
   that were (wrongly) found. */
static unsigned long demo_read_back(leveldb_t* db, unsigned long* absent_found) {
  char key[DEMO_KEY_MAX], value[DEMO_VALUE_MAX], *error = NULL;
  unsigned long i, found = 0;
  leveldb_readoptions_t* options = leveldb_readoptions_create();
  *absent_found = 0;
  for (i = 0; i < DEMO_KEYS; i++) {
    size_t key_length = demo_key(i, 0, key), value_length = demo_value(i, value), got_length;
    char* got = leveldb_get(db, options, key, key_length, &got_length, &error);
    demo_check(error, "get");
    found += got != NULL && got_length == value_length && memcmp(got, value, got_length) == 0;
    leveldb_free(got);
    key_length = demo_key(i, 1, key);
    got = leveldb_get(db, options, key, key_length, &got_length, &error);
    demo_check(error, "get");
    *absent_found += got != NULL;
    leveldb_free(got);
  }
  leveldb_readoptions_destroy(options);
  return found;
}

#endif /* DEMO_KEYS_H */
