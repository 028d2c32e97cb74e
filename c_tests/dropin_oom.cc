// LevelDB's CreateFilter on a swapped policy when libleveldb_bloom cannot allocate:
// LevelDB stores whatever the callback returns, so it must never get an empty filter
// (which answers "absent" for every key). Linked -lleveldb_bloom -lleveldb and run
// under the failmalloc shim (LD_PRELOAD), which fails libleveldb_bloom's allocations
// on demand.
//
//   dropin_oom reserve   each failure gets the match-all filter 00 FF, also after a
//                        successful call refilled the reserve; reports as check.h says
//   dropin_oom abort     two failures in a row: the process aborts with a message
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>
#include <leveldb_bloom.hpp>

#include "check.h"
#include "failmalloc.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

static struct failmalloc shim;

static const void* bloom_library() {
  int (*function)(void) = leveldb_bloom_swap_status;
  const void* address;
  std::memcpy(&address, &function, sizeof address);
  return address;
}

// CreateFilter while every allocation of libleveldb_bloom fails.
static std::string starved_filter(const leveldb::FilterPolicy& policy,
                                  const std::vector<leveldb::Slice>& keys) {
  std::string filter;
  shim.arm(bloom_library(), 0, 0, 1, 0);  // every allocation fails
  policy.CreateFilter(keys.data(), static_cast<int>(keys.size()), &filter);
  shim.disarm();
  return filter;
}

int main(int argc, char** argv) {
  if (argc != 2 || !failmalloc_load(&shim)) return 2;
  CHECK_THAT((leveldb_bloom_swap_status() & LEVELDB_BLOOM_SWAP_CXX_API) != 0, "swapped");
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  std::vector<std::string> storage;
  for (int i = 0; i < 100; i++) storage.push_back("key" + std::to_string(i));
  std::vector<leveldb::Slice> keys(storage.begin(), storage.end());

  if (std::strcmp(argv[1], "abort") == 0) {
    starved_filter(*policy, keys);
    starved_filter(*policy, keys);  // the reserve is spent: aborts
    std::printf("not aborted\n");
    return 1;
  }

  const std::string match_all("\x00\xff", 2);
  const std::string real = leveldb_bloom::Policy(10).create_filter(storage);
  for (int round = 0; round < 3; round++) {
    CHECK_THAT(starved_filter(*policy, keys) == match_all, "starved: match-all filter");
    std::string filter;
    policy->CreateFilter(keys.data(), static_cast<int>(keys.size()), &filter);
    CHECK_THAT(filter == real, "fed again: the real filter (and the reserve refilled)");
  }
  const std::string starved = starved_filter(*policy, keys);
  for (const leveldb::Slice& key : keys)
    CHECK_THAT(policy->KeyMayMatch(key, starved), "the match-all filter matches every key");
  return check_report("dropin_oom");
}
