// The policy object LevelDB gets from this library: a class derived from LevelDB's
// leveldb::FilterPolicy, declared below as LevelDB declares it (the ABI only: a virtual destructor, then Name, CreateFilter and KeyMayMatch,
// in that order), so LevelDB's code calls it as its own, and a program checking
// dynamic types (dynamic_cast, -fsanitize=vptr) finds a leveldb::FilterPolicy.
// Nothing of LevelDB is needed to build or run it: no header, no symbol, no
// library. Every symbol here is hidden (the shared library exports none of them;
// linked statically, LevelDB's own definitions of the base class's vague-linkage
// symbols, identical, win). Each virtual function calls the Rust side
// (src/dropin.rs) through the table of functions given at creation.
//
// CreateFilter appends to the caller's std::string, whose layout depends on the
// ABI LevelDB was built with (_GLIBCXX_USE_CXX11_ABI): it asks the Rust side which
// ABI the code it returns to has (src/dropin/string_abi.rs: LevelDB's filter block
// builder, the one caller, proves it), and calls the append helper built for that
// ABI (string_append.cc). Without proof it writes nothing and ends the process
// (said on stderr): a string of unknown layout is never written.

#include <cstdlib>
#include <new>

#include "policy_calls.h"

#pragma GCC visibility push(hidden)

namespace leveldb {

// leveldb::Slice's layout: a pointer and a length.
class Slice {
 public:
  const leveldb_bloom_slice& raw() const { return raw_; }

 private:
  leveldb_bloom_slice raw_;
};

class FilterPolicy {
 public:
  virtual ~FilterPolicy() {}
  virtual const char* Name() const = 0;
  // `dst` is a std::string of the caller's ABI, either one.
  virtual void CreateFilter(const Slice* keys, int n, void* dst) const = 0;
  virtual bool KeyMayMatch(const Slice& key, const Slice& filter) const = 0;
};

}  // namespace leveldb

namespace {

class BloomPolicy final : public leveldb::FilterPolicy {
 public:
  BloomPolicy(const leveldb_bloom_policy_calls* calls, void* state)
      : calls_(calls), state_(state), key_may_match_(calls->key_may_match) {}
  BloomPolicy(const BloomPolicy&) = delete;
  BloomPolicy& operator=(const BloomPolicy&) = delete;

  ~BloomPolicy() override { calls_->release(state_); }

  const char* Name() const override { return calls_->name(state_); }

  // The caller is LevelDB's code (or a program calling the policy itself): the
  // object holding the return address proves the string's ABI.
  void CreateFilter(const leveldb::Slice* keys, int n, void* dst) const override {
    switch (calls_->string_abi(__builtin_return_address(0))) {
      case 1:
        return leveldb_bloom_append_cxx11(dst, calls_, state_, &keys->raw(), n);
      case 2:
        return leveldb_bloom_append_cxx98(dst, calls_, state_, &keys->raw(), n);
      default:
        std::abort();
    }
  }

  // A tail call: the Rust side's answer is this function's, with no frame of its own,
  // through a pointer held in the object, one load nearer than the table's.
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    return key_may_match_(state_, &key.raw(), &filter.raw());
  }

 private:
  const leveldb_bloom_policy_calls* const calls_;
  void* const state_;
  decltype(leveldb_bloom_policy_calls::key_may_match) const key_may_match_;
};

}  // namespace

// A new object, or NULL when memory runs out. Released with
// leveldb_bloom_policy_delete (or C++ delete, by LevelDB's code).
extern "C" void* leveldb_bloom_policy_new(const leveldb_bloom_policy_calls* calls,
                                         void* state) noexcept {
  return static_cast<leveldb::FilterPolicy*>(new (std::nothrow) BloomPolicy(calls, state));
}

// `delete policy` for any leveldb::FilterPolicy: this library's, or one LevelDB
// made (its own bloom policy, or the object of its C API's
// leveldb_filterpolicy_create), released as LevelDB's leveldb_filterpolicy_destroy
// releases it: by the object's own deleting destructor, through its vtable, whatever
// its std::string ABI.
extern "C" void leveldb_bloom_policy_delete(void* policy) {
  delete static_cast<leveldb::FilterPolicy*>(policy);
}

#pragma GCC visibility pop
