// The batch query and filter building of libleveldb_bloom, at whatever SIMD level
// this process runs (LEVELDB_BLOOM_SIMD; tests/suite/harnesses.rs runs it once per level),
// against LevelDB's own policy and against our one-key answers; and every bad input
// of leveldb_filterpolicy_key_may_match_batch.
//
//   batch_test LIBRARY [--level]   prints "simd level: NAME", then (without --level,
//                                  only where each side's code lives) checks;
//                                  reports and exits as check.h says
//
// LevelDB is linked; ours is loaded with RTLD_LOCAL (c_tests/load_ours.h), and the
// start of the run checks that each side's code lives where it should.

#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "load_ours.h"
#include "splitmix.h"

namespace {

using load_ours::Ours;

// Keys with every byte value: of one fixed length, or of mixed lengths 0..120.
std::vector<std::string> make_keys(size_t count, int length, uint64_t seed) {
  Random random(seed);
  std::vector<std::string> keys;
  for (size_t i = 0; i < count; i++) {
    size_t n = length >= 0 ? size_t(length) : random.Below(121);
    std::string key;
    for (size_t j = 0; j < n; j++) key.push_back(char(random.Byte()));
    keys.push_back(key);
  }
  return keys;
}

using Keys = load_ours::CKeys;

struct Test {
  Ours& ours;
  leveldb_filterpolicy_t* policy;

  // The batch, in chunks of `chunk` keys, against LevelDB and our one-key answers.
  void compare_queries(const leveldb::FilterPolicy& leveldb, const Keys& queries,
                       const std::string& filter, const std::string& what) {
    size_t n = queries.pointers.size();
    std::vector<uint8_t> expected(n), single(n);
    for (size_t i = 0; i < n; i++) {
      expected[i] = leveldb.KeyMayMatch(queries.slices[i], leveldb::Slice(filter));
      single[i] = ours.key_may_match(policy, queries.pointers[i], queries.lengths[i],
                                     filter.data(), filter.size());
    }
    CHECK_THAT(single == expected, what + ": one key per call differs from LevelDB");
    for (size_t chunk : {size_t(1), size_t(7), size_t(16), size_t(64), size_t(65), n}) {
      if (chunk == 0) continue;
      std::vector<uint8_t> got(n, 7);
      for (size_t i = 0; i < n; i += chunk) {
        size_t count = std::min(chunk, n - i);
        ours.key_may_match_batch(policy, &queries.pointers[i], &queries.lengths[i], count,
                                 filter.data(), filter.size(), &got[i]);
      }
      CHECK_THAT(got == expected, what + ": batch of " + std::to_string(chunk) + " differs");
    }
  }

  // Our filter of `n` keys against LevelDB's, then queries of those keys and 1500
  // others (compare_queries).
  void check_filter(const leveldb::FilterPolicy& leveldb, leveldb_filterpolicy_t* ours_policy,
                    int bits_per_key, size_t n, int length) {
    uint64_t seed = 1000 * uint64_t(bits_per_key) + n + uint64_t(length + 7) * 7919;
    std::vector<std::string> added = make_keys(n, length, seed);
    Keys keys(added);
    std::string expected;
    leveldb.CreateFilter(keys.slices.data(), int(n), &expected);
    size_t filter_length = 0;
    char* filter = ours.create_filter(ours_policy, keys.pointers.data(), keys.lengths.data(),
                                      int(n), &filter_length);
    std::string what = "bits_per_key " + std::to_string(bits_per_key) + ", " +
                       std::to_string(n) + " keys of length " + std::to_string(length);
    CHECK_THAT(filter != nullptr && std::string(filter, filter_length) == expected,
               what + ": filter bytes differ");
    std::free(filter);
    std::vector<std::string> queries = added;
    std::vector<std::string> absent = make_keys(1500, length, seed ^ 0xabcdef);
    queries.insert(queries.end(), absent.begin(), absent.end());
    compare_queries(leveldb, Keys(queries), expected, what);
  }

