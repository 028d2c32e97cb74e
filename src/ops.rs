//! The policy operations behind the exported functions and the policy object's
//! virtual functions, on checked arguments: each asks the format core, and counts in
//! [`stats`](super::stats) what it asked. None of them catches a panic: each entry
//! point (an exported function or a virtual function) is the one panic boundary
//! around them.

use std::ffi::c_char;

use libc::size_t;

use super::args::{bytes, can_slice, malloc_copy, same_length_keys, Keys, Zeroed};
use super::registry::PolicyState;
use super::{simd, stats};
use bloom::{BloomFilterPolicy, Filter, Format, MATCH_ALL_FILTER};

/// Whether queries are counted (statistics on): a caller that asks
/// [`key_may_match_counted`] itself, out of its path, tests this first.
#[inline(always)]
pub(crate) fn counting() -> bool {
    stats::enabled()
}

/// LevelDB's `KeyMayMatch` of `key` in `filter` (any bytes) under `format`: the
/// core's one question, counted after its answer when statistics are on.
#[inline(always)]
pub(crate) fn key_may_match(format: Format, key: &[u8], filter: &[u8]) -> bool {
    if stats::enabled() {
        return match format {
            Format::Current => key_may_match_counted_apart::<false>(key, filter),
            Format::Legacy => key_may_match_counted_apart::<true>(key, filter),
        };
    }
    // The last call of every path, so that nothing is kept alive across it: the
    // query then runs in the registers a call may use, with no frame to set up.
    format.key_may_match(key, filter)
}

/// [`key_may_match`] with statistics on, of the legacy format if `LEGACY`, else the
/// current one; out of the query's path.
#[cold]
#[inline(never)]
fn key_may_match_counted_apart<const LEGACY: bool>(key: &[u8], filter: &[u8]) -> bool {
    key_may_match_counted(format_of::<LEGACY>(), key, filter)
}

/// The legacy format if `LEGACY`, else the current one: for functions compiled once
/// per format.
pub(crate) const fn format_of<const LEGACY: bool>() -> Format {
    if LEGACY {
        Format::Legacy
    } else {
        Format::Current
    }
}

/// [`key_may_match`] with statistics on: the question, then its answer counted in
/// this thread's counters, one addition. Nothing is kept across the question, so it
/// runs in the registers a call may use, as without statistics.
#[inline(always)]
pub(crate) fn key_may_match_counted(format: Format, key: &[u8], filter: &[u8]) -> bool {
    let answer = format.answer(key, filter);
    stats::record_query(format, answer);
    answer.may_match
}

/// The answers for the keys at `pointers` with `lengths` into `results`, which
/// already hold 1 (may match) each, so that a key that cannot be read stays 1.
///
/// # Safety
/// Each non-NULL key must be readable for its length, as for
/// `leveldb_bloom_key_may_match_batch`; the arrays are as long as `results`.
pub(crate) unsafe fn key_may_match_batch(
    policy: &PolicyState,
    pointers: &[*const c_char],
    lengths: &[size_t],
    filter: &[u8],
    results: &mut [u8],
) {
    let format = policy.bloom.format();
    let filter = policy.bloom.read_filter(filter);
    // SAFETY: the caller's promise about each key.
    let absent = match unsafe { same_length_keys(pointers, lengths) } {
        Some(keys) => filter.may_contain_same_length_at(keys, results, simd::level()),
        // SAFETY: the caller's promise about each key.
        None => unsafe { each_readable_key(&filter, pointers, lengths, results) },
    };
    stats::record_batch(format, results.len(), absent, filter.answers_by_rule());
}

/// Keys of any lengths: a key that cannot be read (NULL with a non-zero length) is
/// queried as the empty key, and its result then set to 1. Returns how many answers
/// are "absent" (the reset ones included, as asked).
///
/// # Safety
/// As for [`key_may_match_batch`].
unsafe fn each_readable_key(
    filter: &Filter<'_>,
    pointers: &[*const c_char],
    lengths: &[size_t],
    results: &mut [u8],
) -> usize {
    let any_bad = std::cell::Cell::new(false);
    let keys = pointers.iter().zip(lengths).map(|(&key, &length)| {
        // SAFETY: the caller's promise about each key.
        unsafe { bytes(key, length) }.unwrap_or_else(|| {
            any_bad.set(true);
            &[]
        })
    });
    let absent = filter.may_contain_each_at(keys, results, simd::level());
    if any_bad.get() {
        for ((&key, &length), result) in pointers.iter().zip(lengths).zip(results) {
            if !can_slice(key, length) && length != 0 {
                *result = 1;
            }
        }
    }
    absent
}

/// The filter of `keys`, `malloc`'d, else the match-all filter, else `None` when
/// even that cannot be allocated.
pub(crate) fn create_filter(
    bloom: Option<&BloomFilterPolicy>,
    keys: Option<Keys<'_>>,
) -> Option<(*mut c_char, usize)> {
    let real = || {
        let (bloom, keys) = bloom.zip(keys)?;
        let mut buffer = Zeroed::new(bloom.filter_len(keys.len())?)?;
        build(bloom, keys.iter(), buffer.bytes()).then(|| buffer.hand_out())
    };
    real().or_else(|| malloc_copy(&MATCH_ALL_FILTER))
}

/// Writes the filter of `keys` into `out` when `out` has that filter's length, else
/// the match-all filter: returns the bytes written, `out.len()` or 2. `out` holds at
/// least 2 bytes, all zero (the filter's bits are set into it).
pub(crate) fn write_filter_into<'k>(
    bloom: Option<&BloomFilterPolicy>,
    keys: Option<impl ExactSizeIterator<Item = &'k [u8]>>,
    out: &mut [u8],
) -> usize {
    let built = bloom
        .zip(keys)
        .is_some_and(|(bloom, keys)| build(bloom, keys, out));
    if built {
        out.len()
    } else {
        write_match_all(out)
    }
}

/// Builds the filter of `keys` into `out` and counts it; false (nothing counted)
/// when `out` is not that filter's length.
fn build<'k>(
    bloom: &BloomFilterPolicy,
    keys: impl ExactSizeIterator<Item = &'k [u8]>,
    out: &mut [u8],
) -> bool {
    let num_keys = keys.len();
    let built = bloom.write_filter_at(keys, out, simd::level()).is_ok();
    if built {
        stats::record_build(bloom.format(), num_keys, out.len());
    }
    built
}

/// Writes the match-all filter at the start of `out` (at least 2 bytes); returns 2.
pub(crate) fn write_match_all(out: &mut [u8]) -> usize {
    out[..MATCH_ALL_FILTER.len()].copy_from_slice(&MATCH_ALL_FILTER);
    MATCH_ALL_FILTER.len()
}
