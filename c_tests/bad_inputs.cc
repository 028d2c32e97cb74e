/* Every bad input of the C API, and its documented result, in one sweep; where LevelDB
 * defines the answer (edge bits_per_key values, filters of any bytes), the real
 * LevelDB gives the expected value. Each row of the README's bad-input table is a
 * CHECK_THAT here. libleveldb_bloom is loaded privately beside LevelDB (load_ours.h), and
 * every row runs against both kinds of handle: the library's own, and the LevelDB
 * object it makes when LevelDB is loaded; and against a legacy policy
 * (leveldb_bloom_legacy_policy_create, "leveldb.BuiltinBloomFilter"), whose filters
 * and answers equal LevelDB's for keys without a tail byte >= 0x80 and, for the
 * others, never answer "absent" where LevelDB's "may match".
 *
 * Usage: bad_inputs (LEVELDB_BLOOM_LIB names the library). Prints the number of
 * filter answers compared; reports and exits as check.h says. */
#include "check.h"
#include "load_ours.h"

#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>

#include <climits>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace {

load_ours::Ours b;
long compared;

const std::string kMatchAll("\x00\xff", 2);
const std::string kNull = "<NULL>";

/* A filter returned by create_filter, as a string; kNull for NULL (which must come
   with length 0). */
std::string take(char* filter, size_t length) {
  if (filter == nullptr) return length == 0 ? kNull : "<NULL with length>";
  std::string out(filter, length);
  std::free(filter);
  return out;
}

std::string create(const leveldb_filterpolicy_t* policy, const char* const* keys, const size_t* lengths, int n) {
  size_t length = 999;
  char* filter = b.create_filter(policy, keys, lengths, n, &length);
  return take(filter, length);
}

std::string leveldb_filter(int bits_per_key, const std::vector<std::string>& keys) {
  std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(bits_per_key));
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string filter;
  policy->CreateFilter(slices.data(), int(slices.size()), &filter);
  return filter;
}

std::string ours_filter(const leveldb_filterpolicy_t* policy, const std::vector<std::string>& keys) {
  const load_ours::CKeys c_keys(keys);
  return create(policy, c_keys.pointers.data(), c_keys.lengths.data(), int(keys.size()));
}

struct Handle {
  const char* kind;
  leveldb_filterpolicy_t* policy;
  bool legacy;
};

/* bits_per_key at the edges of int: negative ones refused, the others LevelDB's. */
void bits_per_key_rows() {
  for (int bits_per_key : {INT_MIN, -1}) {
    const std::string at = " (bits_per_key " + std::to_string(bits_per_key) + ")";
    CHECK_THAT(b.policy_create(bits_per_key) == nullptr, "leveldb_bloom_policy_create gives NULL" + at);
    CHECK_THAT(b.create_bloom(bits_per_key) == nullptr, "leveldb_filterpolicy_create_bloom gives NULL" + at);
    CHECK_THAT(b.legacy_create(bits_per_key) == nullptr, "leveldb_bloom_legacy_policy_create gives NULL" + at);
  }
  const std::vector<std::string> keys = {"hello", "world", ""};
  for (int bits_per_key : {0, 1, 10, INT_MAX}) {
    /* n * INT_MAX overflows LevelDB's int arithmetic for n >= 2 (undefined there). */
    const size_t max_keys = bits_per_key == INT_MAX ? 1 : keys.size();
    const std::pair<leveldb_filterpolicy_t*, const char*> made[] = {
        {b.policy_create(bits_per_key), "leveldb.BuiltinBloomFilter2"},
        {b.create_bloom(bits_per_key), "leveldb.BuiltinBloomFilter2"},
        {b.legacy_create(bits_per_key), "leveldb.BuiltinBloomFilter"}};
    for (const auto& policy_and_name : made) {
      leveldb_filterpolicy_t* policy = policy_and_name.first;
      const std::string at = " (bits_per_key " + std::to_string(bits_per_key) + ")";
      CHECK_THAT(policy != nullptr && std::strcmp(b.name(policy), policy_and_name.second) == 0,
          std::string("policy made, named ") + policy_and_name.second + at);
      for (size_t n = 0; n <= max_keys; n++) {
        const std::vector<std::string> some(keys.begin(), keys.begin() + long(n));
        CHECK_THAT(ours_filter(policy, some) == leveldb_filter(bits_per_key, some),
            "filter of " + std::to_string(n) + " keys equals LevelDB's" + at);
      }
      b.destroy(policy);
    }
  }
  leveldb_filterpolicy_t* widest = b.policy_create(INT_MAX);
  CHECK_THAT(b.filter_length(widest, 2) == (2 * size_t(INT_MAX) + 7) / 8 + 1, "filter_length for 2 keys at INT_MAX");
  CHECK_THAT(b.filter_length(widest, SIZE_MAX) == 0, "filter_length for SIZE_MAX keys at INT_MAX: 0");
  b.destroy(widest);
}

