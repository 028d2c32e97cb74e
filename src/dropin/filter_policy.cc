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
// C++ library and ABI LevelDB was built with, with the append function the object
// was made with: the program's own (leveldb_bloom_cxx_policy_create, from the C++
// header), or the one built for the libstdc++ ABI of the LevelDB the policy was
// made for (string_append.cc; src/dropin/decide.rs decided it when the object was
// made). Nothing is decided per call. An object made where no LevelDB showed its
// string has none: its CreateFilter writes nothing and ends the process (said on
// stderr): a string of unknown layout is never written. Either append function
// throws std::bad_alloc to the caller when the string cannot grow, as LevelDB's own
// CreateFilter does: no Rust frame is on the stack then.

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

// What the append function's writer gets: the keys CreateFilter was given.
struct FilterKeys {
  const leveldb_bloom_policy_calls* calls;
  const void* state;
  const leveldb_bloom_slice* keys;
  int n;
};

// The writer CreateFilter hands to the append function (leveldb_bloom_filter_writer_t):
// the Rust side writes the filter into the appended bytes.
std::size_t write_filter(void* writer, char* out, std::size_t length) noexcept {
  const FilterKeys* keys = static_cast<const FilterKeys*>(writer);
  return keys->calls->write_filter(keys->state, keys->keys, keys->n, out, length);
}

// LevelDB's name for its own bloom policy class (util/bloom.cc), and the core's for
// the policy this object drives (src/registry.rs: the state it is made with).
class BloomFilterPolicy final : public leveldb::FilterPolicy {
 public:
  // `append` NULL: CreateFilter refuses (see the file's comment).
  BloomFilterPolicy(const leveldb_bloom_policy_calls* calls, void* state,
                    leveldb_bloom_string_append_t append)
      : calls_(calls), state_(state), append_(append), key_may_match_(calls->key_may_match) {}
  BloomFilterPolicy(const BloomFilterPolicy&) = delete;
  BloomFilterPolicy& operator=(const BloomFilterPolicy&) = delete;

  ~BloomFilterPolicy() override { calls_->release(state_); }

  const char* Name() const override { return calls_->name(state_); }

  // Sized, then written in place, as LevelDB's own bloom policy does: the one
  // allocation is the string's.
  void CreateFilter(const leveldb::Slice* keys, int n, void* dst) const override {
    if (append_ == nullptr) {
      calls_->refuse_unknown_string();
      std::abort();
    }
    FilterKeys writer = {calls_, state_, &keys->raw(), n};
    append_(dst, calls_->filter_length(state_, n), write_filter, &writer);
  }

  // A tail call: the Rust side's answer is this function's, with no frame of its own,
  // through a pointer held in the object, one load nearer than the table's; the
  // arguments stay where the virtual call put them.
  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    return key_may_match_(this, &key.raw(), &filter.raw());
  }

 private:
  const leveldb_bloom_policy_calls* const calls_;
  void* const state_;
  const leveldb_bloom_string_append_t append_;
  decltype(leveldb_bloom_policy_calls::key_may_match) const key_may_match_;
};

}  // namespace

// A new object, or NULL when memory runs out. Released with
// leveldb_bloom_policy_delete (or C++ delete, by LevelDB's code or the program).
extern "C" void* leveldb_bloom_policy_new(const leveldb_bloom_policy_calls* calls, void* state,
                                         leveldb_bloom_string_append_t append) noexcept {
  return static_cast<leveldb::FilterPolicy*>(new (std::nothrow)
                                                 BloomFilterPolicy(calls, state, append));
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
