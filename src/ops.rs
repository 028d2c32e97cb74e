//! The policy operations behind the exported functions and the policy object's
//! virtual functions, on checked arguments: each asks the format core, and counts in
//! [`stats`](super::stats) what it asked. None of them catches a panic: each entry
//! point (an exported function or a virtual function) is the one panic boundary
//! around them.

use std::ffi::c_char;

use libc::size_t;

use super::args::{bytes, can_slice, malloc_copy, Keys, Zeroed};
use super::leveldb_filterpolicy_t;
use super::registry::{PolicyState, REGISTRY};
use super::stats;
use bloom::hash::bloom_hash;
use bloom::{BloomFilterPolicy, Filter, Format, SameLengthKeys, MATCH_ALL_FILTER};

/// The policy behind a handle this library returned and has not destroyed.
///
/// # Safety
/// The handle must not be destroyed while the reference is in use.
pub(crate) unsafe fn policy_of<'a>(
    handle: *const leveldb_filterpolicy_t,
) -> Option<&'a PolicyState> {
    // SAFETY: registered handles point at live policies until destroyed.
    REGISTRY
        .lookup(handle as usize)
        .map(|policy| unsafe { &*policy })
}

/// Who asks a one-key query: a policy object, which knows its policy, or C code
/// with a handle, looked up only when the answer needs its format.
#[derive(Clone, Copy)]
pub(crate) enum Asker<'a> {
    Object(&'a PolicyState),
    Handle(*const leveldb_filterpolicy_t),
}

impl Asker<'_> {
    /// The format of the asker's policy; `None` for a handle that is not one of this
    /// library's live policies. The handle registered last, when current, needs no
    /// lookup: it is what a program with one policy always passes.
    #[inline(always)]
    fn format(self) -> Option<Format> {
        match self {
            Self::Object(policy) => Some(policy.bloom.format()),
            Self::Handle(handle) if REGISTRY.is_last_current(handle as usize) => {
                Some(Format::Current)
            }
            // SAFETY: the handle is used only during the query, in which the caller
            // of the exported function promised not to destroy it.
            Self::Handle(handle) => unsafe { policy_of(handle) }.map(|p| p.bloom.format()),
        }
    }
}

/// LevelDB's `KeyMayMatch` of `key` in `filter` (any bytes) for the policy of
/// `asker`; an unknown handle answers "may match". Every format answers "may match"
/// when the key's probes are all set under the current format's reading, so a key
/// found there is answered without the policy's format, unless statistics count
/// it under its format; an absent key needs the format (the legacy one tries the
/// other reading too).
#[inline(always)]
pub(crate) fn key_may_match(asker: Asker<'_>, key: &[u8], filter: &[u8]) -> bool {
    // The hash first: its chain of multiplications is the call's critical path, and
    // decoding the filter runs beside it.
    let h = bloom_hash(key);
    let current = Filter::new(filter);
    let current_reading = current.may_contain_hash(h);
    if current_reading && !stats::enabled() {
        return true;
    }
    let format = if current_reading && REGISTRY.all_current() {
        Some(Format::Current)
    } else {
        asker.format()
    };
    let Some(format) = format else {
        return true;
    };
    let answer = current_reading || (format == Format::Legacy && legacy_may_match(key, filter));
    stats::record_query(format, answer, current.answers_by_rule());
    answer
}

/// The legacy format's answer, for a key the current reading found absent: out of
/// line, so that the one-key path of the current format stays short.
#[cold]
#[inline(never)]
fn legacy_may_match(key: &[u8], filter: &[u8]) -> bool {
    Filter::with_format(filter, Format::Legacy).may_contain(key)
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
    let filter = Filter::with_format(filter, format);
    // SAFETY: the caller's promise about each key.
    let absent = match unsafe { same_length_keys(pointers, lengths) } {
        Some(keys) => filter.may_contain_same_length(keys, results),
        // SAFETY: the caller's promise about each key.
        None => unsafe { each_readable_key(&filter, pointers, lengths, results) },
    };
    stats::record_batch(format, results.len(), absent, filter.answers_by_rule());
}

/// The keys as [`SameLengthKeys`], if they all have one length and none is NULL:
/// then each key's bytes are read where they are, with no slice made of each (the
/// common case, fixed-size keys, without the per-key checks).
///
/// # Safety
/// Each key must be valid for reads of its length, as for
/// `leveldb_bloom_key_may_match_batch`.
unsafe fn same_length_keys<'a>(
    pointers: &'a [*const c_char],
    lengths: &[size_t],
) -> Option<SameLengthKeys<'a>> {
    // SAFETY: `c_char` and `u8` have one size and alignment, so their pointers do.
    let starts = unsafe { std::slice::from_raw_parts(pointers.as_ptr().cast(), pointers.len()) };
    // SAFETY: each non-NULL key is readable for its length per the caller.
    unsafe { SameLengthKeys::from_arrays(starts, lengths) }
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
    let absent = filter.may_contain_each(keys, results);
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
    let built = bloom.write_filter(keys, out).is_ok();
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
