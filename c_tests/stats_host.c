/* A host program for LEVELDB_BLOOM_STATS, linked to the library: it makes a policy,
 * builds a filter, asks it QUERIES keys, and meanwhile does to its descriptors and
 * directories what programs do; tests/suite/stats_destinations.rs sets the variable and
 * judges what the summary did (files, stderr, exit status).
 *
 * Usage: stats_host MODE QUERIES [ARG]
 *   plain     (ARG: a directory to chdir to before exit, optional)
 *   reuse-fd2 ARG: closes descriptor 2, opens the file ARG (it becomes 2), writes
 *             "data\n" to it
 *   steal-fd  ARG: closes descriptors 3 to 1023, opens the file ARG, writes "data\n"
 *   fork      ARG: forks ARG children one after the other; each asks one key and
 *             exit()s, so its summary is written
 *   wait      reads stdin to its end before exit
 * It prints "counting: yes|no" (whether the queries were counted: the variable took
 * effect), "simd level: LEVEL" (leveldb_bloom_simd_level(), which LEVELDB_BLOOM_SIMD may
 * lower) and its check line. */
#include <leveldb_bloom.h>

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define KEYS 10

static leveldb_filterpolicy_t* policy;
static char* filter;
static size_t filter_length;

/* Queries counted so far in this process. */
static uint64_t counted(void) {
  leveldb_bloom_stats_t stats;
  memset(&stats, 0, sizeof stats);
  stats.size = sizeof stats;
  CHECK(leveldb_bloom_stats(&stats) == 0);
  return stats.queries;
}

/* Asks `n` keys, half of them present; checks the present ones match. */
static void ask(long n) {
  long i;
  for (i = 0; i < n; i++) {
    char key[32];
    int length = snprintf(key, sizeof key, "key%ld", i % (2 * KEYS));
    uint8_t match = leveldb_bloom_key_may_match(policy, key, (size_t)length, filter, filter_length);
    if (i % (2 * KEYS) < KEYS) CHECK(match == 1);
  }
}

static void write_data(int fd) {
  CHECK(fd >= 0);
  CHECK(write(fd, "data\n", 5) == 5);
}

/* Forks `children` children one after the other, each asking one key. */
static void fork_children(long children) {
  long i, failed = 0;
  fflush(stdout);
  for (i = 0; i < children; i++) {
    int status = 0;
    pid_t pid = fork();
    if (pid == 0) {
      ask(1);
      exit(counted() == 1 ? 0 : 3);
    }
    failed += pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
              WEXITSTATUS(status) != 0;
  }
  CHECK_THAT(failed == 0, "every child counted exactly its own query");
}

int main(int argc, char** argv) {
  const char* keys[KEYS];
  size_t lengths[KEYS];
  char storage[KEYS][16];
  const char* mode = argc > 2 ? argv[1] : "";
  const char* arg = argc > 3 ? argv[3] : NULL;
  long queries = argc > 2 ? atol(argv[2]) : 0;
  int i;
  if (argc < 3) {
    fprintf(stderr, "usage: stats_host MODE QUERIES [ARG]\n");
    return 2;
  }
  for (i = 0; i < KEYS; i++) {
    lengths[i] = (size_t)snprintf(storage[i], sizeof storage[i], "key%d", i);
    keys[i] = storage[i];
  }
  policy = leveldb_bloom_policy_create(10);
  CHECK(policy != NULL);
  filter = leveldb_bloom_create_filter(policy, keys, lengths, KEYS, &filter_length);
  CHECK(filter != NULL);
  ask(queries);
  printf("counting: %s\n", counted() == (uint64_t)queries ? "yes" : "no");
  printf("simd level: %s\n", leveldb_bloom_simd_level());
  CHECK(counted() == (uint64_t)queries || counted() == 0);

  if (strcmp(mode, "plain") == 0) {
    if (arg != NULL) CHECK(chdir(arg) == 0);
  } else if (strcmp(mode, "reuse-fd2") == 0 && arg != NULL) {
    CHECK(close(2) == 0);
    i = open(arg, O_WRONLY | O_APPEND);
    CHECK(i == 2);
    write_data(i);
  } else if (strcmp(mode, "steal-fd") == 0 && arg != NULL) {
    for (i = 3; i < 1024; i++) close(i);
    write_data(open(arg, O_WRONLY | O_APPEND));
  } else if (strcmp(mode, "wait") == 0) {
    char buffer[64];
    fflush(stdout);
    while (read(0, buffer, sizeof buffer) > 0) continue;
  } else if (strcmp(mode, "fork") == 0 && arg != NULL) {
    fork_children(atol(arg));
  } else {
    CHECK_THAT(0, "a known mode with its argument");
  }
  free(filter);
  leveldb_filterpolicy_destroy(policy);
  return check_report("stats_host");
}
