// An ordinary program on LevelDB's C++ API with its built-in bloom policy,
// leveldb::NewBloomFilterPolicy(10): nothing in it knows about leveldb-bloom. The
// tests build it stock (-lleveldb), relinked (-lleveldb_bloom -lleveldb) and run it
// with LD_PRELOAD=libleveldb_bloom.so. Built with -DEXPLICIT_HEADER it is the same
// program written for leveldb-bloom's C++ header, leveldb_bloom::NewBloomFilterPolicy,
// and checks that the policy is the library's own object; with -DWRAPPED_POLICY, the
// policy is LevelDB's documented wrapper of the built-in one (wrapper_policy.cc).
// See dropin_data.h for what it writes.
#include <leveldb/db.h>
#include <leveldb/filter_policy.h>

#include <memory>
#include <string>

#ifdef EXPLICIT_HEADER
#include <leveldb_bloom.hpp>
#define NEW_BLOOM_FILTER_POLICY leveldb_bloom::NewBloomFilterPolicy
#elif defined(WRAPPED_POLICY)
const leveldb::FilterPolicy* NewWrappedBloomFilterPolicy(int bits_per_key);
#define NEW_BLOOM_FILTER_POLICY NewWrappedBloomFilterPolicy
#else
#define NEW_BLOOM_FILTER_POLICY leveldb::NewBloomFilterPolicy
#endif

#include "dropin_data.h"

struct dropin_db {
  std::unique_ptr<const leveldb::FilterPolicy> policy;
  std::unique_ptr<leveldb::DB> db;  // declared last: closed before the policy goes
};

static void check(const leveldb::Status& status, const char* what) {
  dropin_check(what, status.ok() ? nullptr : status.ToString().c_str());
}

static dropin_db* dropin_db_open(const char* dir) {
  std::unique_ptr<dropin_db> db(new dropin_db);
  if (DROPIN_BITS_PER_KEY > 0) db->policy.reset(NEW_BLOOM_FILTER_POLICY(DROPIN_BITS_PER_KEY));
#ifdef EXPLICIT_HEADER
  // The header's policy is the library's own object: one of its handles.
  const void* handle = db->policy.get();
  dropin_check("the header's policy is the library's object",
               leveldb_bloom_policy_name(static_cast<const leveldb_filterpolicy_t*>(handle)) ==
                       nullptr
                   ? "not a handle of libleveldb_bloom's"
                   : nullptr);
#endif
  leveldb::Options options;
  options.create_if_missing = true;
  options.filter_policy = db->policy.get();
  options.write_buffer_size = DROPIN_WRITE_BUFFER_SIZE;
  options.max_file_size = DROPIN_MAX_FILE_SIZE;
  leveldb::DB* opened = nullptr;
  check(leveldb::DB::Open(options, dir, &opened), "open");
  db->db.reset(opened);
  return db.release();
}

static void dropin_db_put(dropin_db* db, const char* key, size_t key_length, const char* value,
                          size_t value_length) {
  check(db->db->Put(leveldb::WriteOptions(), leveldb::Slice(key, key_length),
                    leveldb::Slice(value, value_length)),
        "put");
}

static void dropin_db_delete(dropin_db* db, const char* key, size_t key_length) {
  check(db->db->Delete(leveldb::WriteOptions(), leveldb::Slice(key, key_length)), "delete");
}

static int dropin_db_get(dropin_db* db, const char* key, size_t key_length, char* value,
                         size_t* value_length) {
  std::string found;
  leveldb::Status status = db->db->Get(leveldb::ReadOptions(), leveldb::Slice(key, key_length),
                                       &found);
  if (status.IsNotFound()) return 0;
  check(status, "get");
  if (found.size() > DROPIN_VALUE_MAX) dropin_fail("get", "value too long");
  memcpy(value, found.data(), found.size());
  *value_length = found.size();
  return 1;
}

static void dropin_db_close(dropin_db* db) { delete db; }

static void dropin_db_compact_and_close(dropin_db* db) {
  db->db->CompactRange(nullptr, nullptr);
  dropin_db_close(db);
}

int main(int argc, char** argv) { return dropin_main(argc, argv, "dropin_cxx"); }
