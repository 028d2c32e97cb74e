// The reference harness: libleveldb_bloom against the real LevelDB 1.23
// (leveldb::NewBloomFilterPolicy), over fixed edge cases and generated cases with
// fixed seeds: filters byte for byte, KeyMayMatch answers bit for bit.
//
// Usage: reference_test <path of libleveldb_bloom.so> [random cases] [--quick]
// (--quick leaves out the one 256 MiB filter, for slow runs under valgrind.)
//
// The two libraries export some of the same names, so they are kept apart: this
// program links LevelDB (-lleveldb) and never links ours; ours is loaded with
// dlopen(RTLD_LOCAL), so none of its symbols enters the global scope, and every one
// of its functions is called through a pointer from dlsym on that handle. dladdr
// then proves each pointer lies in the library it should: ours in
// libleveldb_bloom.so, LevelDB's (the factory, the policy's vtable) in
// libleveldb.so.
//
// Our side makes its policies with leveldb_bloom_policy_create and
// leveldb_filterpolicy_create_bloom: objects of its own with LevelDB's FilterPolicy
// ABI (their vtables and functions in libleveldb_bloom.so, none in LevelDB), used
// through our C API and through LevelDB's own C++ interface, as a database would.
//
// Prints the number of cases compared; exits 0 when everything agreed.
#include <leveldb_bloom.h>  // types only: every call to ours goes through dlsym

#include <dlfcn.h>
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "check.h"
#include "load_ours.h"
#include "splitmix.h"

namespace {

// ---------------------------------------------------------------------------
// Where code lives, according to the dynamic linker.

// Whether `address` lies in the library whose file name starts with `library`
// ("libleveldb.so" for LevelDB's libleveldb.so.1d, "libleveldb_bloom.so" for ours).
bool DefinedIn(const void* address, const char* library) {
  const std::string object = load_ours::object_of(address);
  const size_t slash = object.rfind('/');
  const bool inside =
      object.compare(slash == std::string::npos ? 0 : slash + 1, std::strlen(library), library) == 0;
  if (!inside) {
    std::fprintf(stderr, "  %p lies in \"%s\", not in %s\n", address, object.c_str(), library);
  }
  return inside;
}

template <typename Function>
const void* AddressOf(Function function) {
  return reinterpret_cast<const void*>(function);
}

// The vtable pointer of a C++ object: the first word, by the Itanium C++ ABI.
const void* const* VtableOf(const void* object) {
  return *static_cast<const void* const* const*>(object);
}

constexpr const char kOurLibrary[] = "libleveldb_bloom.so";
constexpr const char kLevelDb[] = "libleveldb.so";

// ---------------------------------------------------------------------------
// Our library, loaded with RTLD_LOCAL, every function from dlsym on its handle
// (load_ours.h dies unless each comes from the library it opened).

using load_ours::Ours;

// The two libraries are apart, and each call below reaches the one it names.
void CheckSeparation(const Ours& ours) {
  // Every function of ours is in libleveldb_bloom...
  for (const void* function :
       {AddressOf(ours.create_bloom), AddressOf(ours.policy_create), AddressOf(ours.destroy),
        AddressOf(ours.name), AddressOf(ours.create_filter), AddressOf(ours.key_may_match),
        AddressOf(ours.filter_length), AddressOf(ours.write_filter), AddressOf(ours.swap_status)})
    CHECK(DefinedIn(function, kOurLibrary));
  // ...and nothing of ours is visible to the program or to LevelDB...
  CHECK(dlsym(RTLD_DEFAULT, "leveldb_bloom_policy_create") == nullptr);
  // ...so the C++ factory the program calls is LevelDB's, not the one ours exports.
  CHECK(DefinedIn(AddressOf(&leveldb::NewBloomFilterPolicy), kLevelDb));
  const leveldb::FilterPolicy* theirs = leveldb::NewBloomFilterPolicy(10);
  // Slots 0..4: two destructors, Name, CreateFilter, KeyMayMatch.
  CHECK(DefinedIn(VtableOf(theirs), kLevelDb));
  for (int slot = 0; slot < 5; slot++) CHECK(DefinedIn(VtableOf(theirs)[slot], kLevelDb));
  CHECK(std::strcmp(theirs->Name(), "leveldb.BuiltinBloomFilter2") == 0);
  delete theirs;

  // LevelDB is in the process, but the program's names bind to LevelDB: no swap.
  CHECK(ours.swap_status() == 0);
  leveldb_filterpolicy_t* own = ours.policy_create(10);
  leveldb_filterpolicy_t* wrapper = ours.create_bloom(10);
  CHECK(own != nullptr && wrapper != nullptr);
  // create_bloom made an object of this library's own (its vtable and functions are
  // ours, none LevelDB's) ...
  CHECK(DefinedIn(VtableOf(wrapper), kOurLibrary));
  for (int slot = 0; slot < 5; slot++) CHECK(DefinedIn(VtableOf(wrapper)[slot], kOurLibrary));
  const char* name = ours.name(own);
  CHECK(name != nullptr && std::strcmp(name, "leveldb.BuiltinBloomFilter2") == 0);
  CHECK(ours.name(wrapper) == name);
  // ... that LevelDB's C++ interface names by our static string.
  CHECK(reinterpret_cast<const leveldb::FilterPolicy*>(wrapper)->Name() == name);
  ours.destroy(own);
  ours.destroy(wrapper);
}

// ---------------------------------------------------------------------------
// Deterministic generation (splitmix.h), fixed seeds.

// Key bytes: uniform, or (one time in four) only bytes >= 0x80, the tail bytes a
// sign-extending hash would get wrong.
std::string RandomKey(Random& random, size_t length) {
  const bool high = random.OneIn(4);
  std::string key(length, '\0');
  for (char& c : key) c = static_cast<char>(random.Byte() | (high ? 0x80 : 0));
  return key;
}

// A key length: mostly short, as real keys are, up to 300 bytes.
size_t RandomKeyLength(Random& random) {
  switch (random.Below(4)) {
    case 0:
      return random.Below(5);
    case 1:
    case 2:
      return random.Below(33);
    default:
      return random.Below(301);
  }
}

// Keys in the three shapes the two APIs take.
class KeySet {
 public:
  void Add(std::string key) { keys_.push_back(std::move(key)); }
  size_t size() const { return keys_.size(); }
  const std::string& operator[](size_t i) const { return keys_[i]; }

