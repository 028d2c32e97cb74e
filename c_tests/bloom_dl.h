/* libleveldb_bloom and the real LevelDB side by side in one process, kept apart.
 *
 * libleveldb_bloom exports some of the same names as LevelDB (its C API's
 * leveldb_filterpolicy_* and the C++ leveldb::NewBloomFilterPolicy), so a program
 * linking both could call one while meaning the other. Here the program links only
 * LevelDB (-lleveldb) and calls it through its C++ API; libleveldb_bloom is opened
 * with dlopen(RTLD_LOCAL), so none of its names enter the global scope, and its
 * functions are taken with dlsym on its own handle. load_bloom() proves with dladdr
 * that every function comes from the object it should. Header-only, C++11. */
#ifndef LEVELDB_BLOOM_TESTS_BLOOM_DL_H
#define LEVELDB_BLOOM_TESTS_BLOOM_DL_H

#include <dlfcn.h>
#include <leveldb/filter_policy.h>
#include <leveldb_bloom.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

/* Every function of libleveldb_bloom's C API, as found in that library. */
struct Bloom {
  decltype(&leveldb_bloom_policy_create) policy_create;
  decltype(&leveldb_filterpolicy_create_bloom) create_bloom;
  decltype(&leveldb_filterpolicy_destroy) destroy;
  decltype(&leveldb_bloom_policy_destroy) policy_destroy;
  decltype(&leveldb_filterpolicy_name) name;
  decltype(&leveldb_filterpolicy_create_filter) create_filter;
  decltype(&leveldb_filterpolicy_key_may_match) key_may_match;
  decltype(&leveldb_bloom_filter_length) filter_length;
  decltype(&leveldb_bloom_write_filter) write_filter;
  decltype(&leveldb_bloom_swap_status) swap_status;
};

[[noreturn]] inline void bloom_dl_die(const char* what, const char* detail) {
  std::fprintf(stderr, "bloom_dl: %s: %s\n", what, detail ? detail : "");
  std::abort();
}

/* The file the loader says `address` lies in. */
inline std::string bloom_dl_object_of(const void* address) {
  Dl_info info;
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) bloom_dl_die("dladdr failed", nullptr);
  return info.dli_fname;
}

template <typename Function>
inline void bloom_dl_symbol(void* library, const char* name, const std::string& object, Function* out) {
  void* symbol = dlsym(library, name);
  if (symbol == nullptr) bloom_dl_die("missing symbol", name);
  if (bloom_dl_object_of(symbol) != object) bloom_dl_die("symbol from the wrong object", name);
  *out = reinterpret_cast<Function>(symbol);
}

/* Opens the library named by $LEVELDB_BLOOM_LIB privately. Aborts unless every
 * function comes from it and LevelDB's NewBloomFilterPolicy, as this program and the
 * global scope see it, comes from another object (the real libleveldb). When `report`
 * is set, prints where each side was found. */
inline Bloom load_bloom(bool report) {
  const char* path = std::getenv("LEVELDB_BLOOM_LIB");
  if (path == nullptr) bloom_dl_die("set LEVELDB_BLOOM_LIB to libleveldb_bloom.so", nullptr);
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) bloom_dl_die("dlopen failed", dlerror());
  void* anchor = dlsym(library, "leveldb_bloom_policy_create");
  if (anchor == nullptr) bloom_dl_die("not libleveldb_bloom", path);
  const std::string ours = bloom_dl_object_of(anchor);

  Bloom bloom;
  bloom_dl_symbol(library, "leveldb_bloom_policy_create", ours, &bloom.policy_create);
  bloom_dl_symbol(library, "leveldb_filterpolicy_create_bloom", ours, &bloom.create_bloom);
  bloom_dl_symbol(library, "leveldb_filterpolicy_destroy", ours, &bloom.destroy);
  bloom_dl_symbol(library, "leveldb_bloom_policy_destroy", ours, &bloom.policy_destroy);
  bloom_dl_symbol(library, "leveldb_filterpolicy_name", ours, &bloom.name);
  bloom_dl_symbol(library, "leveldb_filterpolicy_create_filter", ours, &bloom.create_filter);
  bloom_dl_symbol(library, "leveldb_filterpolicy_key_may_match", ours, &bloom.key_may_match);
  bloom_dl_symbol(library, "leveldb_bloom_filter_length", ours, &bloom.filter_length);
  bloom_dl_symbol(library, "leveldb_bloom_write_filter", ours, &bloom.write_filter);
  bloom_dl_symbol(library, "leveldb_bloom_swap_status", ours, &bloom.swap_status);

  const std::string leveldb = bloom_dl_object_of(reinterpret_cast<void*>(&leveldb::NewBloomFilterPolicy));
  void* global = dlsym(RTLD_DEFAULT, "_ZN7leveldb20NewBloomFilterPolicyEi");
  if (global == nullptr || bloom_dl_object_of(global) != leveldb) bloom_dl_die("global NewBloomFilterPolicy is not LevelDB's", nullptr);
  if (leveldb == ours || leveldb.find("libleveldb.so") == std::string::npos)
    bloom_dl_die("leveldb::NewBloomFilterPolicy does not come from libleveldb", leveldb.c_str());
  if (report) std::fprintf(stderr, "bloom_dl: libleveldb_bloom from %s; leveldb::NewBloomFilterPolicy from %s\n", ours.c_str(), leveldb.c_str());
  return bloom;
}

#endif
