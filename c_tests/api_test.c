/* The C API harness: every exported function of libleveldb_bloom, and every bad
   input with the result leveldb_bloom.h documents for it (the policy objects as a
   program holds them, and the C++ header's creators: c_tests/api_policies.c).
   Plain C99, linked to libleveldb_bloom only (LevelDB is not in the process, which
   is checked). The expected bytes are those LevelDB 1.23 produces (the reference
   harness compares the same cases with the real library). Reports and exits as
   check.h says. */
#include <leveldb_bloom.h>

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_fixtures.h"
#include "check.h"

static const unsigned char MATCH_ALL[2] = {0x00, 0xff};
/* LevelDB's filter for no keys at 10 bits per key. */
static const unsigned char NO_KEYS_AT_10[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0x06};

/* A pointer this library never returned: the address of a static object. */
static int not_a_policy_object;
#define UNKNOWN_POLICY ((leveldb_filterpolicy_t*)&not_a_policy_object)

static void leveldb_is_not_loaded(void) {
  /* leveldb_open, if found, is this library's own (LEVELDB_BLOOM_DEFAULT_BITS). */
  void* open = dlsym(RTLD_DEFAULT, "leveldb_open");
  void* ours = dlsym(RTLD_DEFAULT, "leveldb_bloom_version");
  Dl_info open_info, our_info;
  CHECK(open == NULL || (dladdr(open, &open_info) != 0 && dladdr(ours, &our_info) != 0 &&
                         open_info.dli_fbase == our_info.dli_fbase));
  CHECK(dlsym(RTLD_DEFAULT, "leveldb_filterpolicy_create") == NULL);
  CHECK(leveldb_bloom_swap_status() == 0);
}

static void create_and_destroy(void) {
  leveldb_filterpolicy_t* bloom = leveldb_filterpolicy_create_bloom(10);
  leveldb_filterpolicy_t* own = leveldb_bloom_policy_create(10);
  CHECK(bloom != NULL);
  CHECK(own != NULL);
  CHECK(bloom != own);
  /* Negative bits_per_key (undefined in LevelDB) gives NULL. */
  CHECK(leveldb_filterpolicy_create_bloom(-1) == NULL);
  CHECK(leveldb_filterpolicy_create_bloom(INT_MIN) == NULL);
  CHECK(leveldb_bloom_policy_create(-1) == NULL);
  CHECK(leveldb_bloom_policy_create(INT_MIN) == NULL);
  /* Either destroy releases either kind (valgrind and LeakSanitizer see leaks). */
  leveldb_bloom_policy_destroy(bloom);
  leveldb_filterpolicy_destroy(own);
  /* NULL and pointers this library never returned are ignored. */
  leveldb_filterpolicy_destroy(NULL);
  leveldb_bloom_policy_destroy(NULL);
  not_a_policy_object = 42;
  leveldb_filterpolicy_destroy(UNKNOWN_POLICY);
  leveldb_bloom_policy_destroy(UNKNOWN_POLICY);
  CHECK(not_a_policy_object == 42);
}

static void name(void) {
  leveldb_filterpolicy_t* bloom = leveldb_filterpolicy_create_bloom(10);
  leveldb_filterpolicy_t* own = leveldb_bloom_policy_create(20);
  const char* bloom_name = leveldb_filterpolicy_name(bloom);
  CHECK(bloom_name != NULL && strcmp(bloom_name, "leveldb.BuiltinBloomFilter2") == 0);
  /* One static string: the same pointer for every policy. */
  CHECK(leveldb_filterpolicy_name(own) == bloom_name);
  CHECK(leveldb_filterpolicy_name(NULL) == NULL);
  CHECK(leveldb_filterpolicy_name(UNKNOWN_POLICY) == NULL);
  leveldb_filterpolicy_destroy(bloom);
  leveldb_filterpolicy_destroy(own);
}

/* The k byte LevelDB writes (bits_per_key * 0.69, clamped to 1..=30), seen in the
   filter for no keys: eight zero bytes, then k. */
