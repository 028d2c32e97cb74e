//! `libleveldb_bloom.so` and `libleveldb_bloom.a`: LevelDB's built-in bloom filter
//! policy (`leveldb.BuiltinBloomFilter2`), byte for byte, for C and C++, with the
//! header `include/leveldb_bloom.h`. LevelDB's C API names
//! (`leveldb_filterpolicy_create_bloom`, …), `leveldb::NewBloomFilterPolicy(int)` for
//! programs that swap it in, and functions of its own (`leveldb_bloom_*`).
//!
//! This crate is only the C ABI over the format core, the crate `leveldb-bloom`
//! (here under the name `bloom`): it has no Rust API. Rust programs depend on
//! `leveldb-bloom`.
//!
//! Layers that import one way: [`exports`] (every exported function, each one panic
//! boundary, [`guard`], which turns raw arguments into checked values with [`args`])
//! → [`dropin`] (the policy object's virtual functions, which do the same; the
//! `std::string` a policy appends to, decided when it is made, from the loaded
//! objects as the crate `loader` reads them) → [`ops`]
//! (the policy operations on checked values, which catch nothing) → the format core,
//! [`registry`] (which pointers are policies) and [`stats`] (what the operations
//! asked the core, counted: the core counts nothing). Every bad input gets a
//! documented, fail-safe result. [`c_text`] holds the C strings made from the core's
//! text; [`fork`] keeps the locks of [`fork_lock`] free across every `fork()`;
//! [`stats_report`] is `LEVELDB_BLOOM_STATS`, which also names the loaded LevelDBs
//! the swap cannot reach ([`self_bound`]); [`simd`] is `LEVELDB_BLOOM_SIMD`,
//! the level the core is told to hash keys with; [`environment`] reads the
//! variables. This library interposes no LevelDB function but the policy creators:
//! default bits (`LEVELDB_BLOOM_DEFAULT_BITS`) are `libleveldb_bloom_default_bits.so`'s
//! (`default-bits/`), which asks this library for its policies.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod args;
mod c_text;
mod dropin;
mod environment;
mod exports;
mod fork;
mod fork_lock;
mod ops;
mod registry;
// `./libleveldb_bloom.so`: where build.rs gave the shared library an entry point.
#[cfg(run_as_program)]
mod run_as_program;
mod self_bound;
mod simd;
mod stats;
mod stats_report;

use std::panic::{catch_unwind, AssertUnwindSafe};

/// A bloom filter policy. Opaque: made by `leveldb_filterpolicy_create_bloom` or
/// `leveldb_bloom_policy_create`, released by `leveldb_filterpolicy_destroy`.
#[allow(non_camel_case_types)]
pub struct leveldb_filterpolicy_t {
    _opaque: [u8; 0],
}

/// The length of the match-all filter `00 FF`, which every function that builds a
/// filter writes when it cannot build the real one: the room a buffer needs for it.
pub const LEVELDB_BLOOM_MATCH_ALL_FILTER_LENGTH: usize = 2;
const _: () = assert!(LEVELDB_BLOOM_MATCH_ALL_FILTER_LENGTH == bloom::MATCH_ALL_FILTER.len());

/// The panic boundary of every exported function and LevelDB callback: a panic in
/// `body` is caught and answered by `on_panic`, the entry point's fail-safe result.
pub(crate) fn guard<T>(on_panic: impl FnOnce() -> T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| on_panic())
}

/// Whether `object` is this library or a copy of it under any name (it exports this
/// library's names), or holds this very code (a program linked with
/// `libleveldb_bloom.a`): its definitions of LevelDB's names and the marks it holds
/// as constants are no LevelDB's.
pub(crate) fn is_this_library(object: &loader::Object) -> bool {
    object.lookup(b"leveldb_bloom_version").is_some()
        || object.holds(is_this_library as *const () as usize)
}
