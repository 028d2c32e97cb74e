/* A plugin whose constructor opens a LevelDB database on a worker thread and joins
   it, while dlopen, running the constructor, holds the dynamic loader's lock: an
   interposed open function must not take that lock. The database goes to the
   directory CTOR_OPEN_DIR names. Linked with -lleveldb; run by c_tests/main_host.c
   (tests/suite/default_bits_object.rs runs it under a timeout). */
#include <leveldb/c.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int opened;

static void* open_database(void* unused) {
  char* error = NULL;
  leveldb_options_t* options = leveldb_options_create();
  leveldb_t* db;
  (void)unused;
  leveldb_options_set_create_if_missing(options, 1);
  db = leveldb_open(options, getenv("CTOR_OPEN_DIR"), &error);
  if (db != NULL) {
    opened = 1;
    leveldb_close(db);
  }
  leveldb_free(error);
  leveldb_options_destroy(options);
  return NULL;
}

__attribute__((constructor)) static void open_on_a_worker(void) {
  pthread_t worker;
  if (pthread_create(&worker, NULL, open_database, NULL) == 0) pthread_join(worker, NULL);
}

int plugin_main(int argc, char** argv) {
  (void)argc, (void)argv;
  printf("database opened by a constructor's worker: %s\n", opened ? "yes" : "no");
  return opened ? 0 : 1;
}
