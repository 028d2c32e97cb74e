//! The exported functions that build and query filters: each one panic boundary
//! around the layers below.

use std::ffi::{c_char, c_int};
use std::ptr;

use libc::size_t;

use super::super::args::{array, bytes, results_may_match, zeroed, Keys};
use super::super::ops;
use super::super::registry::policy_of;
use super::super::{guard, leveldb_filterpolicy_t};
use bloom::{BloomFilterPolicy, MATCH_ALL_FILTER};

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
    // SAFETY: the caller passes NULL or a writable size_t.
    let Some(filter_length) = (unsafe { filter_length.as_mut() }) else {
        return ptr::null_mut();
    };
    let filter = guard(
        || ops::create_filter(None, None),
        || {
            // SAFETY: the caller's promises about the arrays and the policy.
            let (bloom, keys) = unsafe {
                let num_keys = usize::try_from(num_keys).ok();
                let keys = num_keys.and_then(|n| Keys::new(key_array, key_length_array, n));
                (bloom_of(policy), keys)
            };
            ops::create_filter(bloom, keys)
        },
    );
    let (buffer, length) = filter.unwrap_or((ptr::null_mut(), 0));
    *filter_length = length;
    buffer
}

/// The filter policy behind `policy`, if it is one of this library's.
///
/// # Safety
/// As for [`policy_of`].
unsafe fn bloom_of<'a>(policy: *const leveldb_filterpolicy_t) -> Option<&'a BloomFilterPolicy> {
    // SAFETY: the caller's promise.
    unsafe { policy_of(policy) }.map(|policy| &policy.bloom)
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
            // SAFETY: the caller's promises about the policy, the key's and the
            // filter's bytes.
            let checked = unsafe {
                (
                    policy_of(policy),
                    bytes(key, length),
                    bytes(filter, filter_length),
                )
            };
            let (Some(policy), Some(key), Some(filter)) = checked else {
                return 1;
            };
            ops::key_may_match(policy.bloom.format(), key, filter).into()
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
            // SAFETY: the caller's promises about every array and the policy.
            unsafe {
                let Some(results) = results_may_match(results, num_keys) else {
                    return;
                };
                let checked = (
                    policy_of(policy),
                    array(key_array, num_keys),
                    array(key_length_array, num_keys),
                    bytes(filter, filter_length),
                );
                if let (Some(policy), Some(pointers), Some(lengths), Some(filter)) = checked {
                    ops::key_may_match_batch(policy, pointers, lengths, filter, results);
                }
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
            unsafe { bloom_of(policy) }
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
    // Too short even for the match-all filter (and so for any filter): untouched.
    if out.is_null() || out_length < MATCH_ALL_FILTER.len() || out_length > isize::MAX as usize {
        return 0;
    }
    let written = guard(
        || None,
        || {
            // SAFETY: the caller's promises about the arrays and the policy.
            let (bloom, keys) = unsafe {
                let keys = Keys::new(key_array, key_length_array, num_keys);
                (bloom_of(policy), keys)
            };
            let fits = bloom
                .zip(keys)
                .is_some_and(|(bloom, keys)| bloom.filter_len(keys.len()) == Some(out_length));
            // Only the bytes to be written are touched: all of `out` for the real filter.
            let len = if fits {
                out_length
            } else {
                MATCH_ALL_FILTER.len()
            };
            // SAFETY: non-NULL and writable for `out_length` ≥ `len` bytes per the caller.
            let out = unsafe { zeroed(out, len) };
            Some(ops::write_filter_into(bloom, keys.map(Keys::iter), out))
        },
    );
    // SAFETY: as above, for the match-all filter's bytes.
    written.unwrap_or_else(|| ops::write_match_all(unsafe { zeroed(out, MATCH_ALL_FILTER.len()) }))
}
