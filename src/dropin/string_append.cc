// The append functions of the objects that prove their caller's std::string ABI
// (filter_policy.cc): leveldb_bloom.hpp's own (leveldb_bloom::detail::append_written,
// which the header hands to the objects it makes), instantiated for the std::string
// of the libstdc++ ABI this file is compiled with (_GLIBCXX_USE_CXX11_ABI). build.rs
// compiles it once per ABI, LEVELDB_BLOOM_APPEND naming each build's pointer; the
// instantiations' names carry the ABI, so the two never merge.

#define LEVELDB_BLOOM_WITH_LEVELDB 0  // no LevelDB: only the append function is used

// The header's own includes, first: none of their names is made hidden below.
#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <leveldb_bloom.h>

#pragma GCC visibility push(hidden)

#include <leveldb_bloom.hpp>

#include "policy_calls.h"

#ifndef LEVELDB_BLOOM_APPEND
#error "build.rs defines LEVELDB_BLOOM_APPEND"
#endif

extern const leveldb_bloom_string_append_t LEVELDB_BLOOM_APPEND =
    &leveldb_bloom::detail::append_written<std::string>;

#pragma GCC visibility pop
