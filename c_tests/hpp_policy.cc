// The C++ header, leveldb_bloom.hpp, as C++11 and C++17.
//
// Built with LevelDB (-lleveldb -lleveldb_bloom: LevelDB first, so
// leveldb::NewBloomFilterPolicy is LevelDB's genuine policy, the reference) it checks
// leveldb_bloom::Policy and leveldb_bloom::NewBloomFilterPolicy against LevelDB on
// generated key sets. Built with -DLEVELDB_BLOOM_WITH_LEVELDB=0 and only
// -lleveldb_bloom it checks the RAII handle alone, against this library's C API.
// Built against libc++ (whose std::string Debian's LevelDB does not share) with
// -DLEVELDB_LINKED=0, it uses LevelDB's headers only, and the C API is the reference.
// The legacy policy (Policy::legacy, NewLegacyBloomFilterPolicy) is held to the same
// reference where its hash readings agree: keys with tail bytes below 0x80 give the
// reference filter byte for byte; other keys a superset of its bits, every key found.
// The policies of NewBloomFilterPolicy are the library's own objects (registered
// handles of a class of the library's), counted by its statistics, and pass
// std::bad_alloc from the string's growth to the caller as LevelDB's own does.
// Reports and exits as check.h says.
#include <leveldb_bloom.hpp>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>
#if __cplusplus >= 201703L
#include <string_view>
#endif

#include "check.h"

// Whether LevelDB's library is linked, and its policy the reference.
#ifndef LEVELDB_LINKED
#define LEVELDB_LINKED LEVELDB_BLOOM_WITH_LEVELDB
#endif

static_assert(!std::is_copy_constructible<leveldb_bloom::Policy>::value, "move-only");
static_assert(!std::is_copy_assignable<leveldb_bloom::Policy>::value, "move-only");
static_assert(std::is_nothrow_move_constructible<leveldb_bloom::Policy>::value, "movable");
static_assert(std::is_nothrow_move_assignable<leveldb_bloom::Policy>::value, "movable");

static char context[32];

// Names the round in failure reports.
static void in_round(int round) {
  std::snprintf(context, sizeof context, "round %d", round);
  check_context(context);
}

static std::uint64_t state = 0x9e3779b97f4a7c15ULL;
static std::uint64_t next() {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

// Keys of 0..40 random bytes, zeros and duplicates included.
static std::vector<std::string> random_keys(std::size_t count) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < count; i++) {
    if (i > 0 && next() % 10 == 0) {
      keys.push_back(keys[next() % i]);
      continue;
    }
    std::string key(next() % 41, '\0');
    for (char& byte : key) byte = static_cast<char>(next());
    keys.push_back(key);
  }
  return keys;
}

// The reference filter: LevelDB's own when linked in, else this library's C API.
#if LEVELDB_LINKED
static std::string reference_filter(int bits_per_key, const std::vector<std::string>& keys) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(bits_per_key));
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string filter;
  policy->CreateFilter(slices.data(), static_cast<int>(slices.size()), &filter);
  return filter;
}
#else
static std::string reference_filter(int bits_per_key, const std::vector<std::string>& keys) {
  leveldb_filterpolicy_t* policy = leveldb_bloom_policy_create(bits_per_key);
  std::vector<const char*> pointers;
  std::vector<std::size_t> lengths;
  for (const std::string& key : keys) {
    pointers.push_back(key.data());
    lengths.push_back(key.size());
  }
  std::size_t length = 0;
  char* bytes = leveldb_filterpolicy_create_filter(policy, pointers.data(), lengths.data(),
                                                   static_cast<int>(keys.size()), &length);
  std::string filter(bytes, length);
  std::free(bytes);
  leveldb_bloom_policy_destroy(policy);
  return filter;
}
#endif

#if LEVELDB_BLOOM_WITH_LEVELDB
// LevelDB's own KeyMayMatch when linked in, else this library's C API's.
static bool reference_may_match(int bits_per_key, const std::string& key, const std::string& filter) {
#if LEVELDB_LINKED
  std::unique_ptr<const leveldb::FilterPolicy> reference(leveldb::NewBloomFilterPolicy(bits_per_key));
  return reference->KeyMayMatch(key, filter);
#else
  const leveldb_bloom::Policy reference(bits_per_key);
  return reference.key_may_match(key, filter);
#endif
}

