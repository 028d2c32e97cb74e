/* A test-only allocator shim: between fail_alloc_start(address) and fail_alloc_stop(),
   malloc and calloc return NULL to every caller inside the shared object that holds
   `address`, and work normally for everyone else. Linked into a test program ahead of
   libc, it replaces their definitions for the whole process. */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>

void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);

void fail_alloc_start(const void* address);
void fail_alloc_stop(void);

static void* failing_object; /* load address of the object whose allocations fail */

void fail_alloc_start(const void* address) {
  Dl_info info;
  failing_object = dladdr(address, &info) != 0 ? info.dli_fbase : NULL;
}

void fail_alloc_stop(void) { failing_object = NULL; }

static int fails(const void* caller) {
  Dl_info info;
  return failing_object != NULL && dladdr(caller, &info) != 0 &&
         info.dli_fbase == failing_object;
}

void* malloc(size_t size) {
  if (fails(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_malloc(size);
}

void* calloc(size_t count, size_t size) {
  if (fails(__builtin_return_address(0))) {
    errno = ENOMEM;
    return NULL;
  }
  return __libc_calloc(count, size);
}
