/* Differential fuzz target: libleveldb_bloom's C API against the real LevelDB.
 *
 * Each input is decoded into a bits_per_key value, a key set, query keys and
 * arbitrary filter bytes, and for a quarter of the inputs one bad argument. Every result of libleveldb_bloom (its own handles, the
 * LevelDB objects it makes when LevelDB is loaded, and LevelDB's C++ wrapper calling
 * back into it) must equal what leveldb::NewBloomFilterPolicy from the system
 * libleveldb gives, and no added key may ever be answered "absent". The legacy
 * policy (leveldb_bloom_legacy_policy_create) is held to LevelDB where its two hash
 * readings agree (keys without a tail byte >= 0x80) and, elsewhere, to never say
 * "absent" where LevelDB says "may match". A mismatch
 * prints the case and aborts, which libFuzzer records as a crash.
 *
 * Built two ways: with clang -fsanitize=fuzzer for `make fuzz`, and with any C++
 * compiler plus replay_main.cc for `make test`, which replays the committed corpus. */
#include "load_ours.h"

#include <leveldb/slice.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

const load_ours::Ours& bloom() {
  static const load_ours::Ours loaded = load_ours::Ours::from_environment(true);
  return loaded;
}

/* Reads the fuzz input front to back; past the end every read gives zeros. */
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t u32() {
    uint32_t value = 0;
    for (int i = 0; i < 4; i++) value |= uint32_t(byte()) << (8 * i);
    return value;
  }
  std::string bytes(size_t n) {
    n = std::min(n, size_ - pos_);
    std::string out(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return out;
  }
  std::string rest() { return bytes(size_ - pos_); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

/* Mostly small values (where filters are realistic), sometimes any int at all, and
   the edges. */
int decode_bits_per_key(Input& in) {
  static const int edges[] = {INT_MIN, -1, 0, INT_MAX, 1 << 16, 1 << 20};
  const uint8_t selector = in.byte();
  if (selector < 200) return selector;
  if (selector < 250) return int(in.u32());
  return edges[(selector - 250) % 6];
}

std::vector<std::string> decode_keys(Input& in) {
  std::vector<std::string> keys(in.byte());
  for (std::string& key : keys) {
    size_t length = in.byte();
    if (length >= 0xf0) length = in.u32() & 0xffff; /* now and then a long key */
    key = in.bytes(length % 0x10000);
  }
  return keys;
}

[[noreturn]] void fail(const char* what, int bits_per_key, size_t num_keys) {
  std::fprintf(stderr, "MISMATCH: %s (bits_per_key %d, %zu keys)\n", what, bits_per_key, num_keys);
  std::abort();
}

void check(bool ok, const char* what, int bits_per_key, size_t num_keys) {
  if (!ok) fail(what, bits_per_key, num_keys);
}

std::string hex(const std::string& bytes) {
  std::string out;
  char digits[4];
  for (unsigned char c : bytes) {
    std::snprintf(digits, sizeof digits, "%02x", c);
    out += digits;
  }
  return out;
}

using load_ours::CKeys;

/* libleveldb_bloom's create_filter through a handle, as a string; "<NULL>" when it
   returns NULL (checked to come with length 0). */
std::string create_filter(const leveldb_filterpolicy_t* policy, const char* const* pointers, const size_t* lengths, int num_keys) {
  size_t length = 12345;
  char* filter = bloom().create_filter(policy, pointers, lengths, num_keys, &length);
  if (filter == nullptr) {
    if (length != 0) fail("NULL filter with non-zero length", -1, 0);
    return "<NULL>";
  }
  std::string out(filter, length);
  std::free(filter);
  return out;
}

std::string create_filter(const leveldb_filterpolicy_t* policy, const CKeys& keys, int num_keys) {
  return create_filter(policy, keys.pointers.data(), keys.lengths.data(), num_keys);
}

const std::string kMatchAll("\x00\xff", 2);

bool bloom_may_match(const leveldb_filterpolicy_t* policy, const std::string& key, const std::string& filter) {
  const uint8_t answer = bloom().key_may_match(policy, key.data(), key.size(), filter.data(), filter.size());
  if (answer > 1) fail("key_may_match answered neither 0 nor 1", -1, 0);
  return answer == 1;
}

/* libleveldb_bloom's batch query of every key at once; each answer must be 0 or 1. */
std::vector<uint8_t> bloom_batch(const leveldb_filterpolicy_t* policy, const std::vector<std::string>& keys, const std::string& filter) {
  const CKeys c_keys(keys);
  std::vector<uint8_t> answers(keys.size(), 2);
  bloom().key_may_match_batch(policy, c_keys.pointers.data(), c_keys.lengths.data(), keys.size(), filter.data(), filter.size(), answers.data());
  for (uint8_t answer : answers)
    if (answer > 1) fail("key_may_match_batch answered neither 0 nor 1", -1, 0);
  return answers;
}

/* The filter length LevelDB builds: max(64, n * bits_per_key) bits in whole
   bytes, plus the k byte. (At most 255 keys here, so 64 bits never overflow.) */
uint64_t expected_filter_length(int bits_per_key, size_t num_keys) {
  const uint64_t bits = std::max<uint64_t>(64, uint64_t(num_keys) * unsigned(bits_per_key));
  return (bits + 7) / 8 + 1;
}

/* Filters are built for real only up to this many bits, to keep each run fast. */
const uint64_t kMaxBuiltBits = uint64_t(1) << 23;

void check_policy(int bits_per_key, const std::vector<std::string>& keys, const std::vector<std::string>& queries) {
  const load_ours::Ours& b = bloom();
  const CKeys c_keys(keys);
  const int n = int(keys.size());
  leveldb_filterpolicy_t* own = b.policy_create(bits_per_key);
  leveldb_filterpolicy_t* wrapped = b.create_bloom(bits_per_key);
  if (bits_per_key < 0) {
    /* Undefined in LevelDB; refused here, and a NULL policy builds the match-all filter. */
    check(own == nullptr && wrapped == nullptr, "negative bits_per_key gave a policy", bits_per_key, keys.size());
    check(create_filter(nullptr, c_keys, n) == kMatchAll, "NULL policy did not give 00 ff", bits_per_key, keys.size());
    return;
  }
  check(own != nullptr && wrapped != nullptr, "policy creation failed", bits_per_key, keys.size());
  check(std::strcmp(b.name(own), "leveldb.BuiltinBloomFilter2") == 0 && std::strcmp(b.name(wrapped), "leveldb.BuiltinBloomFilter2") == 0,
        "wrong name", bits_per_key, keys.size());
  const size_t length = b.filter_length(own, keys.size());
  check(length == expected_filter_length(bits_per_key, keys.size()), "filter_length breaks the formula", bits_per_key, keys.size());
  check(b.filter_length(wrapped, keys.size()) == length, "filter_length differs between handles", bits_per_key, keys.size());

  if (uint64_t(keys.size()) * unsigned(bits_per_key) <= kMaxBuiltBits) {
    std::unique_ptr<const leveldb::FilterPolicy> leveldb_policy(leveldb::NewBloomFilterPolicy(bits_per_key));
    std::string expected;
    leveldb_policy->CreateFilter(c_keys.slices.data(), n, &expected);

    const std::string filter = create_filter(own, c_keys, n);
    if (filter != expected) {
      std::fprintf(stderr, "ours    %s\nleveldb %s\n", hex(filter).c_str(), hex(expected).c_str());
      fail("create_filter differs from LevelDB", bits_per_key, keys.size());
    }
    check(filter.size() == length, "filter is not filter_length bytes", bits_per_key, keys.size());
    check(create_filter(wrapped, c_keys, n) == expected, "create_filter on a LevelDB-made handle differs", bits_per_key, keys.size());

    /* LevelDB's own C++ wrapper object calling back into libleveldb_bloom. */
    const auto* as_leveldb = reinterpret_cast<const leveldb::FilterPolicy*>(wrapped);
    std::string through_leveldb = "prefix";
    as_leveldb->CreateFilter(c_keys.slices.data(), n, &through_leveldb);
    check(through_leveldb == "prefix" + expected, "LevelDB's wrapper built another filter", bits_per_key, keys.size());
    check(std::strcmp(as_leveldb->Name(), "leveldb.BuiltinBloomFilter2") == 0, "LevelDB's wrapper has another name", bits_per_key, keys.size());

    std::string written(length, '\x55');
    check(b.write_filter(own, c_keys.pointers.data(), c_keys.lengths.data(), keys.size(), &written[0], length) == length && written == expected,
          "write_filter differs from LevelDB", bits_per_key, keys.size());

    for (const std::string& key : keys) {
      check(bloom_may_match(own, key, filter), "FALSE NEGATIVE", bits_per_key, keys.size());
      check(as_leveldb->KeyMayMatch(key, filter), "FALSE NEGATIVE through LevelDB's wrapper", bits_per_key, keys.size());
    }
    const std::vector<uint8_t> batch = bloom_batch(own, queries, filter);
    for (size_t i = 0; i < queries.size(); i++) {
      const bool reference = leveldb_policy->KeyMayMatch(queries[i], filter);
      check(bloom_may_match(own, queries[i], filter) == reference, "key_may_match differs from LevelDB", bits_per_key, keys.size());
      check(bloom_may_match(wrapped, queries[i], filter) == reference, "key_may_match on a LevelDB-made handle differs", bits_per_key, keys.size());
      check(batch[i] == reference, "key_may_match_batch differs from LevelDB", bits_per_key, keys.size());
    }
  }
  b.destroy(own);
  b.destroy(wrapped);
}

/* Whether the legacy policy's answer `ours` fits LevelDB's `reference` for `key`: equal
   where the two hash readings agree, never "absent" against a "may match" elsewhere. */
bool legacy_agrees(bool ours, bool reference, const std::string& key) {
  return load_ours::tail_is_ambiguous(key) ? ours || !reference : ours == reference;
}

/* The legacy policy on the same keys: filters of LevelDB's length, equal to LevelDB's
   when no key has a high tail byte and a superset of its bits otherwise; every key
   found in its own filter and in LevelDB's, through both kinds of handle. */
void check_legacy_policy(int bits_per_key, const std::vector<std::string>& keys, const std::vector<std::string>& queries) {
  const load_ours::Ours& b = bloom();
  const CKeys c_keys(keys);
  const int n = int(keys.size());
  const auto legacy_check = [&](bool ok, const char* what) { check(ok, what, bits_per_key, keys.size()); };
  leveldb_filterpolicy_t* legacy = b.legacy_create(bits_per_key);
  if (bits_per_key < 0) return legacy_check(legacy == nullptr, "negative bits_per_key gave a legacy policy");
  legacy_check(legacy != nullptr && std::strcmp(b.name(legacy), "leveldb.BuiltinBloomFilter") == 0, "legacy policy: creation or name");
  const size_t length = b.filter_length(legacy, keys.size());
  legacy_check(length == expected_filter_length(bits_per_key, keys.size()), "legacy filter_length breaks the formula");
  if (uint64_t(keys.size()) * unsigned(bits_per_key) <= kMaxBuiltBits) {
    std::unique_ptr<const leveldb::FilterPolicy> leveldb_policy(leveldb::NewBloomFilterPolicy(bits_per_key));
    std::string expected;
    leveldb_policy->CreateFilter(c_keys.slices.data(), n, &expected);
    const std::string filter = create_filter(legacy, c_keys, n);
    legacy_check(filter.size() == expected.size() && filter.back() == expected.back(), "legacy filter: length or k differs");
    bool superset = true;
    for (size_t i = 0; i < filter.size(); i++) superset &= (expected[i] & ~filter[i]) == 0;
    legacy_check(superset, "legacy filter lacks a bit of LevelDB's");
    if (std::none_of(keys.begin(), keys.end(), load_ours::tail_is_ambiguous))
      legacy_check(filter == expected, "legacy filter differs from LevelDB's without high tail bytes");
    std::string written(length, '\x55');
    legacy_check(b.write_filter(legacy, c_keys.pointers.data(), c_keys.lengths.data(), keys.size(), &written[0], length) == length && written == filter,
                 "legacy write_filter differs from create_filter");
    const auto* as_leveldb = reinterpret_cast<const leveldb::FilterPolicy*>(legacy);
    legacy_check(std::strcmp(as_leveldb->Name(), "leveldb.BuiltinBloomFilter") == 0, "LevelDB's legacy wrapper has another name");
    for (const std::string& key : keys)
      legacy_check(bloom_may_match(legacy, key, filter) && bloom_may_match(legacy, key, expected) && as_leveldb->KeyMayMatch(key, filter),
                   "FALSE NEGATIVE (legacy policy)");
    const std::vector<uint8_t> batch = bloom_batch(legacy, queries, filter);
    for (size_t i = 0; i < queries.size(); i++) {
      const bool ours = bloom_may_match(legacy, queries[i], filter);
      legacy_check(batch[i] == ours, "legacy key_may_match_batch differs from key_may_match");
      legacy_check(legacy_agrees(ours, leveldb_policy->KeyMayMatch(queries[i], filter), queries[i]), "legacy key_may_match disagrees with LevelDB");
    }
  }
  b.destroy(legacy);
}

/* One bad argument, chosen by the input, in an otherwise valid call, on both kinds
   of handle: the result must be the documented one (README, "Every bad input"). */
void check_bad_input(uint8_t kind, uint32_t arg, int bits_per_key, const std::vector<std::string>& keys) {
  if (bits_per_key < 0 || uint64_t(keys.size()) * unsigned(bits_per_key) > kMaxBuiltBits) return;
  const load_ours::Ours& b = bloom();
  const CKeys c(keys);
  const int n = int(keys.size());
  std::unique_ptr<const leveldb::FilterPolicy> reference(leveldb::NewBloomFilterPolicy(bits_per_key));
  const auto bad = [&](bool ok, const char* what) { check(ok, what, bits_per_key, keys.size()); };
  int unknown = 0;
  const auto* not_a_policy = reinterpret_cast<const leveldb_filterpolicy_t*>(&unknown);

  std::string reference_filter;
  reference->CreateFilter(c.slices.data(), n, &reference_filter);
  leveldb_filterpolicy_t* legacy = b.legacy_create(bits_per_key);
  /* Each handle with its filter of the valid call: LevelDB's, or (legacy) its own,
     which check_legacy_policy holds to LevelDB's. */
  const std::pair<leveldb_filterpolicy_t*, std::string> handles[] = {
      {b.policy_create(bits_per_key), reference_filter},
      {b.create_bloom(bits_per_key), reference_filter},
      {legacy, create_filter(legacy, c, n)}};
  for (const auto& handle : handles) {
    leveldb_filterpolicy_t* policy = handle.first;
    const std::string& expected = handle.second;
    switch (kind % 8) {
      case 0:
        bad(create_filter(policy, nullptr, c.lengths.data(), n) == (n == 0 ? expected : kMatchAll), "key_array NULL");
        break;
      case 1:
        bad(create_filter(policy, c.pointers.data(), nullptr, n) == (n == 0 ? expected : kMatchAll), "key_length_array NULL");
        break;
      case 2: {
        if (n == 0) break;
        const size_t i = arg % keys.size();
        std::vector<const char*> pointers = c.pointers;
        pointers[i] = nullptr;
        bad(create_filter(policy, pointers.data(), c.lengths.data(), n) == (keys[i].empty() ? expected : kMatchAll), "a NULL key");
        break;
      }
      case 3:
        bad(create_filter(policy, c, -1 - int(arg & INT_MAX)) == kMatchAll, "negative num_keys");
        break;
      case 4:
        bad(b.create_filter(policy, c.pointers.data(), c.lengths.data(), n, nullptr) == nullptr, "filter_length NULL");
        break;
      case 5:
        bad(create_filter(not_a_policy, c, n) == kMatchAll && b.name(not_a_policy) == nullptr &&
                b.filter_length(not_a_policy, keys.size()) == 0 &&
                b.key_may_match(not_a_policy, "", 0, expected.data(), expected.size()) == 1,
            "unknown policy");
        break;
      case 6: {
        const int delta = int(int8_t(arg)) | 1; /* never 0: a wrong length */
        const size_t out_length = size_t(std::max<long>(0, long(expected.size()) + delta));
        std::string out(expected.size() + 128, '\x5a');
        const size_t written = b.write_filter(policy, c.pointers.data(), c.lengths.data(), keys.size(), &out[0], out_length);
        bad(out_length < 2 ? written == 0 && out == std::string(expected.size() + 128, '\x5a')
                           : written == 2 && out.compare(0, 2, kMatchAll) == 0,
            "write_filter with a wrong out_length");
        break;
      }
      default: {
        const size_t key_length = arg & 0xff, filter_length = (arg >> 8) & 0xff;
        bad(b.key_may_match(policy, nullptr, key_length, expected.data(), expected.size()) ==
                (key_length > 0 ? 1 : reference->KeyMayMatch("", expected)),
            "key NULL");
        bad(b.key_may_match(policy, "k", 1, nullptr, filter_length) == (filter_length > 0 ? 1 : 0), "filter NULL");
      }
    }
    b.destroy(policy);
  }
}

/* Any bytes at all as a filter: LevelDB's KeyMayMatch does not depend on the policy's
   bits_per_key, so one policy of each side answers for all. */
void check_arbitrary_filter(const std::string& filter, const std::vector<std::string>& queries) {
  static const leveldb_filterpolicy_t* own = bloom().policy_create(10);
  static const leveldb_filterpolicy_t* legacy = bloom().legacy_create(10);
  static const leveldb::FilterPolicy* reference = leveldb::NewBloomFilterPolicy(10);
  const std::vector<uint8_t> batch = bloom_batch(own, queries, filter);
  const std::vector<uint8_t> legacy_batch = bloom_batch(legacy, queries, filter);
  for (size_t i = 0; i < queries.size(); i++) {
    const bool expected = reference->KeyMayMatch(queries[i], filter);
    const bool legacy_answer = bloom_may_match(legacy, queries[i], filter);
    if (bloom_may_match(own, queries[i], filter) != expected || batch[i] != expected ||
        legacy_batch[i] != legacy_answer || !legacy_agrees(legacy_answer, expected, queries[i])) {
      std::fprintf(stderr, "filter %s\nkey    %s\n", hex(filter).c_str(), hex(queries[i]).c_str());
      fail("key_may_match on arbitrary bytes differs from LevelDB", -1, 0);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  bloom();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  /* A quarter of the inputs also pass one bad argument, of a kind and value chosen here. */
  const uint8_t shape = in.byte();
  const uint32_t bad_arg = shape >= 0xc0 ? in.u32() : 0;
  const int bits_per_key = decode_bits_per_key(in);
  const std::vector<std::string> keys = decode_keys(in);
  const std::string tail = in.rest();

  /* Queries: every added key with its last byte changed, the empty key, and windows
     of the tail; the tail is also the arbitrary filter, so some queries fit it. */
  std::vector<std::string> queries{std::string()};
  for (std::string key : keys) {
    if (!key.empty()) key.back() ^= 0x01;
    queries.push_back(key);
  }
  for (size_t start = 0; start < tail.size() && queries.size() < keys.size() + 32; start += 1 + tail.size() / 16)
    queries.push_back(tail.substr(start, 1 + tail[start] % 16));

  check_policy(bits_per_key, keys, queries);
  check_legacy_policy(bits_per_key, keys, queries);
  if (shape >= 0xc0) check_bad_input(shape, bad_arg, bits_per_key, keys);
  queries.insert(queries.end(), keys.begin(), keys.end());
  check_arbitrary_filter(tail, queries);
  /* The same bytes with each k byte where LevelDB's reading changes, so that every
     input (and every replay of the corpus) crosses those boundaries. */
  for (const char k : {'\x00', '\x01', '\x1d', '\x1e', '\x1f', '\x80', '\xff'}) {
    std::string filter = tail;
    if (filter.empty()) break;
    filter.back() = k;
    check_arbitrary_filter(filter, queries);
  }
  return 0;
}