// `policy` is the library's own object, not a class of this program's: the library
// knows it as one of its handles (it names only those), and its dynamic type is the
// library's policy class (src/dropin/filter_policy.cc: BloomFilterPolicy, LevelDB's own
// name for it, in an anonymous namespace of its own, not in leveldb:: as LevelDB's).
static void check_library_object(const leveldb::FilterPolicy* policy, const char* name) {
  const char* known = leveldb_bloom_policy_name(
      static_cast<const leveldb_filterpolicy_t*>(static_cast<const void*>(policy)));
  CHECK_THAT(known != nullptr && std::strcmp(known, name) == 0, "a handle of the library's");
  const char* type = typeid(*policy).name();
  // (GCC marks a type of an anonymous namespace with a leading '*', which libc++'s
  // name() keeps.)
  CHECK_THAT(std::strstr(type, "N12_GLOBAL__N_117BloomFilterPolicyE") != nullptr, "the library's class");
}
#endif

static void check_policy(int round) {
  in_round(round);
  const int bits_per_key = static_cast<int>(next() % 25);
  const std::vector<std::string> keys = random_keys(next() % 300);
  const std::string expected = reference_filter(bits_per_key, keys);
  leveldb_bloom::Policy policy(bits_per_key);
  CHECK_THAT(static_cast<bool>(policy) && policy.capi() != nullptr, "policy made");
  CHECK_THAT(std::string(policy.name()) == "leveldb.BuiltinBloomFilter2", "name");
  CHECK_THAT(policy.filter_length(keys.size()) == expected.size(), "filter_length");
  CHECK_THAT(policy.create_filter(keys) == expected, "create_filter");

  std::string appended("prefix");
  CHECK_THAT(policy.append_filter(keys, &appended) == expected.size() &&
             appended == "prefix" + expected,
         "append_filter appends");

  for (const std::string& key : keys)
    CHECK_THAT(policy.key_may_match(key, expected), "a present key matches");
  const std::vector<std::string> probes = random_keys(50);
  for (const std::string& probe : probes) {
    const std::string filter = random_keys(1)[0] + expected;  // any bytes at all
    CHECK_THAT(policy.key_may_match(probe, filter) ==
               (leveldb_filterpolicy_key_may_match(policy.capi(), probe.data(), probe.size(),
                                                   filter.data(), filter.size()) != 0),
           "key_may_match on any bytes");
  }

#if LEVELDB_BLOOM_WITH_LEVELDB
  std::unique_ptr<const leveldb::FilterPolicy> ours(leveldb_bloom::NewBloomFilterPolicy(bits_per_key));
  CHECK_THAT(ours != nullptr && std::string(ours->Name()) == "leveldb.BuiltinBloomFilter2", "Name");
  check_library_object(ours.get(), "leveldb.BuiltinBloomFilter2");
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string dst("prefix");
  const std::uint64_t built = leveldb_bloom::stats().filters_built;
  ours->CreateFilter(slices.data(), static_cast<int>(slices.size()), &dst);
  CHECK_THAT(dst == "prefix" + expected, "CreateFilter appends LevelDB's filter");
  CHECK_THAT(leveldb_bloom::stats().filters_built == built + 1, "the library built the filter");
  CHECK_THAT(policy.append_filter(slices, &appended) == expected.size(), "Slices as keys");
  for (const std::string& probe : probes) {
    for (const std::string& filter : {expected, random_keys(1)[0]}) {
      CHECK_THAT(ours->KeyMayMatch(probe, filter) == reference_may_match(bits_per_key, probe, filter),
             "KeyMayMatch answers as LevelDB's");
    }
  }
#endif
#if __cplusplus >= 201703L
  std::vector<std::string_view> views(keys.begin(), keys.end());
  CHECK_THAT(policy.create_filter(views) == expected, "string_views as keys");
  for (const std::string_view key : views)
    CHECK_THAT(policy.key_may_match(key, std::string_view(expected)), "string_view key_may_match");
#endif
#if LEVELDB_BLOOM_WITH_LEVELDB
  for (const leveldb::Slice& key : slices)
    CHECK_THAT(policy.key_may_match(key, leveldb::Slice(expected)), "Slice key_may_match");
#endif
}

