// leveldb_bloom.hpp: the C++ layer of libleveldb_bloom, header-only, C++11 and later.
//
// Two things, both calling straight into the library under its own `leveldb_bloom_`
// names, which LevelDB cannot shadow, so they reach it whatever the link order:
//
// - leveldb_bloom::Policy, an RAII, move-only bloom filter policy for direct use, with
//   or without LevelDB: build a filter into a std::string, query it.
//
//     leveldb_bloom::Policy policy(10);
//     std::vector<std::string> keys = {"hello", "world"};
//     std::string filter = policy.create_filter(keys);  // 11 40 00 41 44 10 40 10 06
//     bool maybe = policy.key_may_match(std::string("hello"), filter);
//
// - leveldb_bloom::NewBloomFilterPolicy(bits_per_key), LevelDB's
//   leveldb::NewBloomFilterPolicy made explicit, for Options::filter_policy: the
//   library's own policy object, told how to grow the program's std::string by a
//   function this header compiles in the program. It is declared when
//   <leveldb/filter_policy.h> is available (or when the program defines
//   LEVELDB_BLOOM_WITH_LEVELDB to 1; defining it to 0 leaves it out).
//
//     leveldb::Options options;
//     options.filter_policy = leveldb_bloom::NewBloomFilterPolicy(10);
//     ... open, use and close (delete) every database using it ...
//     delete options.filter_policy;  // the program owns it, as LevelDB's own
//
// - The legacy format, "leveldb.BuiltinBloomFilter" (goleveldb, LevelDB before 1.18
//   on x86 and ARM): leveldb_bloom::Policy::legacy(bits_per_key) and
//   leveldb_bloom::NewLegacyBloomFilterPolicy(bits_per_key), used the same way, read
//   the filters those wrote and write filters all of them read.
//
// - Filter statistics: leveldb_bloom::enable_stats(), leveldb_bloom::stats() (how many
//   filter queries, how many answered "absent", filters built...), reset_stats().
//
// Link with -lleveldb_bloom (and -lleveldb for the second), in either order.
#ifndef LEVELDB_BLOOM_HPP
#define LEVELDB_BLOOM_HPP

#include <leveldb_bloom.h>

#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#ifndef LEVELDB_BLOOM_WITH_LEVELDB
#if defined(__has_include)
#if __has_include(<leveldb/filter_policy.h>)
#define LEVELDB_BLOOM_WITH_LEVELDB 1
#endif
#endif
#endif
#ifndef LEVELDB_BLOOM_WITH_LEVELDB
#define LEVELDB_BLOOM_WITH_LEVELDB 0
#endif

#if LEVELDB_BLOOM_WITH_LEVELDB
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>
#endif

namespace leveldb_bloom {

namespace detail {

/// Adds `extra` elements to `*container`; false, leaving it as it was, when that
/// cannot be done (too long, or no memory). Compiled without exceptions (as LevelDB
/// itself is, -fno-exceptions), only "too long" is caught: no memory ends the
/// program, as it would end LevelDB's own CreateFilter.
template <typename Container>
inline bool grow(Container* container, std::size_t extra) {
  const std::size_t size = container->size();
  if (extra > container->max_size() - size) return false;
#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
  try {
    container->resize(size + extra);
  } catch (const std::exception&) {  // std::bad_alloc, std::length_error
    return false;
  }
#else
  container->resize(size + extra);
#endif
  return true;
}

/// The append function (leveldb_bloom_string_append_t) the policies of
/// NewBloomFilterPolicy grow LevelDB's strings with, compiled in the program with its
/// own std::string (`String`; the library compiles it too, for the policies LevelDB
/// makes, once per libstdc++ ABI): appends `length` NUL bytes to `*string`, has
/// `write` fill them, keeps the bytes it wrote. Sized, then written in place, as
/// LevelDB's own bloom policy does: the one allocation is the string's, and when the
/// string cannot grow resize throws std::bad_alloc (or std::length_error) to LevelDB,
/// as LevelDB's own CreateFilter would (without exceptions, the program ends).
template <typename String>
void append_written(void* string, std::size_t length, leveldb_bloom_filter_writer_t write,
                    void* writer) {
  String* dst = static_cast<String*>(string);
  const std::size_t start = dst->size();
  dst->resize(start + length);
  dst->resize(start + write(writer, &(*dst)[start], length));
}

}  // namespace detail

/// A bloom filter policy of this library (LevelDB's "leveldb.BuiltinBloomFilter2",
/// byte for byte), owning a handle from leveldb_bloom_policy_create and releasing it
/// with leveldb_bloom_policy_destroy. Move-only; moved-from and failed policies are
/// empty.
///
/// An empty policy is still safe: it builds the match-all filter (00 FF) and its
/// key_may_match answers true, so it never loses a key.
class Policy {
 public:
  /// Each key gets `bits_per_key` bits and k = bits_per_key × 0.69 probes
  /// (truncated, clamped to 1..=30). Empty when the library refuses: a negative
  /// `bits_per_key`, or no memory.
  explicit Policy(int bits_per_key) : ptr_(leveldb_bloom_policy_create(bits_per_key)) {}

