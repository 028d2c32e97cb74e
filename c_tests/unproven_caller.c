/* A C program with no LevelDB loaded, which shows no std::string ABI (it uses no
   libstdc++), calling the CreateFilter of leveldb_bloom_policy_create's policy object
   itself, through its vtable, with a read-only page as the string. Nothing proved a
   string's layout when the policy was made, so the policy must not write it: the
   process ends with SIGABRT (said on stderr), not SIGSEGV, and never prints
   "returned". Run by tests/suite/decided_once.rs. */
#include <leveldb_bloom.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

struct slice {
  const char* data;
  size_t size;
};

typedef void (*create_filter_fn)(const void* policy, const struct slice* keys, int n, void* dst);

int main(void) {
  leveldb_filterpolicy_t* policy = leveldb_bloom_policy_create(10);
  void* const* vtable;
  create_filter_fn create_filter;
  struct slice key = {"key", 3};
  void* string = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (policy == NULL || string == MAP_FAILED) return 1;
  /* Itanium C++ ABI: the destructors, Name, then CreateFilter. */
  memcpy(&vtable, policy, sizeof vtable);
  memcpy(&create_filter, &vtable[3], sizeof create_filter);
  create_filter(policy, &key, 1, string);
  printf("returned\n");
  return 0;
}