// The same keys with every byte below 0x80, so no tail byte is one the legacy
// policy reads two ways.
static std::vector<std::string> without_high_bytes(std::vector<std::string> keys) {
  for (std::string& key : keys)
    for (char& byte : key) byte = static_cast<char>(byte & 0x7f);
  return keys;
}

static void check_legacy(int round) {
  in_round(round);
  const int bits_per_key = static_cast<int>(next() % 25);
  const std::vector<std::string> keys = random_keys(next() % 300);
  const std::vector<std::string> plain = without_high_bytes(keys);
  const leveldb_bloom::Policy legacy = leveldb_bloom::Policy::legacy(bits_per_key);
  CHECK_THAT(static_cast<bool>(legacy), "legacy policy made");
  CHECK_THAT(std::string(legacy.name()) == "leveldb.BuiltinBloomFilter", "legacy name");
  CHECK_THAT(legacy.create_filter(plain) == reference_filter(bits_per_key, plain),
         "legacy filter without high tail bytes is the reference");
  const std::string expected = reference_filter(bits_per_key, keys);
  const std::string filter = legacy.create_filter(keys);
  bool superset = filter.size() == expected.size();
  for (std::size_t i = 0; superset && i < filter.size(); i++)
    superset = (expected[i] & ~filter[i]) == 0;
  CHECK_THAT(superset, "legacy filter holds every reference bit");
  for (const std::string& key : keys)
    CHECK_THAT(legacy.key_may_match(key, filter) && legacy.key_may_match(key, expected),
           "legacy: a present key matches its filter and the reference's");
#if LEVELDB_BLOOM_WITH_LEVELDB
  std::unique_ptr<const leveldb::FilterPolicy> ours(leveldb_bloom::NewLegacyBloomFilterPolicy(bits_per_key));
  CHECK_THAT(ours != nullptr && std::string(ours->Name()) == "leveldb.BuiltinBloomFilter", "legacy Name");
  check_library_object(ours.get(), "leveldb.BuiltinBloomFilter");
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string dst("prefix");
  ours->CreateFilter(slices.data(), static_cast<int>(slices.size()), &dst);
  CHECK_THAT(dst == "prefix" + filter, "legacy CreateFilter appends the legacy filter");
  for (const std::string& probe : random_keys(50))
    CHECK_THAT(ours->KeyMayMatch(probe, filter) == legacy.key_may_match(probe, filter),
           "legacy KeyMayMatch answers as the legacy Policy");
#endif
}

