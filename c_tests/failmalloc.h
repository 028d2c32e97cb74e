/* Controls of the failmalloc shim (c_tests/failmalloc.c). A program run with
 * LD_PRELOAD=libfailmalloc.so gets them with failmalloc_load(). C99 and C++11. */
#ifndef LEVELDB_BLOOM_TESTS_FAILMALLOC_H
#define LEVELDB_BLOOM_TESTS_FAILMALLOC_H

#include <dlfcn.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* From now on, watch the allocations requested by code of the shared object that
   holds `address_in_object` of at least `min_size` bytes: let `skip` through, then
   fail `burst` in a row and let `gap` through, again and again; `gap` 0 fails all
   after the skipped ones. Returns 0 if no loaded object holds the address. */
int failmalloc_arm(const void* address_in_object, size_t min_size, long skip, long burst, long gap);
/* Stop failing allocations. */
void failmalloc_disarm(void);
/* How many allocations have failed so far. */
long failmalloc_failures(void);
/* Allocations made and not yet freed, by anyone in the process. */
long failmalloc_live(void);

#ifdef __cplusplus
}
#endif

struct failmalloc {
  int (*arm)(const void*, size_t, long, long, long);
  void (*disarm)(void);
  long (*failures)(void);
  long (*live)(void);
};

/* The shim's controls; 0 when the program does not run under the shim. */
static inline int failmalloc_load(struct failmalloc* shim) {
  *(void**)&shim->arm = dlsym(RTLD_DEFAULT, "failmalloc_arm");
  *(void**)&shim->disarm = dlsym(RTLD_DEFAULT, "failmalloc_disarm");
  *(void**)&shim->failures = dlsym(RTLD_DEFAULT, "failmalloc_failures");
  *(void**)&shim->live = dlsym(RTLD_DEFAULT, "failmalloc_live");
  return shim->arm != NULL && shim->disarm != NULL && shim->failures != NULL && shim->live != NULL;
}

#endif
