/* What libleveldb_bloom's C API does when its allocations fail. Run with
 * LD_PRELOAD=libfailmalloc.so (c_tests/failmalloc.c), which fails only allocations
 * requested by libleveldb_bloom itself.
 *
 * Documented outcomes checked here: create_filter gives the real filter, else the
 * match-all filter 00 FF, else NULL with length 0; never anything else, so never a
 * false negative. write_filter and key_may_match never allocate, so they answer
 * exactly as without failures. Policy creation gives NULL. Nothing leaks: the
 * process's live allocation count is the same after each call and free().
 * Reports and exits as check.h says. */
#include "check.h"
#include "failmalloc.h"

#include <leveldb_bloom.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 5000
#define QUERIES 200

static struct failmalloc shim;
static const void* library; /* an address inside libleveldb_bloom */
static char context[64];

/* Names the case in failure reports. */
static void at(int bits_per_key, int num_keys) {
  snprintf(context, sizeof context, "bits_per_key %d, %d keys", bits_per_key, num_keys);
  check_context(context);
}

static char key_bytes[MAX_KEYS + QUERIES][12];
static const char* keys[MAX_KEYS + QUERIES];
static size_t lengths[MAX_KEYS + QUERIES];

static void make_keys(void) {
  int i;
  for (i = 0; i < MAX_KEYS + QUERIES; i++) {
    lengths[i] = (size_t)snprintf(key_bytes[i], sizeof key_bytes[i], "key%d", i * 7919);
    keys[i] = key_bytes[i];
  }
}

/* create_filter for the first `n` keys under the armed failure, checked against
   the filter made without failures. */
static void check_create(const leveldb_filterpolicy_t* policy, int bits_per_key, int n, const char* normal,
                         size_t normal_length, size_t min_size, long skip) {
  const long live = shim.live(), failures = shim.failures();
  size_t length = 777, i;
  char* filter;
  at(bits_per_key, n);
  shim.arm(library, min_size, skip, 1, 0);
  filter = leveldb_filterpolicy_create_filter(policy, keys, lengths, n, &length);
  shim.disarm();
  if (filter == NULL) {
    CHECK_THAT(length == 0, "NULL filter with a non-zero length");
    CHECK_THAT(shim.failures() > failures, "NULL filter without a failed allocation");
  } else if (length == 2 && memcmp(filter, "\x00\xff", 2) == 0) {
    CHECK_THAT(shim.failures() > failures, "match-all filter without a failed allocation");
  } else {
    CHECK_THAT(length == normal_length && memcmp(filter, normal, length) == 0,
           "a filter that is neither the real one, nor 00 ff, nor NULL");
  }
  for (i = 0; filter != NULL && i < (size_t)n; i++)
    CHECK_THAT(leveldb_filterpolicy_key_may_match(policy, keys[i], lengths[i], filter, length) == 1,
           "FALSE NEGATIVE on a filter built under allocation failure");
  free(filter);
  CHECK_THAT(shim.live() == live, "create_filter leaked under allocation failure");

  /* The exact outcome each kind of failure is documented to give. */
  if (skip == 0 && min_size == 0) CHECK_THAT(filter == NULL, "all allocations failed but not NULL");
  if (skip == 0 && min_size == 3)
    CHECK_THAT(filter != NULL && length == 2, "the filter's allocation failed but no 00 ff");
}

/* write_filter and key_may_match with every allocation of the library failing. */
static void check_non_allocating(const leveldb_filterpolicy_t* policy, int bits_per_key, int n, const char* normal,
                                 size_t normal_length) {
  uint8_t answers[QUERIES];
  char* out = malloc(normal_length);
  const long failures = shim.failures();
  size_t written, q;
  if (out == NULL) exit(3);
  at(bits_per_key, n);
  for (q = 0; q < QUERIES; q++)
    answers[q] = leveldb_filterpolicy_key_may_match(policy, keys[MAX_KEYS + q], lengths[MAX_KEYS + q], normal,
                                                    normal_length);
  shim.arm(library, 0, 0, 1, 0);
  written = leveldb_bloom_write_filter(policy, keys, lengths, (size_t)n, out, normal_length);
  for (q = 0; q < QUERIES; q++)
    CHECK_THAT(leveldb_filterpolicy_key_may_match(policy, keys[MAX_KEYS + q], lengths[MAX_KEYS + q], normal,
                                              normal_length) == answers[q],
           "key_may_match changed its answer under allocation failure");
  CHECK_THAT(strcmp(leveldb_filterpolicy_name(policy), "leveldb.BuiltinBloomFilter2") == 0, "name under failure");
  shim.disarm();
  CHECK_THAT(written == normal_length && memcmp(out, normal, normal_length) == 0,
         "write_filter differs under allocation failure");
  CHECK_THAT(shim.failures() == failures, "write_filter or key_may_match allocated");
  free(out);
}

static void check_policy_creation(void) {
  long live;
  leveldb_filterpolicy_t *own, *bloom;
  at(10, 0);
  /* Once first: looking for LevelDB (dlsym) makes glibc keep a dlerror buffer. */
  leveldb_filterpolicy_destroy(leveldb_filterpolicy_create_bloom(10));
  live = shim.live();
  shim.arm(library, 0, 0, 1, 0);
  own = leveldb_bloom_policy_create(10);
  bloom = leveldb_filterpolicy_create_bloom(10);
  shim.disarm();
  CHECK_THAT(own == NULL && bloom == NULL, "a policy was created although its allocation failed");
  CHECK_THAT(shim.live() == live, "policy creation leaked under allocation failure");
}

int main(void) {
  static const int bits[] = {10, 10, 10, 20, 0, 1000};
  static const int counts[] = {0, 1, 100, MAX_KEYS, 50, 3};
  static const size_t min_sizes[] = {0, 3, 1024};
  size_t c, m;
  long skip;
  if (!failmalloc_load(&shim)) {
    fprintf(stderr, "run me with LD_PRELOAD=libfailmalloc.so\n");
    return 2;
  }
  library = dlsym(RTLD_DEFAULT, "leveldb_filterpolicy_create_filter");
  if (!shim.arm(library, 0, 0, 1, 0)) return 2;
  shim.disarm();
  make_keys();

  for (c = 0; c < sizeof bits / sizeof bits[0]; c++) {
    leveldb_filterpolicy_t* policy = leveldb_bloom_policy_create(bits[c]);
    size_t normal_length = 0;
    char* normal = leveldb_filterpolicy_create_filter(policy, keys, lengths, counts[c], &normal_length);
    if (policy == NULL || normal == NULL) return 3;
    for (m = 0; m < sizeof min_sizes / sizeof min_sizes[0]; m++)
      for (skip = 0; skip < 3; skip++)
        check_create(policy, bits[c], counts[c], normal, normal_length, min_sizes[m], skip);
    check_non_allocating(policy, bits[c], counts[c], normal, normal_length);
    free(normal);
    leveldb_bloom_policy_destroy(policy);
  }
  check_policy_creation();

  CHECK(shim.failures() > 0);
  printf("%ld allocations made to fail\n", shim.failures());
  return check_report("alloc_failure");
}
