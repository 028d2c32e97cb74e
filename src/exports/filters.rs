//! The exported functions that build and query filters: each one panic boundary
//! around the layers below.

use std::ffi::{c_char, c_int};
use std::ptr;

use libc::size_t;

use super::super::ops::{
    create_filter, format_of, key_may_match, key_may_match_batch, lookup_policy, policy_of,
    write_filter,
};
use super::super::{guard, leveldb_filterpolicy_t};

/// Builds the filter for `num_keys` keys: exactly the bytes LevelDB's `CreateFilter`
/// appends to an empty string. Key i is `key_length_array[i]` bytes at
/// `key_array[i]`; duplicates are fine.
///
/// Returns a buffer from `malloc` that the caller releases with `free()`, and stores
/// its length in `*filter_length`.
///
/// Bad inputs never give a filter that could answer "no" wrongly:
/// - `filter_length` NULL: returns NULL; nothing is allocated.
/// - `policy` NULL or unknown, `num_keys < 0`, `key_array` or `key_length_array`
///   NULL while `num_keys > 0`, a NULL key with non-zero length, or a filter too large
///   to size or allocate: returns the 2-byte match-all filter `00 FF`, which every
///   LevelDB reader treats as "may match" for all keys.
/// - if even that cannot be allocated: returns NULL with `*filter_length = 0`.
///
/// `num_keys == 0` is valid (the arrays may then be NULL); a NULL key of length 0
/// is the empty key.
///
/// # Safety
/// Non-NULL arrays must hold `num_keys` entries, and each non-NULL key as many
/// readable bytes as its length.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_create_filter(
    policy: *const leveldb_filterpolicy_t,
    key_array: *const *const c_char,
    key_length_array: *const size_t,
    num_keys: c_int,
    filter_length: *mut size_t,
) -> *mut c_char {
    let on_panic = || {
        // SAFETY: as below, with no policy: only the match-all filter is made.
        unsafe { create_filter(None, ptr::null(), ptr::null(), -1, filter_length) }
    };
    guard(on_panic, || {
        // SAFETY: the caller's promises, passed on.
        unsafe {
            create_filter(
                policy_of(policy),
                key_array,
                key_length_array,
                num_keys,
                filter_length,
            )
        }
    })
}

/// Whether `key` may be in `filter`: LevelDB's `KeyMayMatch`, for any bytes at all.
/// Returns 0 when the key is certainly absent, 1 when it may be present.
///
/// As LevelDB: a filter shorter than 2 bytes gives 0; a last (k) byte of 0 or above
/// 30 gives 1. The policy's own bits_per_key plays no part.
///
/// Bad inputs give 1 ("may match", never a false negative): `policy` NULL or
/// unknown, `key` NULL with `length > 0`, `filter` NULL with `filter_length > 0`.
/// `key` or `filter` may be NULL when its length is 0.
///
/// # Safety
/// Non-NULL `key` and `filter` must be readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_key_may_match(
    policy: *const leveldb_filterpolicy_t,
    key: *const c_char,
    length: size_t,
    filter: *const c_char,
    filter_length: size_t,
) -> u8 {
    guard(
        || 1,
        || {
            // SAFETY: the caller's promises, passed on.
            unsafe { key_may_match(|| format_of(policy), key, length, filter, filter_length) }
        },
    )
}

/// `leveldb_bloom_key_may_match` for `num_keys` keys at once: writes to
/// `results[i]` exactly what it returns for key i (`key_length_array[i]` bytes at
/// `key_array[i]`), 0 for certainly absent, 1 for may be present. Faster per key than
/// one call each: keys are hashed in groups (with AVX2 or AVX-512 where the CPU has
/// them; see `leveldb_bloom_simd_level`) and the filter's memory is fetched for a
/// group at a time. Allocates nothing.
///
/// Bad inputs never give a wrong 0:
/// - `results` NULL, or `num_keys` 0: writes nothing.
/// - `policy` NULL or unknown, `key_array` or `key_length_array` NULL, or `filter`
///   NULL with `filter_length > 0`: every result is 1.
/// - a NULL key with non-zero length: that key's result is 1.
///
/// A NULL key of length 0 is the empty key.
///
/// # Safety
/// `results` must be NULL or writable for `num_keys` bytes; non-NULL arrays must hold
/// `num_keys` entries, each non-NULL key as many readable bytes as its length, and a
/// non-NULL `filter` `filter_length` bytes. `policy` must not be destroyed meanwhile.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_key_may_match_batch(
    policy: *const leveldb_filterpolicy_t,
    key_array: *const *const c_char,
    key_length_array: *const size_t,
    num_keys: size_t,
    filter: *const c_char,
    filter_length: size_t,
    results: *mut u8,
) {
    guard(
        || (),
        || {
            // SAFETY: the caller's promises, passed on.
            unsafe {
                key_may_match_batch(
                    lookup_policy(policy),
                    key_array,
                    key_length_array,
                    num_keys,
                    filter,
                    filter_length,
                    results,
                )
            }
        },
    )
}

/// The length in bytes of the filter `leveldb_bloom_create_filter` would build
/// for `num_keys` keys (k byte included), so a caller can provide the memory to
/// `leveldb_bloom_write_filter`. Returns 0 for NULL or unknown `policy`, or a filter
/// too large to address.
///
/// # Safety
/// `policy` must be NULL or a policy that is not being destroyed concurrently.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_filter_length(
    policy: *const leveldb_filterpolicy_t,
    num_keys: size_t,
) -> size_t {
    guard(
        || 0,
        || {
            // SAFETY: the caller's promise about `policy`.
            unsafe { policy_of(policy) }
                .and_then(|bloom| bloom.filter_len(num_keys))
                .unwrap_or(0)
        },
    )
}

/// Builds the filter for `num_keys` keys into the caller's `out`, without
/// allocating. `out_length` must be exactly `leveldb_bloom_filter_length(policy,
/// num_keys)`.
///
/// Returns how many bytes at the start of `out` now hold a filter: `out_length` on
/// success. On a bad input (as for `leveldb_bloom_create_filter`, or a wrong
/// `out_length`) it writes the 2-byte match-all filter `00 FF` at the start of `out`,
/// leaves the rest of `out` as it was, and returns 2; if `out` is NULL or shorter
/// than 2 bytes, it writes nothing and returns 0.
///
/// # Safety
/// As for `leveldb_bloom_create_filter`; a non-NULL `out` must be writable for
/// `out_length` bytes.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_write_filter(
    policy: *const leveldb_filterpolicy_t,
    key_array: *const *const c_char,
    key_length_array: *const size_t,
    num_keys: size_t,
    out: *mut c_char,
    out_length: size_t,
) -> size_t {
    let on_panic = || {
        // SAFETY: as below, with no policy: only the match-all filter is written.
        unsafe { write_filter(None, ptr::null(), ptr::null(), 0, out, out_length) }
    };
    guard(on_panic, || {
        // SAFETY: the caller's promises, passed on.
        unsafe {
            write_filter(
                policy_of(policy),
                key_array,
                key_length_array,
                num_keys,
                out,
                out_length,
            )
        }
    })
}
