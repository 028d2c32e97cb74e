/* What the C API harnesses (api_test.c, api_policies.c) share: LevelDB 1.23's
   filter for two keys, and the comparison of a filter with an expected one.
   Compiles as C99. */
#ifndef LEVELDB_BLOOM_API_FIXTURES_H
#define LEVELDB_BLOOM_API_FIXTURES_H

#include <leveldb_bloom.h>

#include <stdlib.h>
#include <string.h>

#include "check.h"

/* LevelDB's filter for {"hello", "world"} at 10 bits per key. */
static const unsigned char HELLO_WORLD_AT_10[9] = {0x11, 0x40, 0x00, 0x41, 0x44,
                                                   0x10, 0x40, 0x10, 0x06};

static const char* const HELLO_WORLD[2] = {"hello", "world"};
static const size_t HELLO_WORLD_LENGTHS[2] = {5, 5};

/* Whether `got` (length `got_length`) holds exactly the `want_length` bytes at `want`;
   dumps both on a mismatch. */
static inline int same_bytes(const char* label, const char* got, size_t got_length,
                             const unsigned char* want, size_t want_length) {
  int same = got != NULL && got_length == want_length &&
             memcmp(got, want, want_length) == 0;
  if (!same) {
    fprintf(stderr, "%s: wrong filter\n", label);
    check_dump("got", got, got != NULL ? got_length : 0);
    check_dump("want", want, want_length);
  }
  return same;
}

/* The filter create_filter returns for these arguments, checked to be exactly
   `want`, then freed. */
static inline int creates(const char* label, const leveldb_filterpolicy_t* policy,
                          const char* const* keys, const size_t* lengths, int num_keys,
                          const unsigned char* want, size_t want_length) {
  size_t length = 12345;
  char* filter = leveldb_filterpolicy_create_filter(policy, keys, lengths, num_keys, &length);
  int same = same_bytes(label, filter, length, want, want_length);
  free(filter);
  return same;
}

#endif