  // Call after the last Add.
  void Freeze() {
    for (const std::string& key : keys_) {
      // Every other empty key is passed as NULL, documented as the empty key too.
      pointers_.push_back(key.empty() && pointers_.size() % 2 == 0 ? nullptr : key.data());
      lengths_.push_back(key.size());
      slices_.emplace_back(key);
    }
  }
  const char* const* pointers() const { return pointers_.data(); }
  const size_t* lengths() const { return lengths_.data(); }
  const leveldb::Slice* slices() const { return slices_.data(); }

 private:
  std::vector<std::string> keys_;
  std::vector<const char*> pointers_;
  std::vector<size_t> lengths_;
  std::vector<leveldb::Slice> slices_;
};

// ---------------------------------------------------------------------------
// The comparison.

struct Tally {
  uint64_t filters = 0;       // filters built by LevelDB and by every way of ours
  uint64_t filter_bytes = 0;  // their total size
  uint64_t queries = 0;       // (key, filter) pairs answered by LevelDB and every way of ours
  uint64_t foreign = 0;       // arbitrary byte strings queried as filters
  uint64_t mismatches = 0;
};

Tally tally;

bool Report(bool ok) {
  if (!ok && ++tally.mismatches > 20) {
    std::fprintf(stderr, "too many mismatches\n");
    std::exit(1);
  }
  return CHECK(ok);
}

// The ways our library builds a filter, and answers a query.
constexpr int kWays = 5;
constexpr const char* kWayNames[kWays] = {
    "create_filter on our own handle", "create_filter on the LevelDB wrapper",
    "write_filter on our own handle", "write_filter on the LevelDB wrapper",
    "LevelDB's CreateFilter on the wrapper (our callback)"};
constexpr int kQueryWays = 3;
constexpr const char* kQueryWayNames[kQueryWays] = {
    "key_may_match on our own handle", "key_may_match on the LevelDB wrapper",
    "LevelDB's KeyMayMatch on the wrapper (our callback)"};

// One bits_per_key, as LevelDB's policy and as our two kinds of handle.
class Policies {
 public:
  Policies(const Ours& ours, int bits_per_key)
      : ours_(ours),
        bits_per_key_(bits_per_key),
        theirs_(leveldb::NewBloomFilterPolicy(bits_per_key)),
        own_(ours.policy_create(bits_per_key)),
        wrapper_(ours.create_bloom(bits_per_key)) {
    if (own_ == nullptr || wrapper_ == nullptr) {
      std::fprintf(stderr, "cannot create our policies at %d bits per key\n", bits_per_key);
      std::exit(2);
    }
  }
  ~Policies() {
    delete theirs_;
    ours_.destroy(own_);
    ours_.destroy(wrapper_);
  }
  Policies(const Policies&) = delete;
  Policies& operator=(const Policies&) = delete;

