/* The C API's policy objects as a program holds them: under both names of each
   function, as many as it makes (live at once or not), and the C++ header's
   creators (leveldb_bloom_cxx_policy_create), whose writer a caller may misuse.
   Plain C99, linked to libleveldb_bloom only. Reports and exits as check.h says;
   c_tests/api_test.c has every other exported function. */
#include <leveldb_bloom.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_fixtures.h"
#include "check.h"

/* No limit on policies: more than 65,536 create/destroy cycles (what the registry
   once held in all) and then as many policies live at once, none NULL; an unknown
   pointer is still told apart afterwards. */
#define MANY_POLICIES 70000
static void many_policies(void) {
  static leveldb_filterpolicy_t* live[MANY_POLICIES];
  size_t i, failed = 0;
  unsigned char unknown[16] = {0};
  for (i = 0; i < MANY_POLICIES; i++) {
    leveldb_filterpolicy_t* policy =
        i % 2 == 0 ? leveldb_bloom_policy_create(10) : leveldb_filterpolicy_create_bloom(10);
    failed += policy == NULL;
    leveldb_filterpolicy_destroy(policy);
  }
  CHECK(failed == 0);
  CHECK(leveldb_filterpolicy_name((const leveldb_filterpolicy_t*)unknown) == NULL);
  for (i = 0; i < MANY_POLICIES; i++) {
    live[i] = i % 2 == 0 ? leveldb_bloom_policy_create(10) : leveldb_filterpolicy_create_bloom(10);
    failed += live[i] == NULL;
  }
  CHECK(failed == 0);
  /* The first and the last made keep working. */
  CHECK(creates("first of many", live[0], HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, HELLO_WORLD_AT_10,
                sizeof HELLO_WORLD_AT_10));
  CHECK(creates("last of many", live[MANY_POLICIES - 1], HELLO_WORLD, HELLO_WORLD_LENGTHS, 2,
                HELLO_WORLD_AT_10, sizeof HELLO_WORLD_AT_10));
  CHECK(leveldb_filterpolicy_name((const leveldb_filterpolicy_t*)unknown) == NULL);
  for (i = 0; i < MANY_POLICIES; i++) leveldb_filterpolicy_destroy(live[i]);
}

/* A C program's append function for the policies of leveldb_bloom_cxx_policy_create
   (C cannot call their CreateFilter, so it is never called here). */
static void unused_append(void* string, size_t length, leveldb_bloom_filter_writer_t write,
                          void* writer) {
  (void)string;
  (void)length;
  (void)write;
  (void)writer;
}

/* The C++ header's creators: NULL for a NULL append function or a negative
   bits_per_key; otherwise a policy every function accepts, of its format, released by
   either destroy function. */
static void cxx_policy_create(void) {
  leveldb_filterpolicy_t* made[2];
  size_t length = 0;
  char* filter;
  CHECK(leveldb_bloom_cxx_policy_create(10, NULL) == NULL);
  CHECK(leveldb_bloom_cxx_legacy_policy_create(10, NULL) == NULL);
  CHECK(leveldb_bloom_cxx_policy_create(-1, unused_append) == NULL);
  CHECK(leveldb_bloom_cxx_policy_create(INT_MIN, unused_append) == NULL);
  CHECK(leveldb_bloom_cxx_legacy_policy_create(-1, unused_append) == NULL);
  CHECK(leveldb_bloom_cxx_legacy_policy_create(INT_MIN, unused_append) == NULL);
  made[0] = leveldb_bloom_cxx_policy_create(10, unused_append);
  made[1] = leveldb_bloom_cxx_legacy_policy_create(10, unused_append);
  CHECK(made[0] != NULL && made[1] != NULL);
  CHECK(strcmp(leveldb_bloom_policy_name(made[0]), "leveldb.BuiltinBloomFilter2") == 0);
  CHECK(strcmp(leveldb_bloom_policy_name(made[1]), "leveldb.BuiltinBloomFilter") == 0);
  filter = leveldb_bloom_create_filter(made[0], HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, &length);
  CHECK(filter != NULL && length == sizeof HELLO_WORLD_AT_10 &&
        memcmp(filter, HELLO_WORLD_AT_10, length) == 0);
  free(filter);
  leveldb_bloom_policy_destroy(made[0]);
  leveldb_filterpolicy_destroy(made[1]);
}

/* An append function that calls the writer wrongly: with NULL, and with buffers of
   0 and 1 byte, none of which holds a filter: each write writes nothing and returns
   0, and the process goes on. */
static size_t wrong_writes[3] = {1, 1, 1};
static char wrong_buffer[1];
static void wrong_append(void* string, size_t length, leveldb_bloom_filter_writer_t write,
                         void* writer) {
  (void)string;
  (void)length;
  wrong_writes[0] = write(writer, NULL, 10);
  wrong_writes[1] = write(writer, wrong_buffer, 0);
  wrong_writes[2] = write(writer, wrong_buffer, 1);
}

/* A policy of leveldb_bloom_cxx_policy_create whose append function misuses the
   writer, its CreateFilter called through its vtable as a C++ program would. */
static void cxx_policy_wrong_writer(void) {
  struct {
    const char* data;
    size_t size;
  } key = {"key", 3};
  void (*create_filter)(const void* policy, const void* keys, int n, void* dst);
  void* const* vtable;
  leveldb_filterpolicy_t* policy = leveldb_bloom_cxx_policy_create(10, wrong_append);
  if (!CHECK(policy != NULL)) return;
  /* Itanium C++ ABI: the destructors, Name, then CreateFilter. */
  memcpy(&vtable, policy, sizeof vtable);
  memcpy(&create_filter, &vtable[3], sizeof create_filter);
  create_filter(policy, &key, 1, NULL);
  CHECK(wrong_writes[0] == 0 && wrong_writes[1] == 0 && wrong_writes[2] == 0);
  CHECK(wrong_buffer[0] == 0);
  leveldb_bloom_policy_destroy(policy);
}

/* The leveldb_bloom_ names and their leveldb_filterpolicy_ aliases are one function. */
static void own_names_and_aliases(void) {
  leveldb_filterpolicy_t* policy = leveldb_bloom_policy_create(10);
  size_t own_length, alias_length;
  char* own = leveldb_bloom_create_filter(policy, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, &own_length);
  char* alias =
      leveldb_filterpolicy_create_filter(policy, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, &alias_length);
  uint8_t own_results[2], alias_results[2];
  CHECK(same_bytes("leveldb_bloom_create_filter", own, own_length,
                   (const unsigned char*)alias, alias_length));
  CHECK(leveldb_bloom_policy_name(policy) == leveldb_filterpolicy_name(policy));
  CHECK(leveldb_bloom_key_may_match(policy, "hello", 5, own, own_length) == 1);
  CHECK(leveldb_bloom_key_may_match(policy, "hello", 5, own, own_length) ==
        leveldb_filterpolicy_key_may_match(policy, "hello", 5, own, own_length));
  leveldb_bloom_key_may_match_batch(policy, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, own, own_length,
                                    own_results);
  leveldb_filterpolicy_key_may_match_batch(policy, HELLO_WORLD, HELLO_WORLD_LENGTHS, 2, own,
                                           own_length, alias_results);
  CHECK(own_results[0] == 1 && own_results[1] == 1 && alias_results[0] == 1 &&
        alias_results[1] == 1);
  free(own);
  free(alias);
  leveldb_bloom_policy_destroy(policy);
}

int main(void) {
  own_names_and_aliases();
  cxx_policy_create();
  cxx_policy_wrong_writer();
  many_policies();
  return check_report("api_policies");
}
