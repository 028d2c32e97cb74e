// LevelDB's util/bloom.cc, replaced by leveldb-bloom: for a program that builds
// LevelDB from source (vendored, as Bitcoin Core does), copy this file over
// util/bloom.cc, add leveldb-bloom's include directory to the compiler's path and
// link the program with -lleveldb_bloom. leveldb::NewBloomFilterPolicy (and through
// it the C API's leveldb_filterpolicy_create_bloom) then returns a policy whose
// filters this library builds and matches: byte for byte LevelDB's
// "leveldb.BuiltinBloomFilter2", so databases stay readable both ways.
//
// Built into the program, the policy needs no dynamic symbol and no LD_PRELOAD: it
// reaches executables that have LevelDB built in without exporting its symbols.
#include "leveldb/filter_policy.h"

#define LEVELDB_BLOOM_WITH_LEVELDB 1
#include <leveldb_bloom.hpp>

namespace leveldb {

// LevelDB gives the result to Options::filter_policy and never checks it:
// leveldb_bloom::NewBloomFilterPolicy returns nullptr only for a negative
// bits_per_key or when memory runs out, and LevelDB then runs without filters
// (slower, never wrong).
const FilterPolicy* NewBloomFilterPolicy(int bits_per_key) {
  return leveldb_bloom::NewBloomFilterPolicy(bits_per_key);
}

}  // namespace leveldb
