/* Fork handlers of another library that use this one, in the order that used to
 * hang: this program registers its own fork handlers first, then loads the library
 * (dlopen), whose constructor registers the library's. POSIX runs prepare handlers
 * in the reverse order of registration, so the program's prepare handler runs after
 * the library's took its locks, and the program's parent and child handlers run
 * before the library's release them. Each handler creates a policy, builds a filter,
 * queries it and destroys the policy. The program forks FORKS times under an alarm:
 * a hang is killed by SIGALRM.
 *
 * Usage: fork_order LIBRARY FORKS */
#include <leveldb_bloom.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

static struct {
  leveldb_filterpolicy_t* (*create)(int);
  void (*destroy)(leveldb_filterpolicy_t*);
  char* (*create_filter)(const leveldb_filterpolicy_t*, const char* const*, const size_t*, int,
                         size_t*);
  uint8_t (*key_may_match)(const leveldb_filterpolicy_t*, const char*, size_t, const char*,
                           size_t);
} lib;

/* Policies the handlers made and used rightly, in this process. */
static volatile long handler_uses = 0;

/* Creates, uses and destroys a policy; counts it when every step was right. */
static void use_a_policy(void) {
  const char* key = "handler";
  size_t length = strlen(key), filter_length = 0;
  leveldb_filterpolicy_t* policy = lib.create(10);
  char* filter = policy == NULL ? NULL : lib.create_filter(policy, &key, &length, 1, &filter_length);
  if (filter != NULL && lib.key_may_match(policy, key, length, filter, filter_length) == 1)
    handler_uses++;
  free(filter);
  if (policy != NULL) lib.destroy(policy);
}

static void* ours(void* library, const char* name) {
  void* symbol = dlsym(library, name);
  if (symbol == NULL) {
    fprintf(stderr, "fork_order: %s missing\n", name);
    exit(2);
  }
  return symbol;
}

int main(int argc, char** argv) {
  long forks = argc > 2 ? atol(argv[2]) : 0, i, children_right = 0;
  leveldb_filterpolicy_t* kept;
  void* library;
  if (argc < 3) {
    fprintf(stderr, "usage: fork_order LIBRARY FORKS\n");
    return 2;
  }
  /* Before the library exists in the process: so before its own handlers. */
  CHECK(pthread_atfork(use_a_policy, use_a_policy, use_a_policy) == 0);
  library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fprintf(stderr, "fork_order: %s\n", dlerror());
    return 2;
  }
  *(void**)&lib.create = ours(library, "leveldb_bloom_policy_create");
  *(void**)&lib.destroy = ours(library, "leveldb_bloom_policy_destroy");
  *(void**)&lib.create_filter = ours(library, "leveldb_bloom_create_filter");
  *(void**)&lib.key_may_match = ours(library, "leveldb_bloom_key_may_match");
  kept = lib.create(10); /* the registry exists and holds a policy across the forks */
  CHECK(kept != NULL);
  fflush(stdout);
  alarm(20);
  for (i = 0; i < forks; i++) {
    int status = 0;
    pid_t pid = fork();
    if (pid == 0) {
      /* The prepare and child handlers ran here: two uses; then one more. */
      use_a_policy();
      _exit(handler_uses == 2 * i + 3 ? 0 : 1);
    }
    children_right += pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
                      WEXITSTATUS(status) == 0;
  }
  alarm(0);
  CHECK_THAT(children_right == forks, "every child's handlers and its own use worked");
  CHECK_THAT(handler_uses == 2 * forks, "the prepare and parent handlers worked in the parent");
  printf("%ld forks, %ld handler uses in the parent\n", forks, handler_uses);
  lib.destroy(kept);
  return check_report("fork_order");
}