  /// A policy of the legacy format, "leveldb.BuiltinBloomFilter", from
  /// leveldb_bloom_legacy_policy_create: keys whose last size % 4 bytes include one
  /// >= 0x80 set the bits of both hash readings (signed, as LevelDB < 1.18 on x86,
  /// and unsigned) and match under either; other keys' filters are goleveldb's.
  /// Same sizing and k, and empty on the same refusals, as Policy(bits_per_key), and
  /// also when LevelDB is loaded but this library cannot reach its C API.
  static Policy legacy(int bits_per_key) {
    return Policy(leveldb_bloom_legacy_policy_create(bits_per_key), FromHandle());
  }

  /// Takes ownership of a handle from leveldb_bloom_policy_create,
  /// leveldb_bloom_legacy_policy_create, this library's
  /// leveldb_filterpolicy_create_bloom or leveldb_bloom_cxx_policy_create (whose
  /// handle NewBloomFilterPolicy returns as a leveldb::FilterPolicy); NULL gives an
  /// empty policy. The destructor releases it with leveldb_bloom_policy_destroy.
  static Policy adopt(leveldb_filterpolicy_t* handle) noexcept {
    return Policy(handle, FromHandle());
  }

  /// Gives up ownership: returns the handle (NULL if empty), which the caller now
  /// releases with leveldb_bloom_policy_destroy, and leaves this policy empty.
  leveldb_filterpolicy_t* release() noexcept { return ptr_.release(); }

  Policy(const Policy&) = delete;
  Policy& operator=(const Policy&) = delete;
  Policy(Policy&&) = default;
  Policy& operator=(Policy&&) = default;

  /// Whether the policy holds a handle.
  explicit operator bool() const { return ptr_ != nullptr; }

  /// The C handle, still owned by this object (NULL if empty).
  const leveldb_filterpolicy_t* capi() const { return ptr_.get(); }

  /// "leveldb.BuiltinBloomFilter2" ("leveldb.BuiltinBloomFilter" for a legacy
  /// policy), a static string; nullptr if empty.
  const char* name() const { return leveldb_bloom_policy_name(ptr_.get()); }

  /// The length of the filter for `num_keys` keys, k byte included; 0 if empty or
  /// too large to address.
  std::size_t filter_length(std::size_t num_keys) const {
    return leveldb_bloom_filter_length(ptr_.get(), num_keys);
  }

  /// Appends the filter of `num_keys` keys (key i: `lengths[i]` bytes at `keys[i]`)
  /// to `*dst`, written in place, as LevelDB's CreateFilter does. Returns how many
  /// bytes were appended. When the filter cannot be built (empty policy, bad
  /// arguments, a filter too large for a std::string), appends the match-all filter
  /// 00 FF instead; throws std::bad_alloc only if even those 2 bytes cannot be.
  std::size_t append_filter(const char* const* keys, const std::size_t* lengths,
                            std::size_t num_keys, std::string* dst) const {
    const std::size_t start = dst->size();
    std::size_t length = filter_length(num_keys);
    if (length < LEVELDB_BLOOM_MATCH_ALL_FILTER_LENGTH) {
      length = LEVELDB_BLOOM_MATCH_ALL_FILTER_LENGTH;  // room for 00 FF
    }
    if (!detail::grow(dst, length)) {
      length = LEVELDB_BLOOM_MATCH_ALL_FILTER_LENGTH;  // the library writes 00 FF
      dst->resize(start + length);
    }
    const std::size_t written =
        leveldb_bloom_write_filter(ptr_.get(), keys, lengths, num_keys, &(*dst)[start], length);
    dst->resize(start + written);
    return written;
  }

  /// The same for any range of keys with data() and size() (std::string,
  /// leveldb::Slice, std::string_view, ...). The pointer and length arrays the C
  /// interface takes are the only copy; the keys' bytes are not copied.
  template <typename Keys>
  std::size_t append_filter(const Keys& keys, std::string* dst) const {
    std::vector<const char*> pointers;
    std::vector<std::size_t> lengths;
    for (const auto& key : keys) {
      pointers.push_back(key.data());
      lengths.push_back(key.size());
    }
    return append_filter(pointers.data(), lengths.data(), pointers.size(), dst);
  }

