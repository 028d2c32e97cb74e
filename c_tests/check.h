/* The one check helper of the C and C++ harnesses, and their one pass protocol.

   CHECK(condition) counts a check; when the condition is false it counts a failure
   and prints where and what on stderr, and the harness keeps going so one run shows
   every failure. CHECK_THAT(condition, what) is the same with a description instead
   of the condition's text. Both return whether the condition held.
   check_context(text) names what the following checks are about (a round, a case);
   a failure report shows it.

   main ends with `return check_report("NAME");`, which prints the harness's one
   summary line on stdout,

     NAME: N checks, F failed

   and returns the exit status: 0 only when F is 0 and N is not (a harness that
   checked nothing did not pass). Harnesses may print other lines (what they
   compared, swap status, ...); success is judged by this line and the exit status
   alone (tests/suite/common/harness.rs).

   Single-threaded: threads count their own results, and the main thread folds them
   into CHECKs after joining them. Compiles as C99 and C++11. */
#ifndef LEVELDB_BLOOM_CHECK_H
#define LEVELDB_BLOOM_CHECK_H

#include <stdio.h>

static long check_count = 0;
static long check_failures = 0;
static const char* check_context_text = NULL;

/* Failures printed in full; the rest are counted only. */
#define CHECK_PRINT_LIMIT 100

/* Shown with each failure until changed; NULL for none. `text` must stay valid. */
static inline void check_context(const char* text) { check_context_text = text; }

/* Counts a check, and a failure when `ok` is 0 (reported with `what`); returns `ok`. */
static inline int check_at(int ok, const char* what, const char* file, int line) {
  check_count++;
  if (!ok) {
    check_failures++;
    if (check_failures <= CHECK_PRINT_LIMIT)
      fprintf(stderr, "%s:%d: CHECK failed: %s%s%s%s\n", file, line, what,
              check_context_text != NULL ? " (" : "",
              check_context_text != NULL ? check_context_text : "",
              check_context_text != NULL ? ")" : "");
    else if (check_failures == CHECK_PRINT_LIMIT + 1)
      fprintf(stderr, "(further failed checks not shown)\n");
  }
  return ok;
}

#ifdef __cplusplus
#include <string>
/* C++: a description built as a std::string. */
static inline int check_at(int ok, const std::string& what, const char* file, int line) {
  return check_at(ok, what.c_str(), file, line);
}
#endif

#define CHECK(condition) check_at((condition) ? 1 : 0, #condition, __FILE__, __LINE__)
#define CHECK_THAT(condition, what) check_at((condition) ? 1 : 0, (what), __FILE__, __LINE__)

/* Prints `length` bytes in hex to stderr, after a label: context for a failure. */
static inline void check_dump(const char* label, const void* bytes, size_t length) {
  const unsigned char* p = (const unsigned char*)bytes;
  size_t i;
  fprintf(stderr, "  %s (%zu bytes):", label, length);
  for (i = 0; i < length && i < 64; i++) fprintf(stderr, " %02x", p[i]);
  fprintf(stderr, "%s\n", length > 64 ? " ..." : "");
}

/* Prints "NAME: N checks, F failed" and returns the exit status: 0 when every one
   of at least one check held, 1 otherwise. */
static inline int check_report(const char* name) {
  printf("%s: %ld checks, %ld failed\n", name, check_count, check_failures);
  fflush(stdout);
  return check_failures == 0 && check_count > 0 ? 0 : 1;
}

#endif
