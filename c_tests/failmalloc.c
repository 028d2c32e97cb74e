/* An LD_PRELOAD shim that makes allocations fail on demand, to show what
 * libleveldb_bloom does when memory runs out.
 *
 * It replaces malloc, calloc, realloc, posix_memalign, aligned_alloc and free with
 * glibc's own (__libc_*), counting live allocations. Once armed, it watches the
 * requests made by code inside one chosen shared object of at least `min_size`
 * bytes: it lets `skip` of them through, then fails (NULL, errno ENOMEM) `burst` in a
 * row, lets `gap` through, and so on; with `gap` 0 it fails all after the skipped
 * ones. Every other allocation (the program's, LevelDB's, libc's) is untouched.
 *
 * A program run under the shim finds its controls with
 * dlsym(RTLD_DEFAULT, "failmalloc_arm") and so on (see failmalloc.h). */
#include "failmalloc.h"

#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

extern void* __libc_malloc(size_t size);
extern void* __libc_calloc(size_t count, size_t size);
extern void* __libc_realloc(void* pointer, size_t size);
extern void* __libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void* pointer);

/* The armed object's code, [start, end); end == 0 when disarmed. */
static uintptr_t armed_start, armed_end;
static size_t armed_min_size;
static long armed_skip, armed_burst, armed_gap, armed_seen;
static long failures, live;

struct range_search {
  uintptr_t address;
  uintptr_t start, end;
};

/* dl_iterate_phdr callback: the executable segments of the object holding `address`. */
static int find_object(struct dl_phdr_info* info, size_t size, void* data) {
  struct range_search* search = data;
  uintptr_t start = UINTPTR_MAX, end = 0;
  int i, holds = 0;
  (void)size;
  for (i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr)* segment = &info->dlpi_phdr[i];
    uintptr_t low = info->dlpi_addr + segment->p_vaddr, high = low + segment->p_memsz;
    if (segment->p_type != PT_LOAD) continue;
    if (low < start) start = low;
    if (high > end) end = high;
    if (search->address >= low && search->address < high) holds = 1;
  }
  if (!holds) return 0;
  search->start = start;
  search->end = end;
  return 1;
}

int failmalloc_arm(const void* address_in_object, size_t min_size, long skip, long burst, long gap) {
  struct range_search search = {(uintptr_t)address_in_object, 0, 0};
  if (!dl_iterate_phdr(find_object, &search)) return 0;
  __atomic_store_n(&armed_end, 0, __ATOMIC_SEQ_CST);
  armed_start = search.start;
  armed_min_size = min_size;
  armed_skip = skip;
  armed_burst = burst;
  armed_gap = gap;
  __atomic_store_n(&armed_seen, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&armed_end, search.end, __ATOMIC_SEQ_CST);
  return 1;
}

void failmalloc_disarm(void) { __atomic_store_n(&armed_end, 0, __ATOMIC_SEQ_CST); }

long failmalloc_failures(void) { return __atomic_load_n(&failures, __ATOMIC_SEQ_CST); }

long failmalloc_live(void) { return __atomic_load_n(&live, __ATOMIC_SEQ_CST); }

/* Whether this request, made from `caller`, is to fail. */
static int should_fail(const void* caller, size_t size) {
  uintptr_t end = __atomic_load_n(&armed_end, __ATOMIC_SEQ_CST), at = (uintptr_t)caller;
  long seen;
  if (end == 0 || at < armed_start || at >= end || size < armed_min_size) return 0;
  seen = __atomic_fetch_add(&armed_seen, 1, __ATOMIC_SEQ_CST) - armed_skip;
  if (seen < 0 || (armed_gap > 0 && seen % (armed_burst + armed_gap) >= armed_burst)) return 0;
  __atomic_fetch_add(&failures, 1, __ATOMIC_SEQ_CST);
  errno = ENOMEM;
  return 1;
}

static void* counted(void* pointer) {
  if (pointer != NULL) __atomic_fetch_add(&live, 1, __ATOMIC_SEQ_CST);
  return pointer;
}

void* malloc(size_t size) {
  if (should_fail(__builtin_return_address(0), size)) return NULL;
  return counted(__libc_malloc(size));
}

void* calloc(size_t count, size_t size) {
  /* The size that matters is the total; an overflowing product is glibc's to refuse. */
  size_t total = count * size;
  if (should_fail(__builtin_return_address(0), total)) return NULL;
  return counted(__libc_calloc(count, size));
}

void* realloc(void* pointer, size_t size) {
  void* moved;
  if (should_fail(__builtin_return_address(0), size)) return NULL;
  moved = __libc_realloc(pointer, size);
  if (pointer == NULL) return counted(moved);
  if (size == 0 && moved == NULL) __atomic_fetch_sub(&live, 1, __ATOMIC_SEQ_CST); /* freed */
  return moved;
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  void* pointer;
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  if (should_fail(__builtin_return_address(0), size)) return ENOMEM;
  pointer = counted(__libc_memalign(alignment, size));
  if (pointer == NULL) return ENOMEM;
  *out = pointer;
  return 0;
}

void* aligned_alloc(size_t alignment, size_t size) {
  if (should_fail(__builtin_return_address(0), size)) return NULL;
  return counted(__libc_memalign(alignment, size));
}

void free(void* pointer) {
  if (pointer != NULL) __atomic_fetch_sub(&live, 1, __ATOMIC_SEQ_CST);
  __libc_free(pointer);
}