// Moved-from and refused policies are empty, and empty ones are fail-safe.
static void check_empty() {
  leveldb_bloom::Policy policy(10);
  leveldb_bloom::Policy moved(std::move(policy));
  CHECK_THAT(!policy && policy.capi() == nullptr && static_cast<bool>(moved), "move");
  leveldb_bloom::Policy assigned(20);
  assigned = std::move(moved);  // releases the 20-bit policy
  CHECK_THAT(!moved && static_cast<bool>(assigned), "move assignment");
  // Adopt and release: the handle changes owner, never leaks, never is freed twice
  // (valgrind runs this harness).
  leveldb_filterpolicy_t* raw = leveldb_bloom::Policy(10).release();
  CHECK_THAT(raw != nullptr && std::string(leveldb_filterpolicy_name(raw)) == "leveldb.BuiltinBloomFilter2",
         "release hands over a live handle");
  leveldb_bloom::Policy adopted = leveldb_bloom::Policy::adopt(raw);
  CHECK_THAT(adopted.capi() == raw && static_cast<bool>(adopted), "adopt takes it back");
  CHECK_THAT(!leveldb_bloom::Policy::adopt(nullptr), "adopting NULL is empty");
  leveldb_bloom::Policy refused(-1);
  CHECK_THAT(!refused, "a negative bits_per_key is refused");
  CHECK_THAT(!leveldb_bloom::Policy::legacy(-1), "legacy: a negative bits_per_key is refused");
  for (const leveldb_bloom::Policy* empty : {&policy, &refused}) {
    const std::vector<std::string> keys = random_keys(10);
    CHECK_THAT(empty->name() == nullptr, "an empty policy has no name");
    CHECK_THAT(empty->create_filter(keys) == std::string("\x00\xff", 2), "empty: match-all");
    CHECK_THAT(empty->key_may_match(std::string("k"), std::string("\x00\x00\x01", 3)),
           "empty: matches");
  }
#if LEVELDB_BLOOM_WITH_LEVELDB
  CHECK_THAT(leveldb_bloom::NewBloomFilterPolicy(-1) == nullptr, "NewBloomFilterPolicy(-1)");
  CHECK_THAT(leveldb_bloom::NewLegacyBloomFilterPolicy(-1) == nullptr, "NewLegacyBloomFilterPolicy(-1)");
#endif
#if LEVELDB_LINKED
  CHECK_THAT((leveldb_bloom_swap_status() & LEVELDB_BLOOM_SWAP_CXX_API) == 0,
         "LevelDB's own NewBloomFilterPolicy is the reference");
#endif
}

#if LEVELDB_BLOOM_WITH_LEVELDB
// An append function whose string cannot grow, as std::string::resize fails.
static void cannot_grow(void*, std::size_t, leveldb_bloom_filter_writer_t, void*) {
  throw std::bad_alloc();
}

// What LevelDB's own CreateFilter does at its edges, through the library's object:
// no keys and a negative count append a filter that matches every key, a string
// that cannot grow throws std::bad_alloc to the caller (the string unchanged), and
// the header's policy can be adopted by a Policy, which releases it.
static void check_create_filter_edges() {
  std::unique_ptr<const leveldb::FilterPolicy> ours(leveldb_bloom::NewBloomFilterPolicy(10));
  std::string dst("prefix");
  ours->CreateFilter(nullptr, 0, &dst);
  CHECK_THAT(dst == "prefix" + reference_filter(10, std::vector<std::string>()),
             "no keys: LevelDB's filter of no keys");
  dst = "prefix";
  ours->CreateFilter(nullptr, -1, &dst);
  CHECK_THAT(dst == std::string("prefix\x00\xff", 8), "a negative count: the match-all filter");
  CHECK_THAT(ours->KeyMayMatch(std::string("any"), std::string("\x00\xff", 2)), "it matches");

  const std::unique_ptr<const leveldb::FilterPolicy> failing(leveldb_bloom::detail::as_filter_policy(
      leveldb_bloom_cxx_policy_create(10, cannot_grow)));
  const std::vector<leveldb::Slice> keys = {leveldb::Slice("hello"), leveldb::Slice("world")};
  dst = "prefix";
  bool thrown = false;
  try {
    failing->CreateFilter(keys.data(), 2, &dst);
  } catch (const std::bad_alloc&) {
    thrown = true;
  }
  CHECK_THAT(thrown && dst == "prefix", "std::bad_alloc reaches the caller, the string unchanged");

  leveldb_bloom::Policy adopted = leveldb_bloom::Policy::adopt(static_cast<leveldb_filterpolicy_t*>(
      const_cast<void*>(static_cast<const void*>(ours.release()))));
  CHECK_THAT(adopted.name() != nullptr && std::string(adopted.name()) == "leveldb.BuiltinBloomFilter2",
             "adopted by a Policy");
}
#endif

int main() {
  leveldb_bloom::enable_stats();
  check_empty();
#if LEVELDB_BLOOM_WITH_LEVELDB
  check_create_filter_edges();
#endif
  for (int round = 1; round <= 200; round++) check_policy(round);
  for (int round = 1; round <= 100; round++) check_legacy(round);
  return check_report("hpp_policy");
}