static void probes_per_key(void) {
  static const struct {
    int bits_per_key;
    unsigned char k;
  } expected[] = {{0, 1}, {1, 1}, {2, 1}, {3, 2}, {10, 6}, {43, 29}, {44, 30}, {1000, 30}, {INT_MAX, 30}};
  size_t i;
  for (i = 0; i < sizeof expected / sizeof expected[0]; i++) {
    unsigned char want[9] = {0};
    leveldb_filterpolicy_t* policy = leveldb_bloom_policy_create(expected[i].bits_per_key);
    want[8] = expected[i].k;
    if (!CHECK(creates("no keys", policy, NULL, NULL, 0, want, sizeof want)))
      fprintf(stderr, "  at bits_per_key %d\n", expected[i].bits_per_key);
    leveldb_filterpolicy_destroy(policy);
  }
}

static void leveldb_examples(void) {
  leveldb_filterpolicy_t* policy = leveldb_filterpolicy_create_bloom(10);
  const char* const empty_keys[1] = {NULL};
  size_t length = 0;
  char* filter;
  CHECK(creates("hello world", policy, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2,
                HELLO_WORLD_AT_10, sizeof HELLO_WORLD_AT_10));
  /* No keys: the arrays may be NULL, or anything. */
  CHECK(creates("no keys", policy, NULL, NULL, 0, NO_KEYS_AT_10, sizeof NO_KEYS_AT_10));
  CHECK(creates("no keys", policy, empty_keys, HELLO_WORLD_LENGTHS, 0, NO_KEYS_AT_10,
                sizeof NO_KEYS_AT_10));

  /* LevelDB's bloom_test "Small". */
  filter = leveldb_filterpolicy_create_filter(policy, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, &length);
  CHECK(leveldb_filterpolicy_key_may_match(policy, "hello", 5, filter, length) == 1);
  CHECK(leveldb_filterpolicy_key_may_match(policy, "world", 5, filter, length) == 1);
  CHECK(leveldb_filterpolicy_key_may_match(policy, "x", 1, filter, length) == 0);
  CHECK(leveldb_filterpolicy_key_may_match(policy, "foo", 3, filter, length) == 0);
  free(filter);
  leveldb_filterpolicy_destroy(policy);
}

/* Every bad input of create_filter gives the match-all filter 00 FF (or NULL when
   there is nowhere to store the length). */
static void create_filter_bad_inputs(void) {
  leveldb_filterpolicy_t* policy = leveldb_filterpolicy_create_bloom(10);
  const char* const with_null_key[3] = {"hello", NULL, "world"};
  const size_t with_null_key_lengths[3] = {5, 3, 5};
  const int bad_counts[2] = {-1, INT_MIN};
  size_t i;

  CHECK(creates("NULL policy", NULL, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, MATCH_ALL, 2));
  CHECK(creates("unknown policy", UNKNOWN_POLICY, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2,
                MATCH_ALL, 2));
  CHECK(creates("NULL policy, no keys", NULL, NULL, NULL, 0, MATCH_ALL, 2));
  for (i = 0; i < 2; i++) {
    CHECK(creates("negative num_keys", policy, HELLO_WORLD, HELLO_WORLD_LENGTHS,
                  bad_counts[i], MATCH_ALL, 2));
    CHECK(creates("negative num_keys, NULL arrays", policy, NULL, NULL, bad_counts[i],
                  MATCH_ALL, 2));
  }
  CHECK(creates("NULL key_array", policy, NULL, HELLO_WORLD_LENGTHS, 2, MATCH_ALL, 2));
  CHECK(creates("NULL key_length_array", policy, HELLO_WORLD, NULL, 2, MATCH_ALL, 2));
  CHECK(creates("NULL arrays", policy, NULL, NULL, 1, MATCH_ALL, 2));
  CHECK(creates("NULL key of length 3", policy, with_null_key, with_null_key_lengths, 3,
                MATCH_ALL, 2));

  /* No place for the length: NULL, and nothing allocated (valgrind and
     LeakSanitizer would report it). */
  CHECK(leveldb_filterpolicy_create_filter(policy, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, NULL) ==
        NULL);
  CHECK(leveldb_filterpolicy_create_filter(NULL, NULL, NULL, -1, NULL) == NULL);
  leveldb_filterpolicy_destroy(policy);
}

