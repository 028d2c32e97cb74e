/* A plugin, as applications load them: a shared object linked with -lleveldb and
   opened by c_tests/plugin_host.c with dlopen's default flags (RTLD_LOCAL), so that
   LevelDB is invisible to the global symbol scope. It uses LevelDB's C API as any
   plugin would; nothing in it knows about leveldb-bloom. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <leveldb/c.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int custom_destroyed;

static void custom_destructor(void* state) { custom_destroyed = *(int*)state; }
static char* custom_create_filter(void* state, const char* const* keys, const size_t* lengths,
                                  int num_keys, size_t* filter_length) {
  char* filter = (char*)malloc(1);
  (void)state, (void)keys, (void)lengths, (void)num_keys;
  *filter_length = 1;
  return filter;
}
static unsigned char custom_key_may_match(void* state, const char* key, size_t length,
                                          const char* filter, size_t filter_length) {
  (void)state, (void)key, (void)length, (void)filter, (void)filter_length;
  return 1;
}
static const char* custom_name(void* state) {
  (void)state;
  return "plugin.Custom";
}

/* The object that defines what this plugin's call to `function` binds to. */
static const char* defined_in(void (*function)(void)) {
  Dl_info info;
  void* address;
  memcpy(&address, &function, sizeof address);
  return dladdr(address, &info) != 0 && info.dli_fname != NULL ? info.dli_fname : "?";
}

static void key_of(unsigned i, char* key, size_t* length) {
  *length = (size_t)sprintf(key, "plugin key %u", i * 7919u);
}

/* Writes `keys` keys with the bloom policy, reads them and as many absent keys back,
   churns `policies` bloom policies live at once, and destroys a custom policy
   through leveldb_filterpolicy_destroy. Prints what it saw, and the report of its
   checks as check.h does (the host's report); returns check_report's exit status. */
int plugin_run(const char* dir, unsigned keys, unsigned policies) {
  char* error = NULL;
  char key[64];
  size_t length, value_length;
  unsigned i, present = 0, absent = 0;
  int custom_state = 42;
  leveldb_filterpolicy_t* custom;
  leveldb_filterpolicy_t** live = (leveldb_filterpolicy_t**)calloc(policies + 1, sizeof *live);
  leveldb_filterpolicy_t* policy = leveldb_filterpolicy_create_bloom(10);
  leveldb_options_t* options = leveldb_options_create();
  leveldb_readoptions_t* read_options = leveldb_readoptions_create();
  leveldb_writeoptions_t* write_options = leveldb_writeoptions_create();
  leveldb_t* db;

  printf("leveldb_filterpolicy_create_bloom: %s\n",
         defined_in((void (*)(void))leveldb_filterpolicy_create_bloom));
  CHECK(policy != NULL);
  leveldb_options_set_create_if_missing(options, 1);
  leveldb_options_set_filter_policy(options, policy);
  db = leveldb_open(options, dir, &error);
  CHECK(error == NULL);
  if (error != NULL) return check_report("plugin");
  for (i = 0; i < keys; i++) {
    key_of(i, key, &length);
    leveldb_put(db, write_options, key, length, key, length, &error);
    CHECK(error == NULL);
  }
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  for (i = 0; i < 2 * keys; i++) {
    char* value;
    key_of(i, key, &length);
    value = leveldb_get(db, read_options, key, length, &value_length, &error);
    CHECK(error == NULL);
    CHECK((value != NULL) == (i < keys));
    if (value != NULL) {
      CHECK(value_length == length && memcmp(value, key, length) == 0);
      present++;
    } else {
      absent++;
    }
    leveldb_free(value);
  }
  printf("read: %u present, %u absent\n", present, absent);
  leveldb_close(db);
  leveldb_options_destroy(options);
  leveldb_readoptions_destroy(read_options);
  leveldb_writeoptions_destroy(write_options);
  leveldb_filterpolicy_destroy(policy);

  /* Many policies live at once: none may be NULL. */
  for (i = 0; i < policies; i++) CHECK((live[i] = leveldb_filterpolicy_create_bloom(10)) != NULL);
  for (i = 0; i < policies; i++) leveldb_filterpolicy_destroy(live[i]);
  free(live);
  printf("policies live at once: %u\n", policies);

  custom = leveldb_filterpolicy_create(&custom_state, custom_destructor, custom_create_filter,
                                       custom_key_may_match, custom_name);
  leveldb_filterpolicy_destroy(custom);
  CHECK(custom_destroyed == 42);
  printf("custom policy destroyed: %s\n", custom_destroyed == 42 ? "yes" : "no");
  return check_report("plugin");
}
