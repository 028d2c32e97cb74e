/* A program linked with LevelDB that opens libleveldb_bloom itself with dlopen,
   makes a bloom policy with its leveldb_filterpolicy_create_bloom, writes a
   database with it, and then dlcloses the library while the database still uses
   the policy: further Puts, Gets and a compaction must still work (the library is
   NODELETE). Reports and exits as check.h says.

     dlclose_db LIBRARY DIR KEYS */
#include <leveldb/c.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

typedef leveldb_filterpolicy_t* (*create_bloom_fn)(int);

static void key_of(unsigned i, char* key, size_t* length) {
  *length = (size_t)sprintf(key, "dlclose key %u", i * 2654435761u);
}

static void put_range(leveldb_t* db, unsigned from, unsigned to) {
  leveldb_writeoptions_t* options = leveldb_writeoptions_create();
  char key[64];
  size_t length;
  char* error = NULL;
  for (; from < to; from++) {
    key_of(from, key, &length);
    leveldb_put(db, options, key, length, key, length, &error);
    CHECK(error == NULL);
  }
  leveldb_writeoptions_destroy(options);
}

/* Gets keys [0, 2 * keys): the first `keys` present, the rest absent. */
static void get_all(leveldb_t* db, unsigned keys) {
  leveldb_readoptions_t* options = leveldb_readoptions_create();
  char key[64];
  size_t length, value_length;
  char* error = NULL;
  unsigned i;
  for (i = 0; i < 2 * keys; i++) {
    char* value;
    key_of(i, key, &length);
    value = leveldb_get(db, options, key, length, &value_length, &error);
    CHECK(error == NULL);
    CHECK((value != NULL) == (i < keys));
    if (value != NULL) CHECK(value_length == length && memcmp(value, key, length) == 0);
    leveldb_free(value);
  }
  leveldb_readoptions_destroy(options);
}

int main(int argc, char** argv) {
  void* library;
  void* symbol;
  create_bloom_fn create_bloom;
  leveldb_filterpolicy_t* policy;
  leveldb_options_t* options;
  leveldb_t* db;
  char* error = NULL;
  unsigned keys;
  if (argc != 4) {
    fprintf(stderr, "usage: dlclose_db LIBRARY DIR KEYS\n");
    return 2;
  }
  keys = (unsigned)atoi(argv[3]);
  library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == NULL || (symbol = dlsym(library, "leveldb_filterpolicy_create_bloom")) == NULL) {
    fprintf(stderr, "dlclose_db: %s\n", dlerror());
    return 1;
  }
  memcpy(&create_bloom, &symbol, sizeof create_bloom);
  policy = create_bloom(10);
  CHECK(policy != NULL);
  options = leveldb_options_create();
  leveldb_options_set_create_if_missing(options, 1);
  leveldb_options_set_filter_policy(options, policy);
  db = leveldb_open(options, argv[2], &error);
  CHECK(error == NULL);
  if (error != NULL) return check_report("dlclose_db");
  put_range(db, 0, keys / 2);
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  CHECK(dlclose(library) == 0);
  printf("dlclosed\n");
  get_all(db, keys / 2);
  put_range(db, keys / 2, keys);
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  get_all(db, keys);
  leveldb_close(db);
  leveldb_options_destroy(options);
  /* LevelDB's own destroy (this program binds to LevelDB's): it calls back into the
     policy's destructor, in the library dlclosed above. */
  leveldb_filterpolicy_destroy(policy);
  return check_report("dlclose_db");
}
