// Filter statistics through the C++ header: a LevelDB database whose policy is
// leveldb_bloom::NewBloomFilterPolicy (the explicit header), wrapped in a policy
// that records every call LevelDB makes. After writing, compacting and reading
// present and absent keys, leveldb_bloom::stats() equals the recorded counts.
//
// Usage: stats_cxx DIR   (reports as c_tests/check.h says)
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb_bloom.hpp>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>

#include "check.h"

// Passes every call on to `inner`, counting it.
class Recording : public leveldb::FilterPolicy {
 public:
  explicit Recording(const leveldb::FilterPolicy* inner) : inner_(inner) {}
  const char* Name() const override { return inner_->Name(); }
  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    built++;
    keys_added += static_cast<unsigned long>(n);
    inner_->CreateFilter(keys, n, dst);
  }
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    queries++;
    const bool answer = inner_->KeyMayMatch(key, filter);
    if (!answer) absent++;
    return answer;
  }
  mutable std::atomic<unsigned long> built{0}, keys_added{0}, queries{0}, absent{0};

 private:
  std::unique_ptr<const leveldb::FilterPolicy> inner_;
};

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: stats_cxx DIR\n");
    return 2;
  }
  leveldb_bloom::enable_stats();
  Recording recording(leveldb_bloom::NewBloomFilterPolicy(10));
  leveldb::Options options;
  options.create_if_missing = true;
  options.filter_policy = &recording;
  options.write_buffer_size = 64 << 10;
  leveldb::DB* db = nullptr;
  CHECK(leveldb::DB::Open(options, argv[1], &db).ok());
  const int keys = 20000;
  for (int i = 0; i < keys; i++) {
    const std::string key = "key" + std::to_string(i);
    CHECK_THAT(db->Put(leveldb::WriteOptions(), key, key).ok(), "put");
  }
  db->CompactRange(nullptr, nullptr);
  std::string value;
  for (int i = 0; i < keys; i++) {
    CHECK_THAT(db->Get(leveldb::ReadOptions(), "key" + std::to_string(i), &value).ok(), "present");
    CHECK_THAT(db->Get(leveldb::ReadOptions(), "key" + std::to_string(i) + "x", &value).IsNotFound(),
               "absent");
  }
  delete db;
  const leveldb_bloom_stats_t stats = leveldb_bloom::stats();
  std::printf("recorded: %lu queries, %lu absent, %lu filters built, %lu keys; "
              "stats: %llu queries, %llu absent, %llu filters built, %llu keys\n",
              recording.queries.load(), recording.absent.load(), recording.built.load(),
              recording.keys_added.load(), static_cast<unsigned long long>(stats.queries),
              static_cast<unsigned long long>(stats.absent),
              static_cast<unsigned long long>(stats.filters_built),
              static_cast<unsigned long long>(stats.keys_added));
  // Nearly every Get asks one filter (a few keys fall outside every table's range).
  CHECK(recording.queries * 100 >= 2 * keys * 99 && recording.absent * 100 >= keys * 95);
  CHECK(recording.built > 0);
  CHECK(stats.queries == recording.queries);
  CHECK(stats.absent == recording.absent);
  CHECK(stats.may_match == stats.queries - stats.absent);
  CHECK(stats.filters_built == recording.built);
  CHECK(stats.keys_added == recording.keys_added);
  leveldb_bloom::reset_stats();
  CHECK(leveldb_bloom::stats().queries == 0);
  return check_report("stats_cxx");
}
