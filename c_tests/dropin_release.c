/* With LevelDB in the process: releasing every kind of policy through this library's
   destroy, and every function of the library on the policy that
   leveldb_filterpolicy_create_bloom returns. Built twice, linked
   -lleveldb_bloom -lleveldb (the program's leveldb_filterpolicy_destroy and
   leveldb_filterpolicy_create_bloom bind to this library) and -lleveldb
   -lleveldb_bloom (both bind to LevelDB's); run under valgrind, so a policy released
   wrongly shows as a leak or an invalid free. Prints what it found; reports and
   exits as check.h says. */
#include <leveldb/c.h>
#include <leveldb_bloom.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef void (*destroy_fn)(leveldb_filterpolicy_t*);
typedef leveldb_filterpolicy_t* (*create_bloom_fn)(int);

/* `name` as defined in the library that defines `anchor` (looked up there, not in
   the program's scope, so link order does not matter). */
static void* symbol_in_library_of(const void* anchor, const char* name) {
  Dl_info info;
  void *library, *symbol;
  if (dladdr(anchor, &info) == 0 || info.dli_fname == NULL) return NULL;
  library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (library == NULL) return NULL;
  symbol = dlsym(library, name);
  dlclose(library);
  return symbol;
}

static void* address_of_bloom_create(void) {
  leveldb_filterpolicy_t* (*function)(int) = leveldb_bloom_policy_create;
  void* address;
  memcpy(&address, &function, sizeof address);
  return address;
}

/* A function of LevelDB's alone (this library defines leveldb_open too). */
static void* address_of_leveldb_close(void) {
  void (*function)(leveldb_t*) = leveldb_close;
  void* address;
  memcpy(&address, &function, sizeof address);
  return address;
}

/* A custom policy made with LevelDB's leveldb_filterpolicy_create. */
static int custom_destroyed;
static void custom_destructor(void* state) { custom_destroyed += state == &custom_destroyed; }
static char* custom_create(void* state, const char* const* keys, const size_t* lengths,
                           int num_keys, size_t* filter_length) {
  (void)state, (void)keys, (void)lengths, (void)num_keys;
  *filter_length = 0;
  return (char*)malloc(1);
}
static unsigned char custom_match(void* state, const char* key, size_t length,
                                  const char* filter, size_t filter_length) {
  (void)state, (void)key, (void)length, (void)filter, (void)filter_length;
  return 1;
}
static const char* custom_name(void* state) {
  (void)state;
  return "custom";
}

enum { NUM_KEYS = 1000 };

/* Every function of this library on `policy`, which LevelDB made (when swapped,
   wrapping one of ours): the same results as on an own handle of this library. */
