// What the C++ side of a policy object (filter_policy.cc, string_append.cc) and
// the Rust side (src/dropin.rs, `Calls`) share: plain C types only.

#ifndef LEVELDB_BLOOM_POLICY_CALLS_H
#define LEVELDB_BLOOM_POLICY_CALLS_H

#include <cstddef>

// leveldb_bloom_string_append_t and leveldb_bloom_filter_writer_t, the append
// function a C++ program hands over at creation (leveldb_bloom_cxx_policy_create).
#include <leveldb_bloom.h>

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
  // Says on stderr that CreateFilter was called on an object with no append
  // function (no LevelDB showed its std::string when it was made); the object
  // then ends the process rather than write a string of unknown layout.
  void (*refuse_unknown_string)();
  // The length of the filter of `n` keys: the real one, or 2 when it cannot be
  // sized (the match-all filter).
  std::size_t (*filter_length)(const void* state, int n);
  // Writes the filter of `n` keys into `out` (`length` bytes, from
  // filter_length), or the match-all filter when it cannot: returns the bytes
  // written, `length` or 2.
  std::size_t (*write_filter)(const void* state, const leveldb_bloom_slice* keys, int n,
                              char* out, std::size_t length);
  // Whether the key may be in the filter: LevelDB's KeyMayMatch, on LevelDB's
  // slices (each readable for its size), under the format of the policy the
  // table was chosen for. Given the object itself rather than its state, which
  // the answer does not need: the call is then one jump.
  bool (*key_may_match)(const void* object, const leveldb_bloom_slice* key,
                        const leveldb_bloom_slice* filter);
};

#pragma GCC visibility push(hidden)

// Append functions (leveldb_bloom_string_append_t) for a std::string of the new
// (cxx11) or the old (cxx98) ABI (string_append.cc, built once for each), handed to
// the objects made for a LevelDB of that string (src/dropin/decide.rs).
extern const leveldb_bloom_string_append_t leveldb_bloom_append_cxx11;
extern const leveldb_bloom_string_append_t leveldb_bloom_append_cxx98;

#pragma GCC visibility pop

}  // extern "C"

#endif  // LEVELDB_BLOOM_POLICY_CALLS_H
