// Appends a filter to LevelDB's std::string, whose layout is that of the libstdc++
// ABI LevelDB was built with (_GLIBCXX_USE_CXX11_ABI): build.rs compiles this file
// once per ABI, LEVELDB_BLOOM_APPEND naming each build's function, and the policy
// object (filter_policy.cc) calls the one its caller was proven to have
// (src/dropin/string_abi.rs).

#include <string>

#include "policy_calls.h"

#ifndef LEVELDB_BLOOM_APPEND
#error "build.rs defines LEVELDB_BLOOM_APPEND"
#endif

#pragma GCC visibility push(hidden)

// Sized, then written in place, as LevelDB's own bloom policy does: the one
// allocation is the string's, and a failing one throws std::bad_alloc to LevelDB
// exactly as LevelDB's own resize would (no Rust frame is on the stack then). The
// bytes resize appends are NUL, which the filter's bits are set into.
extern "C" void LEVELDB_BLOOM_APPEND(void* string, const leveldb_bloom_policy_calls* calls,
                                     const void* state, const leveldb_bloom_slice* keys,
                                     int n) {
  std::string* dst = static_cast<std::string*>(string);
  const std::size_t length = calls->filter_length(state, n);
  const std::size_t start = dst->size();
  dst->resize(start + length);
  const std::size_t written = calls->write_filter(state, keys, n, &(*dst)[start], length);
  dst->resize(start + written);
}

#pragma GCC visibility pop