/* A NULL key of length 0 is the empty key, in create_filter and in key_may_match. */
static void null_empty_key(void) {
  leveldb_filterpolicy_t* policy = leveldb_bloom_policy_create(10);
  const char* const null_keys[2] = {"a", NULL};
  const char* const empty_keys[2] = {"a", ""};
  const size_t lengths[2] = {1, 0};
  size_t with_null_length = 0, with_empty_length = 0, none_length = 0;
  char* with_null =
      leveldb_filterpolicy_create_filter(policy, null_keys, lengths, 2, &with_null_length);
  char* with_empty =
      leveldb_filterpolicy_create_filter(policy, empty_keys, lengths, 2, &with_empty_length);
  char* none = leveldb_filterpolicy_create_filter(policy, NULL, NULL, 0, &none_length);
  CHECK(same_bytes("NULL key of length 0", with_null, with_null_length,
                   (const unsigned char*)with_empty, with_empty_length));
  CHECK(leveldb_filterpolicy_key_may_match(policy, NULL, 0, with_null, with_null_length) == 1);
  CHECK(leveldb_filterpolicy_key_may_match(policy, "", 0, none, none_length) == 0);
  CHECK(leveldb_filterpolicy_key_may_match(policy, NULL, 0, none, none_length) == 0);
  free(with_null);
  free(with_empty);
  free(none);
  leveldb_filterpolicy_destroy(policy);
}

/* Filters too large to size or allocate degrade to the match-all filter. */
static void filter_too_large(void) {
  leveldb_filterpolicy_t* huge = leveldb_bloom_policy_create(INT_MAX);
  leveldb_filterpolicy_t* ten = leveldb_bloom_policy_create(10);
  /* 2^20 keys at INT_MAX bits each: 256 TiB, more than any address space. */
  const size_t many = (size_t)1 << 20;
  const char** keys = (const char**)malloc(many * sizeof *keys);
  size_t* lengths = (size_t*)malloc(many * sizeof *lengths);
  size_t i, length = 0;
  char* filter;
  CHECK(keys != NULL && lengths != NULL);
  for (i = 0; i < many; i++) {
    keys[i] = "key";
    lengths[i] = 3;
  }
  CHECK(leveldb_bloom_filter_length(huge, many) == (size_t)INT_MAX * many / 8 + 1);
  CHECK(creates("256 TiB", huge, keys, lengths, (int)many, MATCH_ALL, 2));
  /* Sizes that overflow 64 bits have no length at all. */
  CHECK(leveldb_bloom_filter_length(huge, SIZE_MAX) == 0);
  CHECK(leveldb_bloom_filter_length(ten, SIZE_MAX) == 0);
  CHECK(leveldb_bloom_filter_length(ten, SIZE_MAX / 8) == 0);

  /* The largest bits_per_key still builds a real filter for one key: 2^31 - 1 bits. */
  CHECK(leveldb_bloom_filter_length(huge, 1) == 268435457u);
  filter = leveldb_filterpolicy_create_filter(huge, keys, lengths, 1, &length);
  CHECK(filter != NULL && length == 268435457u && (unsigned char)filter[length - 1] == 30);
  CHECK(leveldb_filterpolicy_key_may_match(huge, "key", 3, filter, length) == 1);
  free(filter);
  free(keys);
  free(lengths);
  leveldb_filterpolicy_destroy(huge);
  leveldb_filterpolicy_destroy(ten);
}

/* key_may_match on any bytes: LevelDB's answers for short and reserved filters,
   and 1 ("may match") for every bad input. */
