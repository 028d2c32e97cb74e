/* Forks at any instant: a child of a multithreaded process can use the library.
 *
 * churn FORKS: 6 threads keep creating, using (create_filter, key_may_match on
 * present and absent keys, so that the "no" path looks the handle up, and the
 * batch query) and destroying policies of both kinds, while the main thread forks
 * FORKS times. Built with -DWITH_LEVELDB, 2 more threads open, write, read and close
 * LevelDB databases with the bloom policy under DIR (`churn FORKS DIR`).
 *
 * first-use PROCESSES: runs this program PROCESSES times anew; each run forks while
 * another thread makes the process's first call into the library.
 *
 * Every child, under alarm(5), checks the shared policy's filter and answers against
 * the ones computed before the threads started, then creates, uses and destroys 20
 * policies; it exits 0 only if every result was right. A child the alarm kills hung.
 *
 * The library's functions are taken from the global scope, so one source serves
 * a program linked to the library and one that only has it preloaded (LD_PRELOAD
 * into a program linked to LevelDB alone); dladdr proves each is the library's.
 * Built with -DSTATIC_LIBRARY, the program is linked with libleveldb_bloom.a, whose
 * constructor must register the fork handlers as the shared library's does. */
#include <leveldb_bloom.h>

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef WITH_LEVELDB
#include <leveldb/c.h>
#endif

#include "check.h"

extern char** environ;

#define CHURN_THREADS 6
#define KEYS 200
#define QUERIES 400
#define CHILD_POLICIES 20
#define CHILD_SECONDS 5
/* Children outstanding at once: the parent goes on forking while they run. */
#define MAX_OUTSTANDING 16

/* The library's functions, as the process's global scope binds them. */
static struct {
  leveldb_filterpolicy_t* (*create_bloom)(int);
  leveldb_filterpolicy_t* (*policy_create)(int);
  void (*destroy)(leveldb_filterpolicy_t*);
  char* (*create_filter)(const leveldb_filterpolicy_t*, const char* const*, const size_t*, int,
                         size_t*);
  uint8_t (*key_may_match)(const leveldb_filterpolicy_t*, const char*, size_t, const char*,
                           size_t);
  void (*batch)(const leveldb_filterpolicy_t*, const char* const*, const size_t*, size_t,
                const char*, size_t, uint8_t*);
  int (*swap_status)(void);
} lib;

#ifdef STATIC_LIBRARY
/* Linked with libleveldb_bloom.a: the functions are the program's own. */
static void load_library(void) {
  lib.create_bloom = leveldb_filterpolicy_create_bloom;
  lib.policy_create = leveldb_bloom_policy_create;
  lib.destroy = leveldb_filterpolicy_destroy;
  lib.create_filter = leveldb_bloom_create_filter;
  lib.key_may_match = leveldb_bloom_key_may_match;
  lib.batch = leveldb_bloom_key_may_match_batch;
  lib.swap_status = leveldb_bloom_swap_status;
}
#else
static void* ours(const char* name) {
  void* symbol = dlsym(RTLD_DEFAULT, name);
  Dl_info info;
  if (symbol == NULL || dladdr(symbol, &info) == 0 || info.dli_fname == NULL ||
      strstr(info.dli_fname, "libleveldb_bloom") == NULL) {
    fprintf(stderr, "fork_churn: %s is not libleveldb_bloom's\n", name);
    exit(2);
  }
  return symbol;
}

static void load_library(void) {
  *(void**)&lib.create_bloom = ours("leveldb_filterpolicy_create_bloom");
  *(void**)&lib.policy_create = ours("leveldb_bloom_policy_create");
  *(void**)&lib.destroy = ours("leveldb_filterpolicy_destroy");
  *(void**)&lib.create_filter = ours("leveldb_bloom_create_filter");
  *(void**)&lib.key_may_match = ours("leveldb_bloom_key_may_match");
  *(void**)&lib.batch = ours("leveldb_bloom_key_may_match_batch");
  *(void**)&lib.swap_status = ours("leveldb_bloom_swap_status");
}
#endif

static char keys[KEYS + QUERIES][16];
static const char* key_pointers[KEYS + QUERIES];
static size_t key_lengths[KEYS + QUERIES];

/* What the shared policy gave before any thread started. */
static leveldb_filterpolicy_t* shared;
static char* expected_filter;
static size_t expected_length;
static uint8_t expected_answers[QUERIES];

static void make_keys(void) {
  int i;
  for (i = 0; i < KEYS + QUERIES; i++) {
    key_lengths[i] = (size_t)snprintf(keys[i], sizeof keys[i], "%s%d", i < KEYS ? "k" : "q", i);
    key_pointers[i] = keys[i];
  }
}

/* Uses `policy` as every caller does; returns 0 if any answer is wrong. With
   `expected`, the filter must equal it byte for byte and so must the answers. */