  /// The filter for `keys`; see append_filter.
  template <typename Keys>
  std::string create_filter(const Keys& keys) const {
    std::string filter;
    append_filter(keys, &filter);
    return filter;
  }

  /// LevelDB's KeyMayMatch: false when `key` is certainly not among the filter's
  /// keys. Works on any bytes; an empty policy answers true.
  bool key_may_match(const char* key, std::size_t length, const char* filter,
                     std::size_t filter_length) const {
    return leveldb_bloom_key_may_match(ptr_.get(), key, length, filter, filter_length) !=
           0;
  }

  /// The same for a key and a filter of any type with data() and size()
  /// (std::string, leveldb::Slice, std::string_view, ...).
  template <typename Key, typename Filter>
  bool key_may_match(const Key& key, const Filter& filter) const {
    return key_may_match(key.data(), key.size(), filter.data(), filter.size());
  }

 private:
  struct FromHandle {};
  Policy(leveldb_filterpolicy_t* handle, FromHandle) noexcept : ptr_(handle) {}

  struct Deleter {
    void operator()(leveldb_filterpolicy_t* policy) const { leveldb_bloom_policy_destroy(policy); }
  };
  std::unique_ptr<leveldb_filterpolicy_t, Deleter> ptr_;
};

/// Filter statistics of this process (see leveldb_bloom_stats_t in leveldb_bloom.h):
/// every thread's counts added up. Counting is off until enable_stats() is called or
/// the environment variable LEVELDB_BLOOM_STATS is set.
inline leveldb_bloom_stats_t stats() {
  leveldb_bloom_stats_t counts = leveldb_bloom_stats_t();
  counts.size = sizeof counts;
  leveldb_bloom_stats(&counts);
  return counts;
}

/// Turns counting on, or off with `false`; counts are kept while off.
inline void enable_stats(bool on = true) { leveldb_bloom_stats_enable(on ? 1 : 0); }

/// Sets every count to 0.
inline void reset_stats() { leveldb_bloom_stats_reset(); }

#if LEVELDB_BLOOM_WITH_LEVELDB

namespace detail {

/// The library's own policy object behind `handle`, as the leveldb::FilterPolicy it is
/// (it derives from LevelDB's class, first and only base); nullptr for NULL.
inline const leveldb::FilterPolicy* as_filter_policy(leveldb_filterpolicy_t* handle) {
  return static_cast<const leveldb::FilterPolicy*>(static_cast<void*>(handle));
}

}  // namespace detail

/// LevelDB's leveldb::NewBloomFilterPolicy(bits_per_key), calling this library
/// directly, whatever the link order: same filters, same name. The result is this
/// library's own policy object (Name, CreateFilter and KeyMayMatch are the library's,
/// with no layer of this header in between), made by leveldb_bloom_cxx_policy_create
/// with this program's append function, detail::append_written<std::string>: its
/// CreateFilter grows LevelDB's strings with the program's own std::string, the one
/// LevelDB's C++ API was linked with, so it works however the program is built
/// (LevelDB and libstdc++ linked statically, -static, either libstdc++ ABI, libc++).
///
/// The caller owns the result: `delete` it after closing (deleting) every database
/// that uses it, as LevelDB's own (or hand it to leveldb_bloom::Policy::adopt).
/// Returns nullptr when the library refuses (a negative `bits_per_key`) or memory runs
/// out; LevelDB then runs without filters: slower, never wrong. Give it only to this
/// program's LevelDB (Options::filter_policy), as LevelDB's own policy.
inline const leveldb::FilterPolicy* NewBloomFilterPolicy(int bits_per_key) {
  return detail::as_filter_policy(
      leveldb_bloom_cxx_policy_create(bits_per_key, &detail::append_written<std::string>));
}

/// The legacy format's policy, "leveldb.BuiltinBloomFilter" (see Policy::legacy), for
/// Options::filter_policy: LevelDB then uses the filters of tables goleveldb or
/// LevelDB before 1.18 wrote (it ignores them under its own policy), and writes
/// filters they all read. The library's own object, ownership and failure as for
/// NewBloomFilterPolicy.
inline const leveldb::FilterPolicy* NewLegacyBloomFilterPolicy(int bits_per_key) {
  return detail::as_filter_policy(leveldb_bloom_cxx_legacy_policy_create(
      bits_per_key, &detail::append_written<std::string>));
}

#endif  // LEVELDB_BLOOM_WITH_LEVELDB

}  // namespace leveldb_bloom

#endif  // LEVELDB_BLOOM_HPP
