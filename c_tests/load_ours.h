/* Loads libleveldb_bloom with dlopen(RTLD_LOCAL) into a program linked to LevelDB,
   so that the names both libraries define (leveldb_filterpolicy_create_bloom,
   leveldb::NewBloomFilterPolicy...) keep resolving to LevelDB for the program, and
   ours are reached only through these pointers. Used by c_tests/batch_test.cc and
   benches/bench.cc. C++11. */
#ifndef LEVELDB_BLOOM_LOAD_OURS_H
#define LEVELDB_BLOOM_LOAD_OURS_H

#include <leveldb_bloom.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace load_ours {

struct Ours {
  void* library = nullptr;
  decltype(&leveldb_bloom_policy_create) policy_create = nullptr;
  decltype(&leveldb_bloom_policy_destroy) policy_destroy = nullptr;
  decltype(&leveldb_filterpolicy_create_filter) create_filter = nullptr;
  decltype(&leveldb_filterpolicy_key_may_match) key_may_match = nullptr;
  decltype(&leveldb_filterpolicy_key_may_match_batch) key_may_match_batch = nullptr;
  decltype(&leveldb_bloom_simd_level) simd_level = nullptr;

  template <typename F>
  void find(F* function, const char* name) {
    *function = reinterpret_cast<F>(dlsym(library, name));
    if (*function == nullptr) {
      std::fprintf(stderr, "no %s: %s\n", name, dlerror());
      std::exit(2);
    }
  }

  explicit Ours(const char* path) {
    library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) {
      std::fprintf(stderr, "cannot load %s: %s\n", path, dlerror());
      std::exit(2);
    }
    find(&policy_create, "leveldb_bloom_policy_create");
    find(&policy_destroy, "leveldb_bloom_policy_destroy");
    find(&create_filter, "leveldb_filterpolicy_create_filter");
    find(&key_may_match, "leveldb_filterpolicy_key_may_match");
    find(&key_may_match_batch, "leveldb_filterpolicy_key_may_match_batch");
    find(&simd_level, "leveldb_bloom_simd_level");
  }
};

/* The file of the loaded object that holds `address`. */
inline std::string object_of(const void* address) {
  Dl_info info;
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "?";
  return info.dli_fname;
}

/* The object holding the code of a C++ object's class: its vtable's object. */
inline std::string object_of_class(const void* object) {
  return object_of(*static_cast<void* const*>(object));
}

}  // namespace load_ours

#endif