  // Small filters: every bits_per_key, key count and key length of interest; and
  // filters over 256 KiB, which the AVX-512 batch reads by gathers of 32-bit words
  // (core/src/simd/avx512_probes.rs), their last word partial (625,002 and
  // 1,437,503 bytes).
  void filters_and_queries() {
    for (int bits_per_key : {1, 4, 10, 23, 40}) {
      const leveldb::FilterPolicy* leveldb = leveldb::NewBloomFilterPolicy(bits_per_key);
      leveldb_filterpolicy_t* ours_policy = ours.policy_create(bits_per_key);
      for (size_t n : {0, 1, 15, 16, 17, 100, 1000, 5000})
        for (int length : {-1, 16, 100, 3, 21, 0})
          check_filter(*leveldb, ours_policy, bits_per_key, n, length);
      if (bits_per_key == 10 || bits_per_key == 23)
        for (int length : {-1, 16}) check_filter(*leveldb, ours_policy, bits_per_key, 500001, length);
      ours.policy_destroy(ours_policy);
      delete leveldb;
    }
  }

  // Filters of arbitrary bytes, every interesting k byte.
  void foreign_filters() {
    const leveldb::FilterPolicy* leveldb = leveldb::NewBloomFilterPolicy(10);
    std::vector<std::string> queries = make_keys(300, -1, 99);
    Keys keys(queries);
    Random random(5);
    for (size_t length = 0; length <= 200; length++) {
      for (int k : {0, 1, 2, 6, 29, 30, 31, 0x80, 0xff}) {
        std::string filter;
        for (size_t i = 0; i < length; i++) filter.push_back(char(random.Byte()));
        if (length > 0) filter[length - 1] = char(k);
        compare_queries(*leveldb, keys, filter,
                        "foreign filter of " + std::to_string(length) + " bytes, k " +
                            std::to_string(k));
      }
    }
    delete leveldb;
  }

