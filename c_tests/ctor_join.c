/* A plugin whose constructor makes a bloom policy on a worker thread and joins it,
   while dlopen, running the constructor, holds the dynamic loader's lock: making a
   policy must not take that lock. Linked with -lleveldb; run by c_tests/main_host.c
   (tests/suite/string_abi.rs runs it under a timeout). */
#include <leveldb/c.h>

#include <pthread.h>
#include <stdio.h>

static leveldb_filterpolicy_t* made;

static void* make_policy(void* unused) {
  (void)unused;
  made = leveldb_filterpolicy_create_bloom(10);
  return NULL;
}

__attribute__((constructor)) static void make_on_a_worker(void) {
  pthread_t worker;
  if (pthread_create(&worker, NULL, make_policy, NULL) == 0) pthread_join(worker, NULL);
}

int plugin_main(int argc, char** argv) {
  (void)argc, (void)argv;
  printf("policy made by a constructor's worker: %s\n", made != NULL ? "yes" : "no");
  leveldb_filterpolicy_destroy(made);
  return made != NULL ? 0 : 1;
}