  // LevelDB's filter for `keys`, after checking every way of ours builds the same.
  std::string CompareFilters(const KeySet& keys, const char* label) {
    const int n = static_cast<int>(keys.size());
    std::string reference;
    theirs_->CreateFilter(keys.slices(), n, &reference);
    for (int way = 0; way < kWays; way++) {
      const std::string filter = OurFilter(way, keys);
      if (!Report(filter == reference)) {
        std::fprintf(stderr, "  filter differs: %s, %d bits per key, %d keys, by %s\n", label,
                     bits_per_key_, n, kWayNames[way]);
        check_dump("ours", filter.data(), filter.size());
        check_dump("LevelDB", reference.data(), reference.size());
      }
    }
    tally.filters++;
    tally.filter_bytes += reference.size();
    return reference;
  }

  // Checks every way of ours answers `key` on `filter` as LevelDB; returns LevelDB's answer.
  bool CompareQuery(const std::string& key, const std::string& filter, const char* label) {
    const leveldb::Slice key_slice(key), filter_slice(filter);
    const bool reference = theirs_->KeyMayMatch(key_slice, filter_slice);
    // Every other empty key or filter is passed as NULL, documented as empty too.
    const bool null_if_empty = tally.queries % 2 == 0;
    const char* key_pointer = key.empty() && null_if_empty ? nullptr : key.data();
    const char* filter_pointer = filter.empty() && null_if_empty ? nullptr : filter.data();
    const uint8_t answers[kQueryWays] = {
        ours_.key_may_match(own_, key_pointer, key.size(), filter_pointer, filter.size()),
        ours_.key_may_match(wrapper_, key_pointer, key.size(), filter_pointer, filter.size()),
        static_cast<uint8_t>(AsLevelDb()->KeyMayMatch(key_slice, filter_slice) ? 1 : 0),
    };
    for (int way = 0; way < kQueryWays; way++) {
      if (!Report(answers[way] == (reference ? 1 : 0))) {
        std::fprintf(stderr, "  answer differs: %s, by %s: ours %d, LevelDB %d\n", label,
                     kQueryWayNames[way], answers[way], reference ? 1 : 0);
        check_dump("key", key.data(), key.size());
        check_dump("filter", filter.data(), filter.size());
      }
    }
    tally.queries++;
    return reference;
  }

 private:
  // The LevelDB object create_bloom returned, seen as LevelDB sees it.
  const leveldb::FilterPolicy* AsLevelDb() const {
    return reinterpret_cast<const leveldb::FilterPolicy*>(wrapper_);
  }

  std::string OurFilter(int way, const KeySet& keys) const {
    const int n = static_cast<int>(keys.size());
    const leveldb_filterpolicy_t* handle = way % 2 == 0 ? own_ : wrapper_;
    switch (way) {
      case 0:
      case 1: {
        size_t length = 0;
        char* filter = ours_.create_filter(handle, keys.pointers(), keys.lengths(), n, &length);
        std::string result = filter != nullptr ? std::string(filter, length) : std::string();
        std::free(filter);
        return result;
      }
      case 2:
      case 3: {
        const size_t length = ours_.filter_length(handle, keys.size());
        std::string result(length, '\xaa');
        const size_t written = ours_.write_filter(handle, keys.pointers(), keys.lengths(),
                                                  keys.size(), &result[0], length);
        result.resize(written);
        return result;
      }
      default: {
        std::string result;
        AsLevelDb()->CreateFilter(keys.slices(), n, &result);
        return result;
      }
    }
  }

