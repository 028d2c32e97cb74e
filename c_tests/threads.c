/* One policy shared by 8 threads that build and query filters at the same time must
 * give exactly the single-threaded results: every filter byte for byte, every answer
 * the same. Each thread also creates and destroys a policy of its own every round,
 * so the handle registry changes while the shared handle is looked up. All of it
 * runs twice: with the main policy shared, then with the legacy one
 * (leveldb_bloom_legacy_policy_create), the private policies alternating between the
 * two kinds.
 *
 * Usage: threads [rounds [--race-control]]   (fewer rounds under a race detector).
 * Prints how many results were compared; each thread's differences are one check
 * (0 differ: passed), reported as check.h says. With
 * --race-control the threads also increment one plain counter without a lock: a
 * deliberate data race that a race detector must report, proving it is watching. */
#include <leveldb_bloom.h>

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define THREADS 8
#define SETS 48
#define QUERIES 64
#define MAX_KEY 24

struct key_set {
  size_t count;
  char** keys;
  size_t* lengths;
  char* filter; /* the single-threaded result */
  size_t filter_length;
  uint8_t answers[QUERIES];
};

static struct key_set sets[SETS];
static char queries[QUERIES][MAX_KEY];
static size_t query_lengths[QUERIES];
static leveldb_filterpolicy_t* shared_policy;
static int rounds = 20;
static int race_control;
static long racy_counter;

static uint64_t next_random(uint64_t* state) {
  *state = *state * 6364136223846793005u + 1442695040888963407u;
  return *state >> 33;
}

static void fill_key(uint64_t* state, char* key, size_t* length) {
  size_t i;
  *length = next_random(state) % MAX_KEY;
  for (i = 0; i < *length; i++) key[i] = (char)next_random(state);
}

static void make_sets(void) {
  uint64_t state = 42;
  size_t s, i;
  for (s = 0; s < SETS; s++) {
    struct key_set* set = &sets[s];
    set->count = s * s + (s % 3); /* 0 to ~2200 keys */
    set->keys = calloc(set->count + 1, sizeof *set->keys);
    set->lengths = calloc(set->count + 1, sizeof *set->lengths);
    if (set->keys == NULL || set->lengths == NULL) exit(3);
    for (i = 0; i < set->count; i++) {
      set->keys[i] = malloc(MAX_KEY);
      if (set->keys[i] == NULL) exit(3);
      fill_key(&state, set->keys[i], &set->lengths[i]);
    }
  }
  for (i = 0; i < QUERIES; i++) fill_key(&state, queries[i], &query_lengths[i]);
}

static char* build(const struct key_set* set, size_t* length) {
  return leveldb_filterpolicy_create_filter(shared_policy, (const char* const*)set->keys, set->lengths,
                                            (int)set->count, length);
}

static void single_threaded_results(void) {
  size_t s, q;
  for (s = 0; s < SETS; s++) {
    struct key_set* set = &sets[s];
    set->filter = build(set, &set->filter_length);
    if (set->filter == NULL) exit(3);
    for (q = 0; q < QUERIES; q++)
      set->answers[q] = leveldb_filterpolicy_key_may_match(shared_policy, queries[q], query_lengths[q], set->filter,
                                                           set->filter_length);
  }
}

/* Compares one freshly built filter, a non-allocating write, and all answers with
   the single-threaded results; returns the number of differences. */
static long check_set(const struct key_set* set, long* compared) {
  long wrong = 0;
  size_t length, q, k;
  char* filter = build(set, &length);
  char* written = malloc(set->filter_length);
  if (filter == NULL || written == NULL) return 1;
  wrong += length != set->filter_length || memcmp(filter, set->filter, length) != 0;
  wrong += leveldb_bloom_write_filter(shared_policy, (const char* const*)set->keys, set->lengths, set->count, written,
                                      set->filter_length) != set->filter_length ||
           memcmp(written, set->filter, set->filter_length) != 0;
  for (q = 0; q < QUERIES; q++)
    wrong += leveldb_filterpolicy_key_may_match(shared_policy, queries[q], query_lengths[q], filter, length) !=
             set->answers[q];
  for (k = 0; k < set->count; k++)
    wrong += leveldb_filterpolicy_key_may_match(shared_policy, set->keys[k], set->lengths[k], filter, length) != 1;
  *compared += 2 + QUERIES + (long)set->count;
  free(written);
  free(filter);
  return wrong;
}

struct worker {
  pthread_t thread;
  int index;
  long wrong;
  long compared;
};

static void* work(void* argument) {
  struct worker* self = argument;
  int round;
  size_t s;
  for (round = 0; round < rounds; round++) {
    /* A private policy, alive while the shared one is in use. */
    const int legacy = round % 2;
    leveldb_filterpolicy_t* own = legacy ? leveldb_bloom_legacy_policy_create(self->index + round)
                                         : leveldb_bloom_policy_create(self->index + round);
    const char* name = legacy ? "leveldb.BuiltinBloomFilter" : "leveldb.BuiltinBloomFilter2";
    if (own == NULL || strcmp(leveldb_filterpolicy_name(own), name) != 0) self->wrong++;
    for (s = 0; s < SETS; s++) self->wrong += check_set(&sets[(s + (size_t)self->index * 5) % SETS], &self->compared);
    leveldb_bloom_policy_destroy(own);
    if (race_control) racy_counter++;
  }
  return NULL;
}

/* Runs the threads with `policy` shared; checks each thread's results and adds to
   the counts. */
static void run_threads(leveldb_filterpolicy_t* policy, long* wrong, long* compared) {
  struct worker workers[THREADS];
  int i;
  size_t s;
  if (policy == NULL) exit(3);
  shared_policy = policy;
  single_threaded_results();
  for (i = 0; i < THREADS; i++) {
    workers[i].index = i;
    workers[i].wrong = workers[i].compared = 0;
    if (pthread_create(&workers[i].thread, NULL, work, &workers[i]) != 0) exit(3);
  }
  for (i = 0; i < THREADS; i++) {
    pthread_join(workers[i].thread, NULL);
    CHECK_THAT(workers[i].wrong == 0, "a thread's results differ from the single-threaded ones");
    *wrong += workers[i].wrong;
    *compared += workers[i].compared;
  }
  for (s = 0; s < SETS; s++) free(sets[s].filter);
  leveldb_bloom_policy_destroy(policy);
}

int main(int argc, char** argv) {
  long wrong = 0, compared = 0;
  size_t s;
  if (argc > 1) rounds = atoi(argv[1]);
  race_control = argc > 2 && strcmp(argv[2], "--race-control") == 0;
  make_sets();
  run_threads(leveldb_bloom_policy_create(10), &wrong, &compared);
  run_threads(leveldb_bloom_legacy_policy_create(10), &wrong, &compared);

  for (s = 0; s < SETS; s++) {
    size_t k;
    for (k = 0; k < sets[s].count; k++) free(sets[s].keys[k]);
    free(sets[s].keys);
    free(sets[s].lengths);
  }
  CHECK(compared > 0);
  printf("%d threads x %d rounds, main and legacy policy: %ld results compared with the single-threaded ones, %ld differ\n", THREADS, rounds,
         compared, wrong);
  return check_report("threads");
}
