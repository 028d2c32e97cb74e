/* libleveldb_bloom and the real LevelDB side by side in one process, kept apart.
 *
 * libleveldb_bloom exports some of the same names as LevelDB (its C API's
 * leveldb_filterpolicy_* and the C++ leveldb::NewBloomFilterPolicy), so a program
 * linking both could call one while meaning the other. Here the program links only
 * LevelDB (-lleveldb) and calls it through its C++ API; libleveldb_bloom is opened
 * with dlopen(RTLD_LOCAL), so none of its names enter the global scope, and its
 * functions are taken with dlsym on its own handle. Loading proves with dladdr that
 * every function comes from the object it should, and dies otherwise.
 *
 * Used by the reference, batch, bad-input and fuzz harnesses and by the benchmark.
 * Header-only, C++11. */
#ifndef LEVELDB_BLOOM_TESTS_LOAD_OURS_H
#define LEVELDB_BLOOM_TESTS_LOAD_OURS_H

#include <dlfcn.h>
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>
#include <leveldb_bloom.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace load_ours {

[[noreturn]] inline void die(const char* what, const char* detail) {
  std::fprintf(stderr, "load_ours: %s: %s\n", what, detail ? detail : "");
  std::abort();
}

/* The file the loader says `address` lies in, or "?". */
inline std::string object_of(const void* address) {
  Dl_info info;
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "?";
  return info.dli_fname;
}

/* The object holding the code of a C++ object's class: its vtable's object (by the
   Itanium C++ ABI, the vtable pointer is the object's first word). */
inline std::string object_of_class(const void* object) {
  return object_of(*static_cast<const void* const*>(object));
}

/* Every function of libleveldb_bloom's C API, as found in that library. */
struct Ours {
  decltype(&leveldb_filterpolicy_create_bloom) create_bloom = nullptr;
  decltype(&leveldb_bloom_policy_create) policy_create = nullptr;
  decltype(&leveldb_bloom_legacy_policy_create) legacy_create = nullptr;
  decltype(&leveldb_filterpolicy_destroy) destroy = nullptr;
  decltype(&leveldb_bloom_policy_destroy) policy_destroy = nullptr;
  decltype(&leveldb_filterpolicy_name) name = nullptr;
  decltype(&leveldb_filterpolicy_create_filter) create_filter = nullptr;
  decltype(&leveldb_filterpolicy_key_may_match) key_may_match = nullptr;
  decltype(&leveldb_filterpolicy_key_may_match_batch) key_may_match_batch = nullptr;
  decltype(&leveldb_bloom_filter_length) filter_length = nullptr;
  decltype(&leveldb_bloom_write_filter) write_filter = nullptr;
  decltype(&leveldb_bloom_swap_status) swap_status = nullptr;
  decltype(&leveldb_bloom_simd_level) simd_level = nullptr;
  decltype(&leveldb_bloom_stats_enable) stats_enable = nullptr;

  Ours() = default;

  /* Opens the library at `path` privately. Dies unless every function comes from it
     and leveldb::NewBloomFilterPolicy, as this program and the global scope see it,
     comes from another object, the real libleveldb. With `report`, prints where each
     side was found. */
  explicit Ours(const char* path, bool report = false) {
    void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == nullptr) die("dlopen failed", dlerror());
    void* anchor = dlsym(library, "leveldb_bloom_policy_create");
    if (anchor == nullptr) die("not libleveldb_bloom", path);
    const std::string ours = object_of(anchor);

    find(library, "leveldb_filterpolicy_create_bloom", ours, &create_bloom);
    find(library, "leveldb_bloom_policy_create", ours, &policy_create);
    find(library, "leveldb_bloom_legacy_policy_create", ours, &legacy_create);
    find(library, "leveldb_filterpolicy_destroy", ours, &destroy);
    find(library, "leveldb_bloom_policy_destroy", ours, &policy_destroy);
    find(library, "leveldb_filterpolicy_name", ours, &name);
    find(library, "leveldb_filterpolicy_create_filter", ours, &create_filter);
    find(library, "leveldb_filterpolicy_key_may_match", ours, &key_may_match);
    find(library, "leveldb_filterpolicy_key_may_match_batch", ours, &key_may_match_batch);
    find(library, "leveldb_bloom_filter_length", ours, &filter_length);
    find(library, "leveldb_bloom_write_filter", ours, &write_filter);
    find(library, "leveldb_bloom_swap_status", ours, &swap_status);
    find(library, "leveldb_bloom_simd_level", ours, &simd_level);
    find(library, "leveldb_bloom_stats_enable", ours, &stats_enable);

    const std::string leveldb = object_of(reinterpret_cast<void*>(&leveldb::NewBloomFilterPolicy));
    void* global = dlsym(RTLD_DEFAULT, "_ZN7leveldb20NewBloomFilterPolicyEi");
    if (global == nullptr || object_of(global) != leveldb)
      die("global NewBloomFilterPolicy is not LevelDB's", nullptr);
    if (leveldb == ours || leveldb.find("libleveldb.so") == std::string::npos)
      die("leveldb::NewBloomFilterPolicy does not come from libleveldb", leveldb.c_str());
    if (report)
      std::fprintf(stderr, "load_ours: libleveldb_bloom from %s; leveldb::NewBloomFilterPolicy from %s\n",
                   ours.c_str(), leveldb.c_str());
  }

  /* The library named by $LEVELDB_BLOOM_LIB, for programs that take no arguments (the
     fuzzer). */
  static Ours from_environment(bool report) {
    const char* path = std::getenv("LEVELDB_BLOOM_LIB");
    if (path == nullptr) die("set LEVELDB_BLOOM_LIB to libleveldb_bloom.so", nullptr);
    return Ours(path, report);
  }

 private:
  template <typename Function>
  static void find(void* library, const char* name, const std::string& object, Function* out) {
    void* symbol = dlsym(library, name);
    if (symbol == nullptr) die("missing symbol", name);
    if (object_of(symbol) != object) die("symbol from the wrong object", name);
    *out = reinterpret_cast<Function>(symbol);
  }
};

/* A set of keys in the forms both sides take: the C arrays of pointers and lengths
   for libleveldb_bloom, Slices for LevelDB. The strings must outlive it. */
struct CKeys {
  std::vector<const char*> pointers;
  std::vector<size_t> lengths;
  std::vector<leveldb::Slice> slices;
  explicit CKeys(const std::vector<std::string>& keys) {
    for (const std::string& key : keys) {
      pointers.push_back(key.data());
      lengths.push_back(key.size());
      slices.emplace_back(key);
    }
  }
};

/* Whether the hash's two readings of `key` can differ: one of its last size % 4
   bytes is >= 0x80. The legacy policy then sets and tries the signed reading's bits
   too, so its answers may be "may match" where LevelDB's are "absent". */
inline bool tail_is_ambiguous(const std::string& key) {
  for (size_t i = key.size() - key.size() % 4; i < key.size(); i++)
    if (static_cast<unsigned char>(key[i]) >= 0x80) return true;
  return false;
}

}  // namespace load_ours

#endif
