// LevelDB's CreateFilter on a swapped policy when memory runs out. The policy
// object sizes the filter, grows LevelDB's string by that much and writes the filter
// in place, as LevelDB's own bloom.cc does, so:
//
//   dropin_oom library   every allocation of libleveldb_bloom fails: the real filter
//                        is still appended (building one allocates nothing), and
//                        every key matches it; reports as check.h says
//   dropin_oom string    the string's own growth fails (libstdc++'s allocations):
//                        CreateFilter throws std::bad_alloc and leaves the string as
//                        it was, exactly as LevelDB's own policy does
//
// Linked -lleveldb_bloom -lleveldb and run under the failmalloc shim (LD_PRELOAD),
// which fails the allocations of a chosen object on demand.
#include <dlfcn.h>
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>
#include <leveldb_bloom.hpp>

#include "check.h"
#include "failmalloc.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

static struct failmalloc shim;

template <typename Function>
static const void* address_of(Function function) {
  const void* address;
  std::memcpy(&address, &function, sizeof address);
  return address;
}

// CreateFilter onto `filter` while every allocation of the object holding `object`
// fails; whether it threw std::bad_alloc.
static bool create_starved(const leveldb::FilterPolicy& policy, const void* object,
                           const std::vector<leveldb::Slice>& keys, std::string* filter) {
  bool threw = false;
  shim.arm(object, 0, 0, 1, 0);  // every allocation fails
  try {
    policy.CreateFilter(keys.data(), static_cast<int>(keys.size()), filter);
  } catch (const std::bad_alloc&) {
    threw = true;
  }
  shim.disarm();
  return threw;
}

// LevelDB's own policy, from libleveldb itself (the program's name is swapped).
static const leveldb::FilterPolicy* stock_policy(int bits_per_key) {
  void* leveldb = dlopen("libleveldb.so.1d", RTLD_NOW | RTLD_NOLOAD);
  void* symbol = leveldb ? dlsym(leveldb, "_ZN7leveldb20NewBloomFilterPolicyEi") : nullptr;
  if (symbol == nullptr) return nullptr;
  const leveldb::FilterPolicy* (*make)(int);
  std::memcpy(&make, &symbol, sizeof make);
  return make(bits_per_key);
}

int main(int argc, char** argv) {
  if (argc != 2 || !failmalloc_load(&shim)) return 2;
  CHECK_THAT((leveldb_bloom_swap_status() & LEVELDB_BLOOM_SWAP_CXX_API) != 0, "swapped");
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  std::vector<std::string> storage;
  for (int i = 0; i < 100; i++) storage.push_back("key" + std::to_string(i));
  std::vector<leveldb::Slice> keys(storage.begin(), storage.end());
  const std::string prefix = "filters so far:";

  if (std::strcmp(argv[1], "string") == 0) {
    std::unique_ptr<const leveldb::FilterPolicy> stock(stock_policy(10));
    CHECK_THAT(stock != nullptr, "LevelDB's own policy found");
    if (stock == nullptr) return check_report("dropin_oom");
    const void* libstdcxx = address_of(&std::set_new_handler);
    for (const leveldb::FilterPolicy* each : {policy.get(), stock.get()}) {
      std::string filter = prefix;
      CHECK_THAT(create_starved(*each, libstdcxx, keys, &filter), "the string's growth throws");
      CHECK_THAT(filter == prefix, "the string is left as it was");
    }
    return check_report("dropin_oom");
  }

  const std::string real = leveldb_bloom::Policy(10).create_filter(storage);
  const void* library = address_of(&leveldb_bloom_swap_status);
  for (int round = 0; round < 3; round++) {
    std::string filter = prefix;
    CHECK_THAT(!create_starved(*policy, library, keys, &filter), "starved: nothing thrown");
    CHECK_THAT(filter == prefix + real, "starved: the real filter, appended");
    const leveldb::Slice appended(filter.data() + prefix.size(), real.size());
    for (const leveldb::Slice& key : keys)
      CHECK_THAT(policy->KeyMayMatch(key, appended), "every key matches it");
  }
  CHECK_THAT(shim.failures() == 0, "building a filter allocates nothing in the library");
  return check_report("dropin_oom");
}
