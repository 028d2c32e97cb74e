/* A LevelDB database using libleveldb_bloom through the swap (linked with
 * -lleveldb_bloom before -lleveldb, so leveldb::NewBloomFilterPolicy is ours),
 * under one writer, concurrent readers and compactions. Every key written must be
 * found with its value, at any moment and at the end, and no key never written may
 * be: the filter must never cause a false negative.
 *
 * Usage: db_check MODE DIRECTORY
 *   concurrent       the workload as it is
 *   failing-filters  under LD_PRELOAD=libfailmalloc.so, every allocation of 3 bytes
 *                    or more by libleveldb_bloom fails
 *   failing-bursts   allocations by libleveldb_bloom fail two in a row, then two
 *                    succeed, and so on
 *                    (in both, the library must make no allocation at all while
 *                    LevelDB builds and queries its filters: the policy object
 *                    writes each filter into LevelDB's own string)
 * Prints what it checked; reports and exits as check.h says (the concurrent phase
 * is one check, folded in from the threads' counts; each read after it is one). */
#include "check.h"
#include "failmalloc.h"

#include <leveldb/db.h>
#include <leveldb/filter_policy.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>
#include <leveldb_bloom.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

const int kKeys = 30000;
const int kReaders = 4;

std::string key_of(int i) {
  char key[32];
  std::snprintf(key, sizeof key, "key%08d", (i * 7919) % 1000003); /* spread over the key space */
  return key;
}

std::string absent_key_of(int i) {
  char key[32];
  std::snprintf(key, sizeof key, "key%08dx", i); /* never written: an extra byte */
  return key;
}

std::string value_of(int i) {
  return std::to_string(i) + std::string(100, char('a' + i % 26));
}

struct Counts {
  std::atomic<long> found{0}, absent{0}, wrong{0};
};

/* Whether key i reads back with its value; counted either way. */
bool expect_found(leveldb::DB* db, int i, Counts& counts) {
  std::string value;
  const leveldb::Status status = db->Get(leveldb::ReadOptions(), key_of(i), &value);
  if (status.ok() && value == value_of(i)) {
    counts.found++;
    return true;
  }
  if (counts.wrong++ < 5) std::fprintf(stderr, "key %s: %s\n", key_of(i).c_str(), status.ToString().c_str());
  return false;
}

/* Whether absent key i is not found; counted either way. */
bool expect_absent(leveldb::DB* db, int i, Counts& counts) {
  std::string value;
  const leveldb::Status status = db->Get(leveldb::ReadOptions(), absent_key_of(i), &value);
  if (status.IsNotFound()) {
    counts.absent++;
    return true;
  }
  if (counts.wrong++ < 5) std::fprintf(stderr, "absent key %s: %s\n", absent_key_of(i).c_str(), status.ToString().c_str());
  return false;
}