void create_filter_rows(const Handle& handle) {
  const std::string at = std::string(" (") + handle.kind + " handle)";
  const char* keys[] = {"a", "bc", "def"};
  const size_t lengths[] = {1, 2, 3};
  int unknown = 0;
  const auto* not_a_policy = reinterpret_cast<const leveldb_filterpolicy_t*>(&unknown);

  CHECK_THAT(create(nullptr, keys, lengths, 3) == kMatchAll, "create_filter: policy NULL gives 00 ff");
  CHECK_THAT(create(not_a_policy, keys, lengths, 3) == kMatchAll, "create_filter: unknown policy gives 00 ff");
  CHECK_THAT(create(handle.policy, nullptr, lengths, 3) == kMatchAll, "create_filter: key_array NULL gives 00 ff" + at);
  CHECK_THAT(create(handle.policy, keys, nullptr, 3) == kMatchAll, "create_filter: key_length_array NULL gives 00 ff" + at);
  CHECK_THAT(create(handle.policy, nullptr, nullptr, 0) == leveldb_filter(10, {}), "create_filter: no keys, NULL arrays: LevelDB's empty filter" + at);
  for (int position = 0; position < 3; position++) {
    const char* with_null[] = {"a", "bc", "def"};
    with_null[position] = nullptr;
    CHECK_THAT(create(handle.policy, with_null, lengths, 3) == kMatchAll,
        "create_filter: key " + std::to_string(position) + " NULL with length > 0 gives 00 ff" + at);
    size_t empty_lengths[] = {1, 2, 3};
    empty_lengths[position] = 0;
    std::vector<std::string> expected = {"a", "bc", "def"};
    expected[size_t(position)] = "";
    CHECK_THAT(create(handle.policy, with_null, empty_lengths, 3) == leveldb_filter(10, expected),
        "create_filter: key " + std::to_string(position) + " NULL with length 0 is the empty key" + at);
  }
  const size_t huge_lengths[] = {1, SIZE_MAX, 3};
  CHECK_THAT(create(handle.policy, keys, huge_lengths, 3) == kMatchAll, "create_filter: a key length above PTRDIFF_MAX gives 00 ff" + at);
  for (int n : {-1, INT_MIN})
    CHECK_THAT(create(handle.policy, keys, lengths, n) == kMatchAll, "create_filter: num_keys " + std::to_string(n) + " gives 00 ff" + at);
  CHECK_THAT(create(handle.policy, nullptr, nullptr, INT_MAX) == kMatchAll, "create_filter: num_keys INT_MAX, NULL arrays gives 00 ff" + at);
  CHECK_THAT(b.create_filter(handle.policy, keys, lengths, 3, nullptr) == nullptr, "create_filter: filter_length NULL gives NULL" + at);
}

void key_may_match_rows(const Handle& handle) {
  const std::string at = std::string(" (") + handle.kind + " handle)";
  const std::string no_key = leveldb_filter(10, {}); /* answers 0 for every key */
  int unknown = 0;
  const auto* not_a_policy = reinterpret_cast<const leveldb_filterpolicy_t*>(&unknown);
  auto match = [&](const leveldb_filterpolicy_t* policy, const char* key, size_t length, const char* filter, size_t filter_length) {
    return int(b.key_may_match(policy, key, length, filter, filter_length));
  };
  std::unique_ptr<const leveldb::FilterPolicy> leveldb_policy(leveldb::NewBloomFilterPolicy(10));

  CHECK_THAT(match(handle.policy, "k", 1, no_key.data(), no_key.size()) == 0, "key_may_match: a real 'no' stays 0" + at);
  CHECK_THAT(match(nullptr, "k", 1, no_key.data(), no_key.size()) == 1, "key_may_match: policy NULL gives 1");
  CHECK_THAT(match(not_a_policy, "k", 1, no_key.data(), no_key.size()) == 1, "key_may_match: unknown policy gives 1");
  CHECK_THAT(match(handle.policy, nullptr, 1, no_key.data(), no_key.size()) == 1, "key_may_match: key NULL with length > 0 gives 1" + at);
  CHECK_THAT(match(handle.policy, nullptr, 0, no_key.data(), no_key.size()) == leveldb_policy->KeyMayMatch("", no_key),
      "key_may_match: key NULL with length 0 is the empty key" + at);
  CHECK_THAT(match(handle.policy, "k", 1, nullptr, 9) == 1, "key_may_match: filter NULL with length > 0 gives 1" + at);
  CHECK_THAT(match(handle.policy, "k", 1, nullptr, 0) == 0, "key_may_match: filter NULL with length 0 gives 0, as LevelDB's empty filter" + at);
  CHECK_THAT(match(handle.policy, "k", SIZE_MAX, no_key.data(), no_key.size()) == 1, "key_may_match: key length above PTRDIFF_MAX gives 1" + at);
  CHECK_THAT(match(handle.policy, "k", 1, no_key.data(), SIZE_MAX) == 1, "key_may_match: filter length above PTRDIFF_MAX gives 1" + at);

  /* The object's KeyMayMatch, as LevelDB's code calls it, takes LevelDB's slices
     unchecked; a slice of no address and no bytes is still the empty key, or filter. */
  const auto* object = reinterpret_cast<const leveldb::FilterPolicy*>(handle.policy);
  const leveldb::Slice nothing(nullptr, 0);
  const std::string empty_key_filter = leveldb_filter(10, {""});
  CHECK_THAT(object->KeyMayMatch(nothing, empty_key_filter), "KeyMayMatch: a NULL slice of length 0 is the empty key, found" + at);
  CHECK_THAT(object->KeyMayMatch(nothing, no_key) == leveldb_policy->KeyMayMatch(nothing, no_key),
      "KeyMayMatch: a NULL slice of length 0 is the empty key, as LevelDB answers it" + at);
  CHECK_THAT(!object->KeyMayMatch("k", nothing), "KeyMayMatch: a NULL filter of length 0 gives 0, as LevelDB's empty filter" + at);
}

