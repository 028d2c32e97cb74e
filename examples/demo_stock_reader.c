/* The second half of the demo: stock LevelDB, linked with -lleveldb only and its own
   bloom filter policy, reads back the database that demo.c wrote through
   libleveldb_bloom. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT */
#endif
#include <leveldb/c.h>

#include <dlfcn.h>

#include "demo_keys.h"

int main(int argc, char** argv) {
  leveldb_filterpolicy_t* policy = leveldb_filterpolicy_create_bloom(DEMO_BITS_PER_KEY);
  leveldb_options_t* options = leveldb_options_create();
  int bloom_loaded = dlsym(RTLD_DEFAULT, "leveldb_bloom_swap_status") != NULL;
  unsigned long found, absent_found;
  char* error = NULL;
  leveldb_t* db;
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIRECTORY\n", argv[0]);
    return 2;
  }
  leveldb_options_set_filter_policy(options, policy);
  db = leveldb_open(options, argv[1], &error);
  demo_check(error, "open");
  found = demo_read_back(db, &absent_found);
  printf("  stock LevelDB:   %lu of %d keys read back from the same database; %lu of %d absent "
         "keys found (libleveldb_bloom %s)\n",
         found, DEMO_KEYS, absent_found, DEMO_KEYS, bloom_loaded ? "LOADED" : "not loaded");
  leveldb_close(db);
  leveldb_options_destroy(options);
  leveldb_filterpolicy_destroy(policy);
  return found == DEMO_KEYS && absent_found == 0 && !bloom_loaded ? 0 : 1;
}
