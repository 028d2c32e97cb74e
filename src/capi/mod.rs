//! The C API, in layers that import one way: [`exports`] (every exported function,
//! each one panic boundary, [`guard`]) → [`dropin`] (LevelDB's objects and
//! callbacks) → [`ops`] (the policy operations, which catch nothing) → [`args`]
//! (raw arguments made checked values) and [`handle`] (which pointers are
//! policies). Every bad input gets a documented, fail-safe result. [`fork`] keeps
//! the locks of [`fork_lock`] free across every `fork()`.

mod args;
mod dropin;
mod exports;
mod fork;
mod fork_lock;
mod handle;
mod ops;
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
const _: () = assert!(LEVELDB_BLOOM_MATCH_ALL_FILTER_LENGTH == crate::MATCH_ALL_FILTER.len());

/// The panic boundary of every exported function and LevelDB callback: a panic in
/// `body` is caught and answered by `on_panic`, the entry point's fail-safe result.
pub(crate) fn guard<T>(on_panic: impl FnOnce() -> T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| on_panic())
}