/* Filters of every length 0..=300 of random bytes, with a random last (k) byte and
   with each k byte where LevelDB's reading changes: every answer is LevelDB's. */
void filter_sweep_rows(const Handle& handle) {
  std::mt19937 random(20240611);
  std::unique_ptr<const leveldb::FilterPolicy> leveldb_policy(leveldb::NewBloomFilterPolicy(10));
  std::vector<std::string> keys(40);
  for (std::string& key : keys) {
    key.resize(random() % 20);
    for (char& c : key) c = char(random());
  }
  const int k_bytes[] = {-1 /* random */, 0, 1, 29, 30, 31, 0x80, 0xff};
  long differ = 0, ambiguous = 0;
  for (size_t length = 0; length <= 300; length++) {
    for (int k : k_bytes) {
      std::string filter(length, '\0');
      for (char& c : filter) c = char(random());
      if (length > 0 && k >= 0) filter.back() = char(k);
      for (const std::string& key : keys) {
        const bool expected = leveldb_policy->KeyMayMatch(key, filter);
        const bool answer = b.key_may_match(handle.policy, key.data(), key.size(), filter.data(), filter.size()) != 0;
        /* The legacy policy also tries the signed reading: it may add a "may match". */
        if (handle.legacy && load_ours::tail_is_ambiguous(key)) {
          differ += expected && !answer;
          ambiguous++;
        } else {
          differ += answer != expected;
        }
        compared++;
      }
    }
  }
  CHECK_THAT(!handle.legacy || ambiguous > 0, std::string("keys with a high tail byte swept (") + handle.kind + " handle)");
  CHECK_THAT(differ == 0, std::string("key_may_match on filters of every length 0..=300, k bytes random, 0, 1, 29, 30, 31, 0x80, 0xff: LevelDB's answers (") +
                       handle.kind + " handle, " + std::to_string(differ) + " differ" +
                       (handle.legacy ? ", never 0 where LevelDB says 1 for keys with a high tail byte" : "") + ")");
}

void filter_length_rows(const Handle& handle) {
  const std::string at = std::string(" (") + handle.kind + " handle)";
  int unknown = 0;
  CHECK_THAT(b.filter_length(nullptr, 3) == 0, "filter_length: policy NULL gives 0");
  CHECK_THAT(b.filter_length(reinterpret_cast<const leveldb_filterpolicy_t*>(&unknown), 3) == 0, "filter_length: unknown policy gives 0");
  CHECK_THAT(b.filter_length(handle.policy, 0) == leveldb_filter(10, {}).size(), "filter_length: 0 keys is LevelDB's length" + at);
  CHECK_THAT(b.filter_length(handle.policy, SIZE_MAX) == 0, "filter_length: SIZE_MAX keys (bits overflow) gives 0" + at);
}

