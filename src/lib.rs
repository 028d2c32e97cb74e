//! LevelDB's built-in bloom filter policy, `leveldb.BuiltinBloomFilter2`, byte for
//! byte, for Rust and (through a C ABI) for C and C++.
//!
//! The safe core is [`hash`] and [`bloom`]; the C API lives in `ffi` and the swap
//! into LevelDB in `dropin`.

pub mod bloom;
mod dropin;
mod ffi;
mod handle;
pub mod hash;
mod simd;

pub use bloom::{BloomFilterPolicy, Filter, WrongFilterLength, MATCH_ALL_FILTER, POLICY_NAME};
pub use handle::MAX_LIVE_POLICIES;