static void key_may_match(void) {
  static const unsigned char k_bytes[5] = {0, 30, 31, 0x80, 0xff};
  leveldb_filterpolicy_t* policy = leveldb_filterpolicy_create_bloom(10);
  leveldb_filterpolicy_t* other = leveldb_bloom_policy_create(33);
  const char* filter = (const char*)HELLO_WORLD_AT_10;
  const size_t length = sizeof HELLO_WORLD_AT_10;
  size_t i;

  /* Absent and present keys; the policy's own bits_per_key plays no part. */
  CHECK(leveldb_filterpolicy_key_may_match(policy, "x", 1, filter, length) == 0);
  CHECK(leveldb_filterpolicy_key_may_match(other, "x", 1, filter, length) == 0);
  CHECK(leveldb_filterpolicy_key_may_match(other, "hello", 5, filter, length) == 1);

  /* Bad inputs: 1, even for a key that is certainly absent. */
  CHECK(leveldb_filterpolicy_key_may_match(NULL, "x", 1, filter, length) == 1);
  CHECK(leveldb_filterpolicy_key_may_match(UNKNOWN_POLICY, "x", 1, filter, length) == 1);
  CHECK(leveldb_filterpolicy_key_may_match(policy, NULL, 1, filter, length) == 1);
  CHECK(leveldb_filterpolicy_key_may_match(policy, NULL, 3, filter, length) == 1);
  CHECK(leveldb_filterpolicy_key_may_match(policy, "x", 1, NULL, length) == 1);
  CHECK(leveldb_filterpolicy_key_may_match(policy, "x", 1, NULL, 1) == 1);
  /* A NULL filter of length 0 is the empty filter: shorter than 2 bytes gives 0. */
  CHECK(leveldb_filterpolicy_key_may_match(policy, "x", 1, NULL, 0) == 0);
  CHECK(leveldb_filterpolicy_key_may_match(policy, NULL, 0, NULL, 0) == 0);

  for (i = 0; i < sizeof k_bytes; i++) {
    const unsigned char k = k_bytes[i];
    const char one[1] = {(char)k};
    const char zeros[2] = {0, (char)k};
    const char ones[2] = {(char)0xff, (char)k};
    const char long_zeros[17] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (char)k};
    /* A zero k probes nothing; a k above 30 is reserved and matches everything. */
    const uint8_t reserved_or_zero = (k == 0 || k > 30) ? 1 : 0;
    CHECK(leveldb_filterpolicy_key_may_match(policy, "x", 1, one, 0) == 0);
    CHECK(leveldb_filterpolicy_key_may_match(policy, "x", 1, one, 1) == 0);
    CHECK(leveldb_filterpolicy_key_may_match(policy, NULL, 0, one, 1) == 0);
    CHECK(leveldb_filterpolicy_key_may_match(policy, "x", 1, zeros, 2) == reserved_or_zero);
    CHECK(leveldb_filterpolicy_key_may_match(policy, "", 0, zeros, 2) == reserved_or_zero);
    CHECK(leveldb_filterpolicy_key_may_match(policy, "x", 1, long_zeros, 17) ==
          reserved_or_zero);
    CHECK(leveldb_filterpolicy_key_may_match(policy, "x", 1, ones, 2) == 1);
  }
  leveldb_filterpolicy_destroy(policy);
  leveldb_filterpolicy_destroy(other);
}

/* Whether write_filter, given these arguments and a buffer of `out_length` bytes,
   returns 2 and writes the match-all filter, leaving the rest of the buffer as it
   was. */
static int writes_match_all(const leveldb_filterpolicy_t* policy, const char* const* keys,
                            const size_t* lengths, size_t num_keys, char* buffer,
                            size_t out_length) {
  size_t i, untouched = 0;
  memset(buffer, 0xaa, out_length);
  if (leveldb_bloom_write_filter(policy, keys, lengths, num_keys, buffer, out_length) != 2 ||
      !same_bytes("bad input", buffer, 2, MATCH_ALL, 2))
    return 0;
  for (i = 2; i < out_length; i++) untouched += (unsigned char)buffer[i] == 0xaa;
  return untouched == out_length - 2;
}

/* n keys "key0", "key1", ... in one buffer. */
struct key_set {
  char text[2000][8];
  const char* keys[2000];
  size_t lengths[2000];
};

static void fill_keys(struct key_set* set, int n) {
  int i;
  for (i = 0; i < n; i++) {
    set->lengths[i] = (size_t)sprintf(set->text[i], "key%d", i);
    set->keys[i] = set->text[i];
  }
}

/* leveldb_bloom_filter_length and leveldb_bloom_write_filter agree with
   create_filter, and every bad input writes 00 FF (returning 2), or nothing
   (returning 0) when there is no room. */