static int use_policy(const leveldb_filterpolicy_t* policy, int expect_shared) {
  size_t length = 0, i;
  uint8_t answers[QUERIES];
  int ok = 1;
  char* filter = lib.create_filter(policy, key_pointers, key_lengths, KEYS, &length);
  if (filter == NULL) return 0;
  for (i = 0; i < KEYS; i++)
    ok &= lib.key_may_match(policy, key_pointers[i], key_lengths[i], filter, length) == 1;
  lib.batch(policy, key_pointers + KEYS, key_lengths + KEYS, QUERIES, filter, length, answers);
  for (i = 0; i < QUERIES; i++) {
    uint8_t one = lib.key_may_match(policy, key_pointers[KEYS + i], key_lengths[KEYS + i],
                                    filter, length);
    ok &= one == answers[i];
    if (expect_shared) ok &= one == expected_answers[i];
  }
  if (expect_shared)
    ok &= length == expected_length && memcmp(filter, expected_filter, length) == 0;
  free(filter);
  return ok;
}

static leveldb_filterpolicy_t* new_policy(int i) {
  return i % 2 == 0 ? lib.create_bloom(10) : lib.policy_create(8 + i % 7);
}

/* The child's whole life: under an alarm, the shared policy, then 20 of its own. */
static void child(void) {
  int i, ok;
  alarm(CHILD_SECONDS);
  ok = use_policy(shared, 1);
  for (i = 0; i < CHILD_POLICIES; i++) {
    leveldb_filterpolicy_t* policy = new_policy(i);
    ok &= policy != NULL && use_policy(policy, 0);
    lib.destroy(policy);
  }
  _exit(ok ? 0 : 1);
}

static volatile int stopping;

static void* churn(void* arg) {
  int i = (int)(intptr_t)arg;
  while (!stopping) {
    leveldb_filterpolicy_t* policy = new_policy(i++);
    if (policy == NULL || !use_policy(policy, 0)) {
      fprintf(stderr, "fork_churn: a churning thread got a wrong result\n");
      abort();
    }
    if (!use_policy(shared, 1)) {
      fprintf(stderr, "fork_churn: the shared policy gave a wrong result\n");
      abort();
    }
    lib.destroy(policy);
  }
  return NULL;
}

#ifdef WITH_LEVELDB
static const char* db_root;

/* Opens, writes, reads back and closes databases with the bloom policy, LevelDB's
   objects made and destroyed through the swapped functions. */
static void* databases(void* arg) {
  char path[4096], key[32];
  int round = 0, i;
  while (!stopping) {
    char* error = NULL;
    leveldb_filterpolicy_t* policy = lib.create_bloom(10);
    leveldb_options_t* options = leveldb_options_create();
    leveldb_writeoptions_t* write = leveldb_writeoptions_create();
    leveldb_readoptions_t* read = leveldb_readoptions_create();
    leveldb_t* db;
    snprintf(path, sizeof path, "%s/db%d-%d", db_root, (int)(intptr_t)arg, round++ % 4);
    leveldb_options_set_create_if_missing(options, 1);
    leveldb_options_set_filter_policy(options, policy);
    db = leveldb_open(options, path, &error);
    if (db == NULL) {
      fprintf(stderr, "fork_churn: cannot open %s: %s\n", path, error);
      abort();
    }
    for (i = 0; i < 500; i++) {
      int n = snprintf(key, sizeof key, "key%d", i);
      leveldb_put(db, write, key, (size_t)n, key, (size_t)n, &error);
    }
    leveldb_compact_range(db, NULL, 0, NULL, 0);
    for (i = 0; i < 500; i++) {
      size_t length = 0;
      int n = snprintf(key, sizeof key, "key%d", i);
      char* value = leveldb_get(db, read, key, (size_t)n, &length, &error);
      if (value == NULL) {
        fprintf(stderr, "fork_churn: %s lost key%d\n", path, i);
        abort();
      }
      leveldb_free(value);
    }
    leveldb_close(db);
    leveldb_readoptions_destroy(read);
    leveldb_writeoptions_destroy(write);
    leveldb_options_destroy(options);
    lib.destroy(policy);
  }
  return NULL;
}
#define DB_THREADS 2
#else
#define DB_THREADS 0
#endif

/* How each child ended. */
struct tally {
  long forks, passed, hung, failed;
};

static void record(struct tally* tally, int status) {
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
    tally->passed++;
  else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
    tally->hung++;
  else
    tally->failed++;
}

/* Collects the children that have ended, waiting while more than `keep` run. */
static void reap(struct tally* tally, long* outstanding, long keep) {
  int status;
  while (*outstanding > 0) {
    pid_t pid = waitpid(-1, &status, *outstanding > keep ? 0 : WNOHANG);
    if (pid <= 0) return;
    (*outstanding)--;
    record(tally, status);
  }
}