void write_filter_rows(const Handle& handle) {
  const std::string at = std::string(" (") + handle.kind + " handle)";
  const char* keys[] = {"a", "bc", "def"};
  const size_t lengths[] = {1, 2, 3};
  const std::string expected = leveldb_filter(10, {"a", "bc", "def"});
  const size_t length = expected.size();
  std::string out;
  auto write = [&](const leveldb_filterpolicy_t* policy, const char* const* k, const size_t* l, size_t n, size_t out_length) {
    out.assign(length + 8, '\x5a');
    return b.write_filter(policy, k, l, n, &out[0], out_length);
  };
  const auto match_all_written = [&](size_t written) { return written == 2 && out.compare(0, 2, kMatchAll) == 0; };

  CHECK_THAT(write(handle.policy, keys, lengths, 3, length) == length && out.compare(0, length, expected) == 0, "write_filter: exact length gives LevelDB's filter" + at);
  CHECK_THAT(b.write_filter(handle.policy, keys, lengths, 3, nullptr, length) == 0, "write_filter: out NULL gives 0" + at);
  for (size_t short_length : {size_t(0), size_t(1)})
    CHECK_THAT(write(handle.policy, keys, lengths, 3, short_length) == 0 && out == std::string(length + 8, '\x5a'),
        "write_filter: out_length " + std::to_string(short_length) + " gives 0 and writes nothing" + at);
  for (size_t wrong : {size_t(2), length - 1, length + 1})
    CHECK_THAT(match_all_written(write(handle.policy, keys, lengths, 3, wrong)), "write_filter: out_length " + std::to_string(wrong) + " (wrong) gives 00 ff" + at);
  CHECK_THAT(match_all_written(write(nullptr, keys, lengths, 3, length)), "write_filter: policy NULL gives 00 ff");
  CHECK_THAT(match_all_written(write(handle.policy, nullptr, lengths, 3, length)), "write_filter: key_array NULL gives 00 ff" + at);
  CHECK_THAT(match_all_written(write(handle.policy, keys, nullptr, 3, length)), "write_filter: key_length_array NULL gives 00 ff" + at);
  CHECK_THAT(match_all_written(write(handle.policy, nullptr, nullptr, SIZE_MAX, length)), "write_filter: num_keys SIZE_MAX gives 00 ff" + at);
  CHECK_THAT(b.write_filter(handle.policy, keys, lengths, 3, &out[0], SIZE_MAX) == 0, "write_filter: out_length above PTRDIFF_MAX gives 0" + at);
}

void name_and_destroy_rows() {
  int unknown = 0;
  CHECK_THAT(b.name(nullptr) == nullptr, "name: policy NULL gives NULL");
  CHECK_THAT(b.name(reinterpret_cast<const leveldb_filterpolicy_t*>(&unknown)) == nullptr, "name: unknown policy gives NULL");
  b.destroy(nullptr);
  b.policy_destroy(nullptr);
  CHECK_THAT(true, "destroy: NULL is ignored (both names)");
  /* Either destroy function releases either kind of handle. */
  b.policy_destroy(b.create_bloom(10));
  b.destroy(b.policy_create(10));
  b.policy_destroy(b.legacy_create(10));
  b.destroy(b.legacy_create(10));
  CHECK_THAT(true, "destroy: each name releases each kind of handle");
}

/* A destroyed handle is no longer this library's: its "no" becomes 1, for the policy
   made last (whose format a query reads without a lookup while it lives) as for one
   made before it. */
void destroyed_policy_rows() {
  const std::string no_key = leveldb_filter(10, {}); /* answers 0 for every key */
  auto answer = [&](const leveldb_filterpolicy_t* policy) {
    return int(b.key_may_match(policy, "k", 1, no_key.data(), no_key.size()));
  };
  using Make = leveldb_filterpolicy_t* (*)(int);
  const std::pair<const char*, Make> kinds[] = {{"own", b.policy_create},
                                                {"LevelDB-made", b.create_bloom},
                                                {"legacy LevelDB-made", b.legacy_create}};
  for (const auto& kind : kinds) {
    const std::string at = std::string(" (") + kind.first + " handles)";
    leveldb_filterpolicy_t* earlier = kind.second(10);
    leveldb_filterpolicy_t* last = kind.second(10);
    CHECK_THAT(answer(earlier) == 0 && answer(last) == 0, "key_may_match: live policies give 0" + at);
    b.destroy(last);
    CHECK_THAT(answer(last) == 1, "key_may_match: the policy made last, destroyed, gives 1" + at);
    CHECK_THAT(answer(earlier) == 0, "key_may_match: the one made before it still gives 0" + at);
    b.destroy(earlier);
    CHECK_THAT(answer(earlier) == 1, "key_may_match: that one destroyed too gives 1" + at);
  }
}

}  // namespace

int main() {
  b = load_ours::Ours::from_environment(false);
  bits_per_key_rows();
  const Handle handles[] = {{"own", b.policy_create(10), false},
                            {"LevelDB-made", b.create_bloom(10), false},
                            {"legacy LevelDB-made", b.legacy_create(10), true}};
  for (const Handle& handle : handles) {
    create_filter_rows(handle);
    key_may_match_rows(handle);
    filter_sweep_rows(handle);
    filter_length_rows(handle);
    write_filter_rows(handle);
    b.destroy(handle.policy);
  }
  name_and_destroy_rows();
  destroyed_policy_rows();
  std::printf("%ld filter answers compared with LevelDB\n", compared);
  return check_report("bad_inputs");
}