  const Ours& ours_;
  const int bits_per_key_;
  const leveldb::FilterPolicy* const theirs_;
  leveldb_filterpolicy_t* const own_;
  leveldb_filterpolicy_t* const wrapper_;
};

// Builds the filter of `keys` both ways, then queries every key (which LevelDB must
// find) and `absent` fresh keys.
void CompareCase(const Ours& ours, int bits_per_key, KeySet& keys, Random& random, size_t absent,
                 const char* label) {
  keys.Freeze();
  Policies policies(ours, bits_per_key);
  const std::string filter = policies.CompareFilters(keys, label);
  for (size_t i = 0; i < keys.size(); i++) {
    CHECK(policies.CompareQuery(keys[i], filter, label));
  }
  for (size_t i = 0; i < absent; i++) {
    policies.CompareQuery(RandomKey(random, RandomKeyLength(random)), filter, label);
  }
}

// ---------------------------------------------------------------------------
// Fixed cases.

// k (the filter's last byte) and the sizes for every bits_per_key 0..=100 and some
// large ones, with no keys, one key and ten; and INT_MAX bits per key, whose filter
// for one key (2^31 bits, 256 MiB) is left out when `huge` is false.
void ProbesAndSizes(const Ours& ours, bool huge) {
  std::vector<int> all;
  for (int b = 0; b <= 100; b++) all.push_back(b);
  for (int b : {1000, 100000, 1 << 20, 1 << 24}) all.push_back(b);
  Random random(1);
  for (int bits_per_key : all) {
    for (size_t n : {0, 1, 10}) {
      KeySet keys;
      for (size_t i = 0; i < n; i++) keys.Add(RandomKey(random, 1 + i));
      CompareCase(ours, bits_per_key, keys, random, 4, "k and size");
    }
  }
  KeySet none;
  CompareCase(ours, INT_MAX, none, random, 4, "INT_MAX bits per key, no keys");
  if (huge) {
    KeySet one;
    one.Add("key");
    CompareCase(ours, INT_MAX, one, random, 4, "INT_MAX bits per key");
  }
}

// Every key length 0..=300, every tail byte, duplicates, LevelDB's own examples.
void KeyShapes(const Ours& ours) {
  Random random(2);
  for (int bits_per_key : {1, 10, 23}) {
    KeySet lengths, high_lengths;
    for (size_t length = 0; length <= 300; length++) {
      lengths.Add(RandomKey(random, length));
      high_lengths.Add(std::string(length, '\xff'));
    }
    CompareCase(ours, bits_per_key, lengths, random, 300, "every length 0..=300");
    CompareCase(ours, bits_per_key, high_lengths, random, 300, "every length of 0xff bytes");
    // Tails of 1, 2 and 3 bytes after 0, 4 and 8 whole words, every byte value.
    for (size_t tail = 1; tail <= 3; tail++) {
      for (size_t words = 0; words <= 2; words++) {
        KeySet tails;
        for (int b = 0; b < 256; b++) {
          std::string key = RandomKey(random, 4 * words);
          for (size_t i = 0; i < tail; i++) key.push_back(static_cast<char>(b ^ (i * 0x55)));
          tails.Add(key);
        }
        CompareCase(ours, bits_per_key, tails, random, 256, "every tail byte");
      }
    }
    KeySet same;
    for (int i = 0; i < 100; i++) same.Add("duplicate");
    CompareCase(ours, bits_per_key, same, random, 100, "100 equal keys");
    KeySet empty_keys;
    for (int i = 0; i < 3; i++) empty_keys.Add("");
    CompareCase(ours, bits_per_key, empty_keys, random, 10, "empty keys");
  }
  KeySet hello;
  hello.Add("hello");
  hello.Add("world");
  CompareCase(ours, 10, hello, random, 100, "hello world");
  // bloom_test's keys (little-endian 32-bit integers), many of them.
  for (int bits_per_key : {10, 64}) {
    KeySet integers;
    for (uint32_t i = 0; i < 20000; i++) {
      const char bytes[4] = {static_cast<char>(i), static_cast<char>(i >> 8),
                             static_cast<char>(i >> 16), static_cast<char>(i >> 24)};
      integers.Add(std::string(bytes, 4));
    }
    CompareCase(ours, bits_per_key, integers, random, 2000, "20000 integers");
  }
}

// Interesting k bytes: zero, valid, the largest valid, reserved.
constexpr unsigned char kLastBytes[] = {0, 1, 29, 30, 31, 0x7f, 0x80, 0xfe, 0xff};

// A filter LevelDB did not make: `length` bytes of the given density of set bits,
// ending in `last` (when there is a byte to end in).
std::string ForeignFilter(Random& random, size_t length, unsigned char last) {
  std::string filter(length, '\0');
  const size_t density = random.Below(5);
  for (char& c : filter) {
    unsigned char byte = random.Byte();
    if (density == 0) byte = 0;
    if (density == 1) byte &= random.Byte() & random.Byte();
    if (density == 3) byte |= random.Byte() | random.Byte();
    if (density == 4) byte = 0xff;
    c = static_cast<char>(byte);
  }
  if (length > 0) filter[length - 1] = static_cast<char>(last);
  return filter;
}

void CompareForeign(Policies& policies, Random& random, const std::string& filter) {
  for (int i = 0; i < 8; i++) {
    policies.CompareQuery(RandomKey(random, RandomKeyLength(random)), filter, "foreign filter");
  }
  tally.foreign++;
}

// Arbitrary bytes as filters: every length 0..=200 with every interesting last
// byte, then `count` random ones.
void ForeignFilters(const Ours& ours, size_t count) {
  Policies policies(ours, 10);
  Random random(3);
  for (size_t length = 0; length <= 200; length++) {
    for (unsigned char last : kLastBytes) {
      CompareForeign(policies, random, ForeignFilter(random, length, last));
    }
  }
  for (size_t i = 0; i < count; i++) {
    const size_t length = random.Below(201);
    const unsigned char last =
        random.OneIn(4) ? random.Byte() : kLastBytes[random.Below(sizeof kLastBytes)];
    CompareForeign(policies, random, ForeignFilter(random, length, last));
  }
}

// ---------------------------------------------------------------------------
// Generated cases.

// bits_per_key 0..=64 in turn, then some large values.
int CaseBitsPerKey(size_t i) {
  static const int kLarge[] = {100, 1000, 100000};
  const size_t slot = i % (65 + 3);
  return slot < 65 ? static_cast<int>(slot) : kLarge[slot - 65];
}

// n from 0 to 5000, mostly small; filters kept under 16 MiB.
size_t CaseKeyCount(Random& random, int bits_per_key) {
  size_t n;
  const size_t r = random.Below(100);
  if (r < 10) {
    n = random.Below(4);
  } else if (r < 60) {
    n = random.Below(100);
  } else if (r < 90) {
    n = random.Below(1000);
  } else {
    n = random.Below(5001);
  }
  const size_t most = (size_t(1) << 27) / static_cast<size_t>(bits_per_key > 0 ? bits_per_key : 1);
  return n < most ? n : most;
}

void RandomCases(const Ours& ours, size_t count) {
  for (size_t i = 0; i < count; i++) {
    Random random(0x5eed0000 + i);
    const int bits_per_key = CaseBitsPerKey(i);
    const size_t n = CaseKeyCount(random, bits_per_key);
    KeySet keys;
    for (size_t k = 0; k < n; k++) {
      // One key in eight repeats an earlier one.
      if (k > 0 && random.OneIn(8)) {
        keys.Add(keys[random.Below(k)]);
      } else {
        keys.Add(RandomKey(random, RandomKeyLength(random)));
      }
    }
    CompareCase(ours, bits_per_key, keys, random, 20 + n / 4, "random case");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc == 4 && std::strcmp(argv[3], "--quick") == 0;
  if (argc < 2 || argc > 4 || (argc == 4 && !quick)) {
    std::fprintf(stderr, "usage: %s <libleveldb_bloom.so> [random cases] [--quick]\n", argv[0]);
    return 2;
  }
  const size_t random_cases = argc >= 3 ? std::strtoul(argv[2], nullptr, 10) : 3000;
  const Ours ours(argv[1]);
  CheckSeparation(ours);
  ProbesAndSizes(ours, !quick);
  KeyShapes(ours);
  ForeignFilters(ours, random_cases * 10);
  RandomCases(ours, random_cases);
  // Ours stays loaded (no dlclose), so that leak reports at exit can name its code.
  std::printf(
      "reference: %llu filters (%llu bytes) and %llu queries (%llu foreign filters) "
      "compared with LevelDB, %llu mismatches\n",
      static_cast<unsigned long long>(tally.filters),
      static_cast<unsigned long long>(tally.filter_bytes),
      static_cast<unsigned long long>(tally.queries),
      static_cast<unsigned long long>(tally.foreign),
      static_cast<unsigned long long>(tally.mismatches));
  return check_report("reference_test");
}
