//! The names this library first gave its functions, in LevelDB's own C API family
//! (`leveldb_filterpolicy_*`), kept as aliases of the `leveldb_bloom_*` ones: a
//! future LevelDB could define them, so new code uses the `leveldb_bloom_` names
//! (the C++ header uses nothing else). Each passes its arguments on unchanged; its
//! signature is its target's, written on one line.

use std::ffi::{c_char, c_int};

use libc::size_t;

use super::super::leveldb_filterpolicy_t;
use super::filters::{
    leveldb_bloom_create_filter, leveldb_bloom_key_may_match, leveldb_bloom_key_may_match_batch,
};
use super::policies::leveldb_bloom_policy_name;

/// Alias of `leveldb_bloom_create_filter` (its first name, in LevelDB's C API family: a future LevelDB
/// could define it; new code uses the `leveldb_bloom_` one).
///
/// # Safety
/// As for `leveldb_bloom_create_filter`.
#[no_mangle]
#[rustfmt::skip] // An alias's signature is its target's: one line, not a second copy of its layout.
pub unsafe extern "C" fn leveldb_filterpolicy_create_filter(policy: *const leveldb_filterpolicy_t, key_array: *const *const c_char, key_length_array: *const size_t, num_keys: c_int, filter_length: *mut size_t) -> *mut c_char {
    // SAFETY: the caller's promises, passed on.
    unsafe { leveldb_bloom_create_filter(policy, key_array, key_length_array, num_keys, filter_length) }
}

/// Alias of `leveldb_bloom_key_may_match` (its first name, in LevelDB's C API family: a future LevelDB
/// could define it; new code uses the `leveldb_bloom_` one).
///
/// # Safety
/// As for `leveldb_bloom_key_may_match`.
#[no_mangle]
#[rustfmt::skip] // An alias's signature is its target's: one line, not a second copy of its layout.
pub unsafe extern "C" fn leveldb_filterpolicy_key_may_match(policy: *const leveldb_filterpolicy_t, key: *const c_char, length: size_t, filter: *const c_char, filter_length: size_t) -> u8 {
    // SAFETY: the caller's promises, passed on.
    unsafe { leveldb_bloom_key_may_match(policy, key, length, filter, filter_length) }
}

/// Alias of `leveldb_bloom_key_may_match_batch` (its first name, in LevelDB's C API family: a future LevelDB
/// could define it; new code uses the `leveldb_bloom_` one).
///
/// # Safety
/// As for `leveldb_bloom_key_may_match_batch`.
#[no_mangle]
#[rustfmt::skip] // An alias's signature is its target's: one line, not a second copy of its layout.
pub unsafe extern "C" fn leveldb_filterpolicy_key_may_match_batch(policy: *const leveldb_filterpolicy_t, key_array: *const *const c_char, key_length_array: *const size_t, num_keys: size_t, filter: *const c_char, filter_length: size_t, results: *mut u8) {
    // SAFETY: the caller's promises, passed on.
    unsafe { leveldb_bloom_key_may_match_batch(policy, key_array, key_length_array, num_keys, filter, filter_length, results) }
}

/// Alias of `leveldb_bloom_policy_name` (its first name, in LevelDB's C API family: a future LevelDB
/// could define it; new code uses the `leveldb_bloom_` one).
///
/// # Safety
/// As for `leveldb_bloom_policy_name`.
#[no_mangle]
#[rustfmt::skip] // An alias's signature is its target's: one line, not a second copy of its layout.
pub unsafe extern "C" fn leveldb_filterpolicy_name(policy: *const leveldb_filterpolicy_t) -> *const c_char {
    // SAFETY: the caller's promise, passed on.
    unsafe { leveldb_bloom_policy_name(policy) }
}
