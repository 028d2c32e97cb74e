// A C++ plugin library whose make_policy compiles (at -O2) to a tail call: a jump
// to leveldb::NewBloomFilterPolicy, so that the callee returns straight to
// make_policy's caller, another object. Built with LevelDB's headers and linked to
// the LevelDB it runs with; c_tests/dropin_c.c calls it in place of
// leveldb_filterpolicy_create_bloom (tests/suite/string_abi.rs checks the jump).
#include <leveldb/filter_policy.h>

extern "C" const leveldb::FilterPolicy* make_policy(int bits_per_key) {
  return leveldb::NewBloomFilterPolicy(bits_per_key);
}
