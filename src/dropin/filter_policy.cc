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
// ABI LevelDB was built with (_GLIBCXX_USE_CXX11_ABI), so build.rs compiles this
// file twice, once per ABI, and the Rust side picks the one matching its caller
// (src/dropin/string_abi.rs). LEVELDB_BLOOM_NEW names this build's constructor.

#include <cstddef>
#include <new>
#include <string>

#ifndef LEVELDB_BLOOM_NEW
#error "build.rs defines LEVELDB_BLOOM_NEW"
#endif

extern "C" {

// leveldb::Slice: a pointer and a length.
struct leveldb_bloom_slice {
  const char* data;
  std::size_t size;
};

// The Rust side of one policy object; `state` is what the object was made with.
struct leveldb_bloom_policy_calls {
  // Frees the state; called once, by the destructor.
  void (*release)(void* state);
  // The policy's name, a static string.
  const char* (*name)(const void* state);
  // The length of the filter of `n` keys: the real one, or 2 when it cannot be
  // sized (the match-all filter).
  std::size_t (*filter_length)(const void* state, int n);
  // Writes the filter of `n` keys into `out` (`length` bytes, from
  // filter_length), or the match-all filter when it cannot: returns the bytes
  // written, `length` or 2.
  std::size_t (*write_filter)(const void* state, const leveldb_bloom_slice* keys, int n,
                              char* out, std::size_t length);
  // 1 if the key may be in the filter, 0 if it is not.
  unsigned char (*key_may_match)(const void* state, const leveldb_bloom_slice* key,
                                 const leveldb_bloom_slice* filter);
};

}  // extern "C"

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
  virtual void CreateFilter(const Slice* keys, int n, std::string* dst) const = 0;
  virtual bool KeyMayMatch(const Slice& key, const Slice& filter) const = 0;
};

}  // namespace leveldb

namespace {

class BloomPolicy final : public leveldb::FilterPolicy {
 public:
  BloomPolicy(const leveldb_bloom_policy_calls* calls, void* state)
      : calls_(calls), state_(state) {}
  BloomPolicy(const BloomPolicy&) = delete;
  BloomPolicy& operator=(const BloomPolicy&) = delete;

  ~BloomPolicy() override { calls_->release(state_); }

  const char* Name() const override { return calls_->name(state_); }

  // Sized, then written in place, as LevelDB's own bloom policy does: the one
  // allocation is the string's, and a failing one throws std::bad_alloc to LevelDB
  // exactly as LevelDB's own resize would (no Rust frame is on the stack then). The
  // bytes resize appends are NUL, which the filter's bits are set into.
  void CreateFilter(const leveldb::Slice* keys, int n, std::string* dst) const override {
    const std::size_t length = calls_->filter_length(state_, n);
    const std::size_t start = dst->size();
    dst->resize(start + length);
    const std::size_t written =
        calls_->write_filter(state_, &keys->raw(), n, &(*dst)[start], length);
    dst->resize(start + written);
  }

  bool KeyMayMatch(const leveldb::Slice& key, const leveldb::Slice& filter) const override {
    return calls_->key_may_match(state_, &key.raw(), &filter.raw()) != 0;
  }

 private:
  const leveldb_bloom_policy_calls* const calls_;
  void* const state_;
};

}  // namespace

// A new object, or NULL when memory runs out. Released with
// leveldb_bloom_policy_delete (or C++ delete, by LevelDB's code).
extern "C" void* LEVELDB_BLOOM_NEW(const leveldb_bloom_policy_calls* calls, void* state) noexcept {
  return static_cast<leveldb::FilterPolicy*>(new (std::nothrow) BloomPolicy(calls, state));
}

#ifdef LEVELDB_BLOOM_DELETE
// `delete policy` for any leveldb::FilterPolicy: this library's, or one LevelDB
// made (its own bloom policy, or the object of its C API's
// leveldb_filterpolicy_create), released as LevelDB's leveldb_filterpolicy_destroy
// releases it: by the object's own deleting destructor, through its vtable, whatever
// its std::string ABI.
extern "C" void LEVELDB_BLOOM_DELETE(void* policy) {
  delete static_cast<leveldb::FilterPolicy*>(policy);
}
#endif

#pragma GCC visibility pop
