//! LevelDB's built-in bloom filter policy, `leveldb.BuiltinBloomFilter2`, byte for
//! byte, for Rust and (through a C ABI) for C and C++.
//!
//! Every filter [`BloomFilterPolicy`] builds is the filter LevelDB ≥ 1.18's
//! `NewBloomFilterPolicy(bits_per_key)` builds for the same keys, and every answer
//! of [`Filter::may_contain`] is LevelDB's `KeyMayMatch`, on any bytes at all: tables
//! written by either are read by the other.
//!
//! # Building and querying a filter
//!
//! ```
//! use leveldb_bloom::{BloomFilterPolicy, Filter};
//!
//! // 10 bits per key: about 1% false positives, 6 probes per key.
//! let policy = BloomFilterPolicy::new(10);
//! let keys = ["apple", "banana", "cherry"];
//! let filter: Vec<u8> = policy.build_filter(&keys);
//!
//! // Decode once, query many times. A bloom filter never forgets a key…
//! let query = Filter::new(&filter);
//! assert!(keys.iter().all(|key| query.may_contain(key.as_bytes())));
//! // …and "no" is certain; "yes" may be a false positive.
//! let absent = (0..1000).filter(|i| query.may_contain(format!("absent{i}").as_bytes()));
//! assert!(absent.count() < 1000);
//! ```
//!
//! Filters can also be appended to a buffer you own (as LevelDB appends each block's
//! filter to its filter block) with [`BloomFilterPolicy::append_filter`], or written
//! into a slice of exactly [`BloomFilterPolicy::filter_len`] bytes with
//! [`BloomFilterPolicy::write_filter`], which never allocates.
//!
//! # goleveldb and LevelDB before 1.18
//!
//! [`BloomFilterPolicy::legacy`] reads and writes their format,
//! `leveldb.BuiltinBloomFilter` ([`Format::Legacy`]), safely for every writer of that
//! name whichever way its hash read a key's tail bytes.
//!
//! # rusty-leveldb
//!
//! With the cargo feature `rusty-leveldb`, [`BloomFilterPolicy`] implements
//! rusty-leveldb's `FilterPolicy`, so a database written by rusty-leveldb carries
//! LevelDB's own filters:
//!
//! ```
//! # #[cfg(feature = "rusty-leveldb")] {
//! use std::rc::Rc;
//!
//! let mut options = rusty_leveldb::in_memory();
//! options.filter_policy = Rc::new(Box::new(leveldb_bloom::BloomFilterPolicy::new(10)));
//! let mut db = rusty_leveldb::DB::open("example", options).unwrap();
//! db.put(b"key", b"value").unwrap();
//! assert_eq!(db.get(b"key").as_deref(), Some(&b"value"[..]));
//! # }
//! ```
//!
//! The inherent methods do not clash with the trait's: with `FilterPolicy` in scope,
//! `build_filter` is this crate's and `create_filter` rusty-leveldb's.
//!
//! ```
//! # #[cfg(feature = "rusty-leveldb")] {
//! use leveldb_bloom::BloomFilterPolicy;
//! use rusty_leveldb::FilterPolicy;
//!
//! let policy = BloomFilterPolicy::new(10);
//! let theirs = policy.create_filter(b"helloworld", &[0, 5]);
//! assert_eq!(policy.build_filter(["hello", "world"]), theirs);
//! assert!(policy.key_may_match(b"hello", &theirs));
//! # }
//! ```
//!
//! # Counting
//!
//! The crate keeps no state and reads no environment: a program that wants to know
//! how often its filters answered "absent" counts through a [`Counter`] of its own.
//!
//! # SIMD
//!
//! Building filters and batch queries hash keys in bulk with the best instruction
//! set the CPU has ([`SimdLevel::best`]); the functions ending in `_at` take the
//! level from the caller ([`SimdLevel::up_to`] a named one), with the same results.
//!
//! # C and C++
//!
//! This crate is the format alone: a plain Rust library, with no C symbol and no
//! dependency but (optionally) rusty-leveldb. The C ABI, `libleveldb_bloom.so` and
//! `.a` with the header `leveldb_bloom.h`, is the crate `leveldb-bloom-capi` built on
//! it, in the same repository.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod bit_position;
mod bloom;
mod counter;
mod format;
pub mod hash;
#[cfg(feature = "rusty-leveldb")]
mod rusty_leveldb;
mod same_length_keys;
mod simd;
#[cfg(test)]
mod test_random;

pub use bloom::{BloomFilterPolicy, Filter, KeyAnswer, WrongFilterLength};
pub use counter::{Counter, Counts};
pub use format::{Format, LEGACY_POLICY_NAME, MATCH_ALL_FILTER, POLICY_NAME};
pub use same_length_keys::SameLengthKeys;
pub use simd::{SimdLevel, SIMD_LEVELS};

/// This library's version.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
