/* Assertions shared by the C and C++ harnesses: a failed CHECK prints where and
   what, and the harness keeps going so one run shows every failure; main returns
   check_exit_code(). Compiles as C99 and C++11. */
#ifndef LEVELDB_BLOOM_CHECK_H
#define LEVELDB_BLOOM_CHECK_H

#include <stdio.h>

static int check_failures = 0;

/* Counts and reports a failure when `ok` is 0; returns `ok`. */
static inline int check_at(int ok, const char* what, const char* file, int line) {
  if (!ok) {
    check_failures++;
    fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, what);
  }
  return ok;
}

#define CHECK(condition) check_at((condition) ? 1 : 0, #condition, __FILE__, __LINE__)

/* Prints `length` bytes in hex to stderr, after a label: context for a failure. */
static inline void check_dump(const char* label, const void* bytes, size_t length) {
  const unsigned char* p = (const unsigned char*)bytes;
  size_t i;
  fprintf(stderr, "  %s (%zu bytes):", label, length);
  for (i = 0; i < length && i < 64; i++) fprintf(stderr, " %02x", p[i]);
  fprintf(stderr, "%s\n", length > 64 ? " ..." : "");
}

/* 0 when every CHECK held, 1 otherwise (with a summary on stderr). */
static inline int check_exit_code(void) {
  if (check_failures != 0) fprintf(stderr, "%d check(s) failed\n", check_failures);
  return check_failures == 0 ? 0 : 1;
}

#endif