  void bad_inputs() {
    const leveldb::FilterPolicy* leveldb = leveldb::NewBloomFilterPolicy(10);
    std::vector<std::string> added = make_keys(100, 16, 3);
    std::vector<std::string> queries = make_keys(50, 16, 4);
    queries.insert(queries.end(), added.begin(), added.end());
    Keys keys(added), query_keys(queries);
    std::string filter;
    leveldb->CreateFilter(keys.slices.data(), 100, &filter);
    size_t n = queries.size();
    std::vector<uint8_t> expected(n), got(n);
    for (size_t i = 0; i < n; i++)
      expected[i] = leveldb->KeyMayMatch(query_keys.slices[i], leveldb::Slice(filter));
    CHECK_THAT(std::count(expected.begin(), expected.end(), 0) > 0, "some absent keys answer 0");
    auto batch = [&](const leveldb_filterpolicy_t* p, const char* const* k, const size_t* l,
                     size_t count, const char* f, size_t fl, uint8_t* r) {
      ours.key_may_match_batch(p, k, l, count, f, fl, r);
    };
    auto all = [&](uint8_t value) {
      return std::count(got.begin(), got.end(), value) == std::ptrdiff_t(n);
    };
    const char* const* ks = query_keys.pointers.data();
    const size_t* ls = query_keys.lengths.data();

    std::fill(got.begin(), got.end(), 7);
    batch(nullptr, ks, ls, n, filter.data(), filter.size(), got.data());
    CHECK_THAT(all(1), "NULL policy: every result 1");
    int not_a_policy = 0;
    std::fill(got.begin(), got.end(), 7);
    batch(reinterpret_cast<const leveldb_filterpolicy_t*>(&not_a_policy), ks, ls, n,
          filter.data(), filter.size(), got.data());
    CHECK_THAT(all(1), "unknown policy: every result 1");
    batch(policy, ks, ls, n, filter.data(), filter.size(), nullptr);
    CHECK_THAT(true, "NULL results: nothing written, no crash");
    std::fill(got.begin(), got.end(), 7);
    batch(policy, ks, ls, 0, filter.data(), filter.size(), got.data());
    CHECK_THAT(all(7), "num_keys 0: nothing written");
    batch(policy, nullptr, nullptr, 0, filter.data(), filter.size(), got.data());
    CHECK_THAT(all(7), "num_keys 0 with NULL arrays: nothing written");
    std::fill(got.begin(), got.end(), 7);
    batch(policy, nullptr, ls, n, filter.data(), filter.size(), got.data());
    CHECK_THAT(all(1), "NULL key_array: every result 1");
    std::fill(got.begin(), got.end(), 7);
    batch(policy, ks, nullptr, n, filter.data(), filter.size(), got.data());
    CHECK_THAT(all(1), "NULL key_length_array: every result 1");
    std::fill(got.begin(), got.end(), 7);
    batch(policy, ks, ls, n, nullptr, filter.size(), got.data());
    CHECK_THAT(all(1), "NULL filter with a length: every result 1");
    std::fill(got.begin(), got.end(), 7);
    batch(policy, ks, ls, n, nullptr, 0, got.data());
    CHECK_THAT(all(0), "NULL filter of length 0: every result 0, as LevelDB on an empty filter");

    // NULL keys: with a length, that key may match; of length 0, the empty key.
    std::vector<const char*> pointers = query_keys.pointers;
    std::vector<size_t> lengths = query_keys.lengths;
    std::vector<uint8_t> want = expected;
    for (size_t i = 0; i < n; i += 3) {
      pointers[i] = nullptr;
      if (i % 2 == 0) {
        want[i] = 1;
      } else {
        lengths[i] = 0;
        want[i] = leveldb->KeyMayMatch(leveldb::Slice(), leveldb::Slice(filter));
      }
    }
    std::fill(got.begin(), got.end(), 7);
    batch(policy, pointers.data(), lengths.data(), n, filter.data(), filter.size(),
          got.data());
    CHECK_THAT(got == want, "NULL keys: 1 with a length, the empty key without");

    // Keys of one length are read by their pointers alone (src/ops.rs): one NULL key,
    // or one key of another length, among them sends the batch the general way.
    for (size_t at : {size_t(0), n / 2, n - 1}) {
      std::vector<const char*> one_null = query_keys.pointers;
      one_null[at] = nullptr;
      want = expected;
      want[at] = 1;
      std::fill(got.begin(), got.end(), 7);
      batch(policy, one_null.data(), ls, n, filter.data(), filter.size(), got.data());
      CHECK_THAT(got == want, "one NULL key among keys of one length: 1 for it");
      std::vector<size_t> one_shorter = query_keys.lengths;
      one_shorter[at] = 15;
      want = expected;
      want[at] = leveldb->KeyMayMatch(leveldb::Slice(ks[at], 15), leveldb::Slice(filter));
      std::fill(got.begin(), got.end(), 7);
      batch(policy, ks, one_shorter.data(), n, filter.data(), filter.size(), got.data());
      CHECK_THAT(got == want, "one shorter key among keys of one length: as LevelDB");
    }
    std::vector<size_t> all_huge(n, SIZE_MAX);
    std::fill(got.begin(), got.end(), 7);
    batch(policy, ks, all_huge.data(), n, filter.data(), filter.size(), got.data());
    CHECK_THAT(all(1), "every key of one length above PTRDIFF_MAX: every result 1");
    delete leveldb;
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LIBRARY [--level]\n", argv[0]);
    return 2;
  }
  Ours ours(argv[1]);
  const leveldb::FilterPolicy* leveldb = leveldb::NewBloomFilterPolicy(10);
  // Each side's code is where it should be: ours in our library, LevelDB's policy in
  // LevelDB's.
  std::string our_object =
      load_ours::object_of(reinterpret_cast<void*>(ours.key_may_match_batch));
  std::string leveldb_object = load_ours::object_of_class(leveldb);
  CHECK_THAT(our_object.find("libleveldb_bloom") != std::string::npos, "ours is " + our_object);
  CHECK_THAT(leveldb_object.find("libleveldb.so") != std::string::npos,
        "LevelDB's policy is " + leveldb_object);
  delete leveldb;
  std::printf("simd level: %s\n", ours.simd_level());
  if (argc == 3 && std::strcmp(argv[2], "--level") == 0) return check_report("batch_test");

  leveldb_filterpolicy_t* policy = ours.policy_create(10);
  Test test{ours, policy};
  test.filters_and_queries();
  test.foreign_filters();
  test.bad_inputs();
  ours.policy_destroy(policy);

  return check_report("batch_test");
}