static void check_every_function(const leveldb_filterpolicy_t* policy) {
  static char storage[NUM_KEYS][16];
  const char* keys[NUM_KEYS];
  size_t lengths[NUM_KEYS], length, own_length, written;
  leveldb_filterpolicy_t* own = leveldb_bloom_policy_create(10);
  char *filter, *own_filter, *buffer;
  int i, matches = 0;
  for (i = 0; i < NUM_KEYS; i++) {
    lengths[i] = (size_t)sprintf(storage[i], "key%d", i);
    keys[i] = storage[i];
  }
  CHECK_THAT(own != NULL, "own handle");
  CHECK_THAT(leveldb_filterpolicy_name(policy) != NULL &&
             strcmp(leveldb_filterpolicy_name(policy), "leveldb.BuiltinBloomFilter2") == 0,
         "name");
  filter = leveldb_filterpolicy_create_filter(policy, keys, lengths, NUM_KEYS, &length);
  own_filter = leveldb_filterpolicy_create_filter(own, keys, lengths, NUM_KEYS, &own_length);
  CHECK_THAT(filter != NULL && own_filter != NULL && length == own_length && length > 2 &&
             memcmp(filter, own_filter, length) == 0,
         "create_filter equals the own handle's");
  CHECK_THAT(leveldb_bloom_filter_length(policy, NUM_KEYS) == own_length, "filter_length");
  buffer = (char*)malloc(own_length);
  written = leveldb_bloom_write_filter(policy, keys, lengths, NUM_KEYS, buffer, own_length);
  CHECK_THAT(written == own_length && memcmp(buffer, own_filter, own_length) == 0, "write_filter");
  for (i = 0; i < NUM_KEYS; i++) {
    char absent[16];
    size_t absent_length = (size_t)sprintf(absent, "absent%d", i);
    CHECK_THAT(leveldb_filterpolicy_key_may_match(policy, keys[i], lengths[i], filter, length) == 1,
           "key_may_match on a present key");
    matches += leveldb_filterpolicy_key_may_match(policy, absent, absent_length, filter, length);
    CHECK_THAT(leveldb_filterpolicy_key_may_match(policy, absent, absent_length, filter, length) ==
               leveldb_filterpolicy_key_may_match(own, absent, absent_length, own_filter,
                                                  own_length),
           "key_may_match on an absent key");
  }
  CHECK_THAT(matches < NUM_KEYS / 10, "the filter rejects absent keys");
  free(buffer);
  free(filter);
  free(own_filter);
  leveldb_bloom_policy_destroy(own);
}

int main(void) {
  destroy_fn ours = NULL, programs = leveldb_filterpolicy_destroy;
  create_bloom_fn leveldbs_create_bloom = NULL;
  void* symbol = symbol_in_library_of(address_of_bloom_create(), "leveldb_filterpolicy_destroy");
  int swapped = leveldb_bloom_swap_status() & LEVELDB_BLOOM_SWAP_C_API;
  leveldb_filterpolicy_t* policy;
  if (symbol != NULL) memcpy(&ours, &symbol, sizeof ours);
  symbol = symbol_in_library_of(address_of_leveldb_close(), "leveldb_filterpolicy_create_bloom");
  if (symbol != NULL) memcpy(&leveldbs_create_bloom, &symbol, sizeof leveldbs_create_bloom);
  CHECK_THAT(ours != NULL && leveldbs_create_bloom != NULL, "symbols found");
  if (ours == NULL || leveldbs_create_bloom == NULL) return check_report("dropin_release");
  printf("swap status: %d\n", leveldb_bloom_swap_status());
  printf("program's leveldb_filterpolicy_destroy: %s\n",
         programs == ours ? "libleveldb_bloom" : "LevelDB");

  /* A custom LevelDB policy: its destructor runs exactly once. */
  custom_destroyed = 0;
  policy = leveldb_filterpolicy_create(&custom_destroyed, custom_destructor, custom_create,
                                       custom_match, custom_name);
  ours(policy);
  CHECK_THAT(custom_destroyed == 1, "custom policy destroyed once");

  /* LevelDB's own bloom policy (built around leveldb::NewBloomFilterPolicy, which is
     this library's when swapped, LevelDB's otherwise). */
  ours(leveldbs_create_bloom(10));

  /* The program's leveldb_filterpolicy_create_bloom: this library's LevelDB object
     when swapped, accepted by every function here; LevelDB's own otherwise, which
     those functions do not know and answer fail-safe. */
  policy = leveldb_filterpolicy_create_bloom(10);
  CHECK_THAT(policy != NULL, "create_bloom");
  if (swapped) {
    check_every_function(policy);
  } else {
    size_t length = 0;
    char* filter = leveldb_filterpolicy_create_filter(policy, NULL, NULL, 0, &length);
    CHECK_THAT(leveldb_filterpolicy_name(policy) == NULL, "unknown policy: no name");
    CHECK_THAT(length == 2 && (unsigned char)filter[1] == 0xff, "unknown policy: match-all filter");
    free(filter);
  }
  ours(policy);
  ours(NULL);

  return check_report("dropin_release");
}