static void write_filter(void) {
  static struct key_set set;
  static const int bits_per_key[4] = {0, 1, 10, 64};
  static const int counts[7] = {0, 1, 2, 7, 100, 1000, 2000};
  char buffer[20000];
  const char* const with_null_key[2] = {"hello", NULL};
  size_t b, c, length;

  fill_keys(&set, 2000);
  CHECK(leveldb_bloom_filter_length(NULL, 0) == 0);
  CHECK(leveldb_bloom_filter_length(UNKNOWN_POLICY, 1) == 0);
  for (b = 0; b < 4; b++) {
    leveldb_filterpolicy_t* policy = leveldb_filterpolicy_create_bloom(bits_per_key[b]);
    for (c = 0; c < 7; c++) {
      const int n = counts[c];
      size_t created_length = 0;
      char* created =
          leveldb_filterpolicy_create_filter(policy, set.keys, set.lengths, n, &created_length);
      length = leveldb_bloom_filter_length(policy, (size_t)n);
      CHECK(length == created_length && length <= sizeof buffer);
      /* Whatever the buffer held before, the filter is the same. */
      memset(buffer, 0xaa, sizeof buffer);
      CHECK(leveldb_bloom_write_filter(policy, set.keys, set.lengths, (size_t)n, buffer, length) ==
            length);
      CHECK(same_bytes("write_filter", buffer, length, (const unsigned char*)created,
                       created_length));
      /* A wrong length is a bad input. */
      CHECK(writes_match_all(policy, set.keys, set.lengths, (size_t)n, buffer, length - 1));
      CHECK(writes_match_all(policy, set.keys, set.lengths, (size_t)n, buffer, length + 1));
      free(created);
    }
    leveldb_filterpolicy_destroy(policy);
  }

  {
    leveldb_filterpolicy_t* policy = leveldb_bloom_policy_create(10);
    const size_t two = leveldb_bloom_filter_length(policy, 2);
    const char* const empty_key[1] = {NULL};
    const size_t zero_length[1] = {0};
    size_t empty_length = 0;
    char* empty;

    CHECK(two == sizeof HELLO_WORLD_AT_10);
    CHECK(leveldb_bloom_write_filter(policy, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, buffer, two) ==
          two);
    CHECK(same_bytes("hello world", buffer, two, HELLO_WORLD_AT_10, two));
    CHECK(leveldb_bloom_write_filter(policy, NULL, NULL, 0, buffer, two) == two);
    CHECK(same_bytes("no keys", buffer, two, NO_KEYS_AT_10, two));

    /* Bad inputs, each with the right length: 00 FF, returning 2. */
    CHECK(writes_match_all(NULL, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, buffer, two));
    CHECK(writes_match_all(UNKNOWN_POLICY, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, buffer, two));
    CHECK(writes_match_all(policy, NULL, HELLO_WORLD_LENGTHS, 2, buffer, two));
    CHECK(writes_match_all(policy, HELLO_WORLD, NULL, 2, buffer, two));
    CHECK(writes_match_all(policy, NULL, NULL, 1, buffer, two));
    CHECK(writes_match_all(policy, with_null_key, HELLO_WORLD_LENGTHS, 2, buffer, two));

    /* No room for even 00 FF: nothing written, 0 returned. */
    CHECK(leveldb_bloom_write_filter(policy, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, NULL, two) == 0);
    CHECK(leveldb_bloom_write_filter(policy, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, NULL, 0) == 0);
    for (length = 0; length < 2; length++) {
      memset(buffer, 0xaa, sizeof buffer);
      CHECK(leveldb_bloom_write_filter(policy, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, buffer,
                                       length) == 0);
      CHECK(leveldb_bloom_write_filter(NULL, NULL, NULL, 2, buffer, length) == 0);
      CHECK((unsigned char)buffer[0] == 0xaa && (unsigned char)buffer[1] == 0xaa);
    }

    /* A NULL key of length 0 is the empty key here too. */
    empty = leveldb_filterpolicy_create_filter(policy, empty_key, zero_length, 1, &empty_length);
    length = leveldb_bloom_filter_length(policy, 1);
    CHECK(leveldb_bloom_write_filter(policy, empty_key, zero_length, 1, buffer, length) == length);
    CHECK(same_bytes("NULL key of length 0", buffer, length, (const unsigned char*)empty,
                     empty_length));
    CHECK(leveldb_filterpolicy_key_may_match(policy, "", 0, buffer, length) == 1);
    free(empty);
    leveldb_filterpolicy_destroy(policy);
  }
}

int main(void) {
  leveldb_is_not_loaded();
  create_and_destroy();
  name();
  probes_per_key();
  leveldb_examples();
  create_filter_bad_inputs();
  null_empty_key();
  filter_too_large();
  key_may_match();
  write_filter();
  return check_report("api_test");
}
