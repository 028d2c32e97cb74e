/* LevelDB's own bloom filter properties (util/bloom_test.cc: EmptyFilter, Small,
   VaryingLengths), checked on filters built by libleveldb_bloom at 10 bits per key.
   Plain C99, linked to libleveldb_bloom only. Reports and exits as check.h says. */
#include <leveldb_bloom.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

/* Keys as bloom_test makes them: a 32-bit integer, little-endian. */
typedef struct {
  char bytes[4];
} int_key;

static int_key key_of(uint32_t i) {
  int_key key;
  key.bytes[0] = (char)(i & 0xff);
  key.bytes[1] = (char)((i >> 8) & 0xff);
  key.bytes[2] = (char)((i >> 16) & 0xff);
  key.bytes[3] = (char)(i >> 24);
  return key;
}

static int matches(const leveldb_filterpolicy_t* policy, const char* key, size_t length,
                   const char* filter, size_t filter_length) {
  return leveldb_filterpolicy_key_may_match(policy, key, length, filter, filter_length);
}

static int int_matches(const leveldb_filterpolicy_t* policy, uint32_t i, const char* filter,
                       size_t filter_length) {
  const int_key key = key_of(i);
  return matches(policy, key.bytes, sizeof key.bytes, filter, filter_length);
}

/* A filter built from no keys matches nothing. */
static void empty_filter(const leveldb_filterpolicy_t* policy) {
  size_t length = 0;
  char* filter = leveldb_filterpolicy_create_filter(policy, NULL, NULL, 0, &length);
  CHECK(!matches(policy, "hello", 5, filter, length));
  CHECK(!matches(policy, "world", 5, filter, length));
  free(filter);
}

static void small(const leveldb_filterpolicy_t* policy) {
  const char* const keys[2] = {"hello", "world"};
  const size_t lengths[2] = {5, 5};
  size_t length = 0;
  char* filter = leveldb_filterpolicy_create_filter(policy, keys, lengths, 2, &length);
  CHECK(matches(policy, "hello", 5, filter, length));
  CHECK(matches(policy, "world", 5, filter, length));
  CHECK(!matches(policy, "x", 1, filter, length));
  CHECK(!matches(policy, "foo", 3, filter, length));
  free(filter);
}

/* 1, 2, ..., 10, 20, ..., 100, 200, ..., 1000, 2000, ...: bloom_test's steps. */
static int next_length(int length) {
  if (length < 10) return length + 1;
  if (length < 100) return length + 10;
  if (length < 1000) return length + 100;
  return length + 1000;
}

/* The share of 10000 keys never added that the filter matches. */
static double false_positive_rate(const leveldb_filterpolicy_t* policy, const char* filter,
                                  size_t filter_length) {
  int i, matched = 0;
  for (i = 0; i < 10000; i++) matched += int_matches(policy, (uint32_t)(i + 1000000000), filter, filter_length);
  return matched / 10000.0;
}

/* For each key count up to 10000: the filter is at most n*10/8 + 40 bytes, every
   added key matches, and the false-positive rate is at most 2%; rates above 1.25%
   ("mediocre") occur for at most a fifth as many filters as good ones. */
static void varying_lengths(const leveldb_filterpolicy_t* policy) {
  static int_key storage[10000];
  static const char* keys[10000];
  static size_t lengths[10000];
  int length, i, good = 0, mediocre = 0;
  for (i = 0; i < 10000; i++) {
    storage[i] = key_of((uint32_t)i);
    keys[i] = storage[i].bytes;
    lengths[i] = sizeof storage[i].bytes;
  }
  for (length = 1; length <= 10000; length = next_length(length)) {
    size_t filter_length = 0;
    char* filter = leveldb_filterpolicy_create_filter(policy, keys, lengths, length, &filter_length);
    double rate;
    if (!CHECK(filter_length <= (size_t)(length * 10 / 8 + 40)))
      fprintf(stderr, "  %d keys: %zu bytes\n", length, filter_length);
    for (i = 0; i < length; i++) {
      if (!CHECK(int_matches(policy, (uint32_t)i, filter, filter_length)))
        fprintf(stderr, "  %d keys: key %d\n", length, i);
    }
    rate = false_positive_rate(policy, filter, filter_length);
    printf("false positives: %5.2f%% at %5d keys, %5zu bytes\n", rate * 100.0, length,
           filter_length);
    CHECK(rate <= 0.02);
    if (rate > 0.0125)
      mediocre++;
    else
      good++;
    free(filter);
  }
  printf("filters: %d good, %d mediocre\n", good, mediocre);
  CHECK(mediocre <= good / 5);
}

int main(void) {
  leveldb_filterpolicy_t* policy = leveldb_filterpolicy_create_bloom(10);
  if (!CHECK(policy != NULL)) return check_report("bloom_properties");
  empty_filter(policy);
  small(policy);
  varying_lengths(policy);
  leveldb_filterpolicy_destroy(policy);
  return check_report("bloom_properties");
}