static void prepare_shared(void) {
  size_t length = 0, i;
  make_keys();
  shared = lib.create_bloom(10);
  expected_filter = lib.create_filter(shared, key_pointers, key_lengths, KEYS, &length);
  expected_length = length;
  for (i = 0; i < QUERIES; i++)
    expected_answers[i] = lib.key_may_match(shared, key_pointers[KEYS + i], key_lengths[KEYS + i],
                                            expected_filter, length);
}

static int run_churn(long forks) {
  pthread_t threads[CHURN_THREADS + DB_THREADS];
  struct tally tally = {0, 0, 0, 0};
  long outstanding = 0;
  int i;
  prepare_shared();
  for (i = 0; i < CHURN_THREADS; i++)
    pthread_create(&threads[i], NULL, churn, (void*)(intptr_t)i);
#ifdef WITH_LEVELDB
  for (i = 0; i < DB_THREADS; i++)
    pthread_create(&threads[CHURN_THREADS + i], NULL, databases, (void*)(intptr_t)i);
#endif
  while (tally.forks < forks) {
    pid_t pid;
    reap(&tally, &outstanding, MAX_OUTSTANDING - 1);
    pid = fork();
    if (pid == 0) child();
    if (pid < 0) {
      perror("fork");
      break;
    }
    tally.forks++;
    outstanding++;
  }
  reap(&tally, &outstanding, 0);
  stopping = 1;
  for (i = 0; i < CHURN_THREADS + DB_THREADS; i++) pthread_join(threads[i], NULL);
  printf("churn: %ld forks, %ld children passed, %ld hung, %ld failed; swap status %d\n",
         tally.forks, tally.passed, tally.hung, tally.failed, lib.swap_status());
  CHECK(tally.forks == forks);
  CHECK(tally.hung == 0);
  CHECK(tally.failed == 0);
  CHECK(tally.passed == forks);
  lib.destroy(shared);
  free(expected_filter);
  return check_report("fork_churn");
}

/* The process's first call into the library, on a thread of its own. */
static void* first_call(void* arg) {
  (void)arg;
  prepare_shared();
  return NULL;
}

/* One fresh process: fork while `first_call` runs; 0 when the child passed, 2 when
   it hung, 1 when it failed. The child waits for nothing the parent's thread holds:
   it uses the shared policy only if it was complete at the fork. */
static int first_use_one(unsigned delay) {
  pthread_t thread;
  volatile unsigned spin;
  pid_t pid;
  int status;
  pthread_create(&thread, NULL, first_call, NULL);
  for (spin = 0; spin < delay; spin++) {
  }
  pid = fork();
  if (pid == 0) {
    int i, ok = 1;
    alarm(CHILD_SECONDS);
    make_keys();
    for (i = 0; i < CHILD_POLICIES; i++) {
      leveldb_filterpolicy_t* policy = new_policy(i);
      ok &= policy != NULL && use_policy(policy, 0);
      lib.destroy(policy);
    }
    _exit(ok ? 0 : 1);
  }
  pthread_join(thread, NULL);
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return 1;
  lib.destroy(shared);
  free(expected_filter);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? 2 : 1;
}

static int run_first_use(long processes) {
  struct tally tally = {0, 0, 0, 0};
  char delay[16];
  char* argv[] = {(char*)"fork_churn", (char*)"first-use-one", delay, NULL};
  for (; tally.forks < processes; tally.forks++) {
    pid_t pid;
    int status;
    /* Delays spread the fork over the first call's whole length. */
    snprintf(delay, sizeof delay, "%ld", (tally.forks * 7919) % 200000);
    if (posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ) != 0 ||
        waitpid(pid, &status, 0) != pid) {
      tally.failed++;
      continue;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
      tally.passed++;
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
      tally.hung++;
    else
      tally.failed++;
  }
  printf("first use: %ld processes forked during their first call, %ld children passed, "
         "%ld hung, %ld failed\n",
         tally.forks, tally.passed, tally.hung, tally.failed);
  CHECK(tally.hung == 0);
  CHECK(tally.failed == 0);
  CHECK(tally.passed == processes);
  return check_report("fork_churn");
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: fork_churn churn FORKS [DIR] | first-use PROCESSES\n");
    return 2;
  }
  if (strcmp(argv[1], "first-use-one") == 0) {
    load_library();
    return first_use_one((unsigned)strtoul(argv[2], NULL, 10));
  }
  load_library();
  if (strcmp(argv[1], "first-use") == 0) return run_first_use(strtol(argv[2], NULL, 10));
#ifdef WITH_LEVELDB
  if (argc < 4) {
    fprintf(stderr, "fork_churn: churn needs a directory for its databases\n");
    return 2;
  }
  db_root = argv[3];
  if (mkdir(db_root, 0700) != 0 && errno != EEXIST) {
    perror(db_root);
    return 2;
  }
#endif
  return run_churn(strtol(argv[2], NULL, 10));
}
