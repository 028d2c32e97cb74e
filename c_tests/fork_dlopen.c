/* Children forked while another thread is inside dlopen or dlclose: glibc does not
   reset, in a child, the lock that guards its list of loaded objects, which those
   calls hold for a moment, so a child that walked the list with dl_iterate_phdr
   could wait on it forever. Here a thread loads and unloads LIBRARY (one nothing
   else loads) in a loop while the main thread forks CHILDREN children, one after
   another; each makes a bloom policy with leveldb_filterpolicy_create_bloom, opens a
   database with it under DIR, writes keys, compacts them into a table (LevelDB calls
   the policy's CreateFilter), reads them back and an absent one, and exits 0. A
   child that has not exited within CHILD_SECONDS hung: it is killed with SIGKILL.

     fork_dlopen LIBRARY DIR CHILDREN

   Built against LevelDB alone, run stock and with this library preloaded
   (tests/suite/decided_once.rs). */
#include <leveldb/c.h>

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

#define CHILD_SECONDS 20
#define KEYS 200

static const char* library;
static volatile int stop;

static void* load_and_unload(void* unused) {
  (void)unused;
  while (!stop) {
    void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (handle != NULL) dlclose(handle);
  }
  return NULL;
}

/* The child's work; its exit status: 0 when every step worked. */
static int child(const char* dir) {
  char* error = NULL;
  char key[32], *value;
  size_t length;
  int i, wrong = 0;
  leveldb_filterpolicy_t* policy = leveldb_filterpolicy_create_bloom(10);
  leveldb_options_t* options = leveldb_options_create();
  leveldb_writeoptions_t* write = leveldb_writeoptions_create();
  leveldb_readoptions_t* read = leveldb_readoptions_create();
  leveldb_t* db;
  if (policy == NULL) return 3;
  leveldb_options_set_create_if_missing(options, 1);
  leveldb_options_set_filter_policy(options, policy);
  db = leveldb_open(options, dir, &error);
  if (db == NULL) return 4;
  for (i = 0; i < KEYS; i++) {
    snprintf(key, sizeof key, "key%05d", i);
    leveldb_put(db, write, key, strlen(key), key, strlen(key), &error);
  }
  leveldb_compact_range(db, NULL, 0, NULL, 0);
  for (i = 0; i <= KEYS; i++) {
    snprintf(key, sizeof key, "key%05d", i);
    value = leveldb_get(db, read, key, strlen(key), &length, &error);
    wrong += (value != NULL) != (i < KEYS) || error != NULL;
    leveldb_free(value);
  }
  leveldb_close(db);
  leveldb_options_destroy(options);
  leveldb_writeoptions_destroy(write);
  leveldb_readoptions_destroy(read);
  leveldb_filterpolicy_destroy(policy);
  return wrong == 0 ? 0 : 5;
}

/* Waits for `pid` up to CHILD_SECONDS; kills it then. Its exit status, or -1 when
   it hung. */
static int wait_or_kill(pid_t pid) {
  struct timespec tick = {0, 10 * 1000 * 1000};
  int status, waited;
  for (waited = 0; waited < CHILD_SECONDS * 100; waited++) {
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    nanosleep(&tick, NULL);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return -1;
}

int main(int argc, char** argv) {
  pthread_t churn;
  int children, i, hung = 0, failed = 0;
  char dir[4096];
  if (argc != 4) {
    fprintf(stderr, "usage: fork_dlopen LIBRARY DIR CHILDREN\n");
    return 2;
  }
  library = argv[1];
  children = atoi(argv[3]);
  if (pthread_create(&churn, NULL, load_and_unload, NULL) != 0) return 2;
  for (i = 0; i < children; i++) {
    pid_t pid;
    int status;
    snprintf(dir, sizeof dir, "%s/child%d", argv[2], i);
    pid = fork();
    if (pid == 0) _exit(child(dir));
    if (!CHECK(pid > 0)) break;
    status = wait_or_kill(pid);
    hung += status == -1;
    failed += status > 0;
    if (status > 0) fprintf(stderr, "child %d: exit status %d\n", i, status);
  }
  stop = 1;
  pthread_join(churn, NULL);
  printf("children: %d, hung: %d, failed: %d\n", children, hung, failed);
  CHECK_THAT(hung == 0, "no child hung");
  CHECK_THAT(failed == 0, "every child's database worked");
  return check_report("fork_dlopen");
}
