/* Filter statistics from 8 threads building and querying at once are exact: after
 * the threads are joined, every count equals what the threads did (the answers
 * known beforehand). Also the struct's size rules: only the fields that fit in
 * `size` are written, NULL and a struct with no field give -1.
 *
 * Usage: stats_threads   (prints the counts read; reports as c_tests/check.h says) */
#include <leveldb_bloom.h>

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define THREADS 8
#define ROUNDS 200
#define KEYS 100
#define QUERIES 300

static char keys[KEYS + QUERIES][16];
static const char* key_pointers[KEYS + QUERIES];
static size_t key_lengths[KEYS + QUERIES];
static leveldb_filterpolicy_t* shared;
static size_t filter_length;
static uint64_t absent_per_pass; /* of the QUERIES keys, how many the filter rejects */

static void* work(void* arg) {
  int round, i;
  uint8_t results[QUERIES];
  long* wrong = (long*)arg;
  for (round = 0; round < ROUNDS; round++) {
    size_t length = 0;
    uint64_t absent = 0;
    char* filter = leveldb_bloom_create_filter(shared, key_pointers, key_lengths, KEYS, &length);
    for (i = 0; i < QUERIES; i++)
      absent += leveldb_bloom_key_may_match(shared, key_pointers[KEYS + i], key_lengths[KEYS + i],
                                            filter, length) == 0;
    leveldb_bloom_key_may_match_batch(shared, key_pointers + KEYS, key_lengths + KEYS, QUERIES,
                                      filter, length, results);
    for (i = 0; i < QUERIES; i++) absent += results[i] == 0;
    *wrong += length != filter_length || absent != 2 * absent_per_pass;
    free(filter);
  }
  return NULL;
}

int main(void) {
  pthread_t threads[THREADS];
  long wrong[THREADS] = {0};
  leveldb_bloom_stats_t stats;
  size_t length = 0;
  char* filter;
  int i;
  for (i = 0; i < KEYS + QUERIES; i++) {
    key_lengths[i] = (size_t)snprintf(keys[i], sizeof keys[i], "%s%d", i < KEYS ? "k" : "q", i);
    key_pointers[i] = keys[i];
  }
  shared = leveldb_bloom_policy_create(10);
  filter = leveldb_bloom_create_filter(shared, key_pointers, key_lengths, KEYS, &length);
  filter_length = length;
  for (i = 0; i < QUERIES; i++)
    absent_per_pass += leveldb_bloom_key_may_match(shared, key_pointers[KEYS + i],
                                                   key_lengths[KEYS + i], filter, length) == 0;
  free(filter);

  /* Nothing above was counted: counting is off until enabled. */
  memset(&stats, 0xff, sizeof stats);
  stats.size = sizeof stats;
  CHECK(leveldb_bloom_stats(&stats) == 0);
  CHECK(stats.queries == 0 && stats.filters_built == 0);

  leveldb_bloom_stats_enable(1);
  for (i = 0; i < THREADS; i++) pthread_create(&threads[i], NULL, work, &wrong[i]);
  for (i = 0; i < THREADS; i++) pthread_join(threads[i], NULL);
  for (i = 0; i < THREADS; i++) CHECK(wrong[i] == 0);

  stats.size = sizeof stats;
  CHECK(leveldb_bloom_stats(&stats) == 0);
  printf("stats: %llu queries, %llu absent, %llu may match, %llu by rule; %llu filters built, "
         "%llu keys, %llu bytes\n",
         (unsigned long long)stats.queries, (unsigned long long)stats.absent,
         (unsigned long long)stats.may_match, (unsigned long long)stats.by_rule,
         (unsigned long long)stats.filters_built, (unsigned long long)stats.keys_added,
         (unsigned long long)stats.filter_bytes);
  CHECK(stats.size == sizeof stats);
  CHECK(stats.queries == (uint64_t)THREADS * ROUNDS * 2 * QUERIES);
  CHECK(stats.absent == (uint64_t)THREADS * ROUNDS * 2 * absent_per_pass);
  CHECK(stats.may_match == stats.queries - stats.absent);
  CHECK(stats.by_rule == 0);
  CHECK(stats.filters_built == (uint64_t)THREADS * ROUNDS);
  CHECK(stats.keys_added == (uint64_t)THREADS * ROUNDS * KEYS);
  CHECK(stats.filter_bytes == (uint64_t)THREADS * ROUNDS * filter_length);
  CHECK(stats.legacy_queries == 0 && stats.legacy_absent == 0 && stats.legacy_filters_built == 0);

  /* Answers by rule: a filter of 1 byte (absent) and one with k = 31 (may match). */
  CHECK(leveldb_bloom_key_may_match(shared, "k", 1, "\x00", 1) == 0);
  CHECK(leveldb_bloom_key_may_match(shared, "k", 1, "\x00\x1f", 2) == 1);
  stats.size = sizeof stats;
  leveldb_bloom_stats(&stats);
  CHECK(stats.by_rule == 2);

  /* An older, smaller struct: only the fields that fit are written. */
  {
    leveldb_bloom_stats_t small;
    memset(&small, 0xab, sizeof small);
    small.size = offsetof(leveldb_bloom_stats_t, absent);
    CHECK(leveldb_bloom_stats(&small) == 0);
    CHECK(small.queries == stats.queries);
    CHECK(small.absent == 0xababababababababull);
    small.size = sizeof(size_t);
    CHECK(leveldb_bloom_stats(&small) == -1);
    CHECK(leveldb_bloom_stats(NULL) == -1);
  }

  /* Off: nothing more is counted; reset: everything is 0. */
  leveldb_bloom_stats_enable(0);
  leveldb_bloom_key_may_match(shared, "k", 1, "\x00", 1);
  stats.size = sizeof stats;
  leveldb_bloom_stats(&stats);
  CHECK(stats.by_rule == 2);
  leveldb_bloom_stats_reset();
  leveldb_bloom_stats(&stats);
  CHECK(stats.queries == 0 && stats.absent == 0 && stats.filters_built == 0 &&
        stats.keys_added == 0 && stats.filter_bytes == 0);

  /* Queries of a legacy policy count as the legacy format's, those of the current
   * policy still as the current one's, once a legacy policy exists. */
  leveldb_bloom_stats_enable(1);
  {
    leveldb_filterpolicy_t* legacy = leveldb_bloom_legacy_policy_create(10);
    size_t length = 0, current_length = 0;
    char* filter = leveldb_bloom_create_filter(legacy, key_pointers, key_lengths, KEYS, &length);
    char* current = leveldb_bloom_create_filter(shared, key_pointers, key_lengths, KEYS,
                                                &current_length);
    for (i = 0; i < KEYS; i++) {
      CHECK(leveldb_bloom_key_may_match(legacy, key_pointers[i], key_lengths[i], filter, length));
      CHECK(leveldb_bloom_key_may_match(shared, key_pointers[i], key_lengths[i], current,
                                        current_length));
    }
    stats.size = sizeof stats;
    leveldb_bloom_stats(&stats);
    CHECK(stats.legacy_queries == KEYS && stats.legacy_absent == 0);
    CHECK(stats.queries == 2 * KEYS && stats.legacy_filters_built == 1);
    free(filter);
    free(current);
    leveldb_bloom_policy_destroy(legacy);
  }

  leveldb_bloom_policy_destroy(shared);
  return check_report("stats_threads");
}
