// A C++ program whose only LevelDB symbol is leveldb::NewBloomFilterPolicy, as
// LevelDB's own util/bloom_test.cc: linked `-lleveldb_bloom -lleveldb` under
// Debian's default --as-needed, it does not need libleveldb at all, since
// libleveldb_bloom defines that symbol. Prints the filter its policy builds for a
// few keys (compared with a stock build's by the test), whether LevelDB was loaded
// before and after the first policy (libleveldb_bloom never loads it), and the swap
// status; each key of the filter matching is a check, reported as check.h says.
// Exits 3, without a report, when NewBloomFilterPolicy returns NULL.
#include <dlfcn.h>
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"

namespace {

bool leveldb_loaded() { return dlopen("libleveldb.so.1d", RTLD_LAZY | RTLD_NOLOAD) != nullptr; }

std::string swap_status() {
  void* symbol = dlsym(RTLD_DEFAULT, "leveldb_bloom_swap_status");
  if (symbol == nullptr) return "absent";
  int (*status)();
  std::memcpy(&status, &symbol, sizeof status);
  return std::to_string(status());
}

}  // namespace

int main() {
  std::printf("leveldb loaded before: %s\n", leveldb_loaded() ? "yes" : "no");
  const leveldb::FilterPolicy* policy = leveldb::NewBloomFilterPolicy(10);
  const leveldb::FilterPolicy* again = leveldb::NewBloomFilterPolicy(10);
  if (policy == nullptr || again == nullptr) {
    std::printf("NewBloomFilterPolicy returned NULL\n");
    return 3;
  }
  std::printf("leveldb loaded after: %s\n", leveldb_loaded() ? "yes" : "no");
  std::printf("swap status: %s\n", swap_status().c_str());
  std::printf("name: %s\n", policy->Name());
  std::vector<std::string> keys;
  for (int i = 0; i < 100; i++) keys.push_back("key " + std::to_string(i * i));
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string filter;
  policy->CreateFilter(slices.data(), static_cast<int>(slices.size()), &filter);
  std::printf("filter:");
  for (unsigned char byte : filter) std::printf(" %02x", byte);
  std::printf("\n");
  int missed = 0, rejected = 0;
  for (const std::string& key : keys)
    missed += !CHECK_THAT(policy->KeyMayMatch(key, filter), "a key of the filter matches");
  for (int i = 0; i < 1000; i++) rejected += !policy->KeyMayMatch("absent " + std::to_string(i), filter);
  std::printf("missed: %d, absent rejected: %d of 1000\n", missed, rejected);
  delete policy;
  delete again;
  return check_report("as_needed");
}