/* Whether some table file names our policy in its metaindex: filters were written. */
bool tables_have_our_filters(const std::string& directory) {
  DIR* dir = opendir(directory.c_str());
  bool found = false;
  while (const dirent* entry = dir ? readdir(dir) : nullptr) {
    const std::string name = entry->d_name;
    if (name.size() < 4 || name.compare(name.size() - 4, 4, ".ldb") != 0) continue;
    std::ifstream file(directory + "/" + name, std::ios::binary);
    const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    found = found || bytes.find("filter.leveldb.BuiltinBloomFilter2") != std::string::npos;
  }
  if (dir) closedir(dir);
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const std::string mode = argv[1], directory = argv[2];
  if (leveldb_bloom_swap_status() != (LEVELDB_BLOOM_SWAP_C_API | LEVELDB_BLOOM_SWAP_CXX_API)) {
    std::fprintf(stderr, "the swap is not active (status %d): link -lleveldb_bloom before -lleveldb\n", leveldb_bloom_swap_status());
    return 2;
  }
  struct failmalloc shim {};
  const bool failing = mode != "concurrent";
  if (failing && !failmalloc_load(&shim)) {
    std::fprintf(stderr, "mode %s needs LD_PRELOAD=libfailmalloc.so\n", mode.c_str());
    return 2;
  }

  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(10));
  leveldb::Options options;
  options.create_if_missing = true;
  options.filter_policy = policy.get();
  options.write_buffer_size = 64 << 10; /* small tables: many flushes and compactions */
  options.max_file_size = 1 << 20;
  options.block_size = 1024;
  options.compression = leveldb::kNoCompression;
  leveldb::DestroyDB(directory, options);
  leveldb::DB* raw = nullptr;
  leveldb::Status status = leveldb::DB::Open(options, directory, &raw);
  if (!status.ok()) {
    std::fprintf(stderr, "open: %s\n", status.ToString().c_str());
    return 2;
  }
  std::unique_ptr<leveldb::DB> db(raw);
  if (failing) {
    void* library = dlsym(RTLD_DEFAULT, "leveldb_bloom_swap_status");
    const bool armed = mode == "failing-filters" ? shim.arm(library, 3, 0, 1, 0)
                       : mode == "failing-bursts" ? shim.arm(library, 0, 0, 2, 2)
                                                  : false;
    if (!armed) return 2;
  }

  Counts counts;
  std::atomic<int> written{0};
  std::atomic<bool> writing{true};
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    for (int i = 0; i < kKeys; i++) {
      if (!db->Put(leveldb::WriteOptions(), key_of(i), value_of(i)).ok()) counts.wrong++;
      written.store(i + 1, std::memory_order_release);
    }
    writing = false;
  });
  threads.emplace_back([&] { /* compactions over moving ranges while the others run */
    for (int round = 0; writing; round++) {
      const std::string begin = key_of(round * 997), end = key_of(round * 997 + 500);
      const leveldb::Slice b(begin), e(end);
      db->CompactRange(round % 4 == 0 ? nullptr : &b, round % 4 == 0 ? nullptr : &e);
    }
  });
  for (int r = 0; r < kReaders; r++) {
    threads.emplace_back([&, r] {
      std::mt19937 random(r);
      while (writing) {
        const int limit = written.load(std::memory_order_acquire);
        if (limit > 0) expect_found(db.get(), int(random() % limit), counts);
        expect_absent(db.get(), int(random() % kKeys), counts);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const long concurrent_reads = counts.found + counts.absent;
  CHECK_THAT(counts.wrong == 0, "every write and concurrent read right");
  CHECK_THAT(concurrent_reads > 0, "reads while writing");

  db->CompactRange(nullptr, nullptr);
  for (int i = 0; i < kKeys; i++) {
    CHECK_THAT(expect_found(db.get(), i, counts), "a written key found after the full compaction");
    CHECK_THAT(expect_absent(db.get(), i, counts), "an absent key not found after the full compaction");
  }
  if (failing) shim.disarm();
  std::string files; /* table files per level, to show compactions moved data down */
  for (int level = 0; level < 7; level++) {
    std::string count;
    db->GetProperty("leveldb.num-files-at-level" + std::to_string(level), &count);
    files += (level ? "/" : "") + count;
  }
  db.reset();
  const bool filters = tables_have_our_filters(directory);
  leveldb::DestroyDB(directory, options);

  std::printf("%s: %d keys, %d readers, %ld concurrent reads, %ld keys found, %ld absent keys not found, %ld wrong; "
              "table files per level %s; filters %s",
              mode.c_str(), kKeys, kReaders, concurrent_reads, counts.found.load(), counts.absent.load(),
              counts.wrong.load(), files.c_str(), filters ? "written" : "MISSING");
  if (failing) std::printf("; %ld allocations made to fail", shim.failures());
  std::printf("\n");
  CHECK_THAT(filters, "table files with our filters");
  if (failing) CHECK_THAT(shim.failures() == 0, "no allocation of the library while LevelDB uses it");
  return check_report("db_check");
}
