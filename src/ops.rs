//! The policy operations behind the exported functions and LevelDB's callbacks, on
//! checked or promised arguments. None of them catches a panic: each entry point
//! (an exported function or a callback) is the one panic boundary around them.

use std::ffi::{c_char, c_int, CStr};
use std::ptr;

use libc::size_t;

use super::args::{array, bytes, can_slice, malloc_copy, Keys};
use super::leveldb_filterpolicy_t;
use super::registry::{self, Policy};
use bloom::{BloomFilterPolicy, Filter, SameLengthKeys};
use bloom::{Format, MATCH_ALL_FILTER};

/// The name of `bloom`'s filter format, as a static C string.
pub(crate) fn name_of(bloom: &BloomFilterPolicy) -> &'static CStr {
    bloom.format().c_name()
}

/// The policy behind a handle this library returned and has not destroyed.
///
/// # Safety
/// The handle must not be destroyed while the reference is in use.
pub(crate) unsafe fn lookup_policy<'a>(
    handle: *const leveldb_filterpolicy_t,
) -> Option<&'a Policy> {
    // SAFETY: registered handles point at live policies until destroyed.
    registry::lookup(handle as usize).map(|policy| unsafe { &*policy })
}

/// # Safety
/// As for [`lookup_policy`].
pub(crate) unsafe fn policy_of<'a>(
    handle: *const leveldb_filterpolicy_t,
) -> Option<&'a BloomFilterPolicy> {
    // SAFETY: the caller's promise.
    unsafe { lookup_policy(handle) }.map(|policy| &policy.bloom)
}

/// A `calloc`'d buffer, freed when dropped (also by a panic unwinding through)
/// unless handed out.
struct Zeroed(*mut u8, usize);

impl Zeroed {
    fn new(len: usize) -> Option<Self> {
        // SAFETY: calloc has no preconditions; NULL is handled.
        let buffer = unsafe { libc::calloc(len, 1) }.cast::<u8>();
        (!buffer.is_null()).then_some(Self(buffer, len))
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: `len` zeroed bytes, owned by this value.
        unsafe { std::slice::from_raw_parts_mut(self.0, self.1) }
    }

    /// The buffer and its length, now the caller's to `free()`.
    fn hand_out(self) -> (*mut c_char, usize) {
        let this = std::mem::ManuallyDrop::new(self);
        (this.0.cast(), this.1)
    }
}

impl Drop for Zeroed {
    fn drop(&mut self) {
        // SAFETY: allocated by `new` and not handed out.
        unsafe { libc::free(self.0.cast()) };
    }
}

/// The real filter, `malloc`'d, or `None` if it cannot be sized or allocated.
fn malloc_filter(bloom: &BloomFilterPolicy, keys: Keys<'_>) -> Option<(*mut c_char, usize)> {
    let mut buffer = Zeroed::new(bloom.filter_len(keys.len())?)?;
    bloom.write_filter(keys.iter(), buffer.bytes()).ok()?;
    Some(buffer.hand_out())
}

/// `create_filter` for an already resolved policy: the real filter, else the
/// match-all filter, else NULL with length 0. Shared with the LevelDB callbacks.
///
/// # Safety
/// As for `leveldb_bloom_create_filter`.
pub(crate) unsafe fn create_filter(
    bloom: Option<&BloomFilterPolicy>,
    key_array: *const *const c_char,
    key_length_array: *const size_t,
    num_keys: c_int,
    filter_length: *mut size_t,
) -> *mut c_char {
    // SAFETY: the caller passes NULL or a writable size_t.
    let Some(filter_length) = (unsafe { filter_length.as_mut() }) else {
        return ptr::null_mut();
    };
    let real = || {
        let num_keys = usize::try_from(num_keys).ok()?;
        // SAFETY: the caller's promise about the arrays.
        let keys = unsafe { Keys::new(key_array, key_length_array, num_keys) }?;
        malloc_filter(bloom?, keys)
    };
    let filter = real().or_else(|| malloc_copy(&MATCH_ALL_FILTER));
    let (buffer, len) = filter.unwrap_or((ptr::null_mut(), 0));
    *filter_length = len;
    buffer
}

/// `key_may_match` for a policy of the format `format()` finds, asked for only when
/// the answer depends on it: an unknown policy (`None`) and bad pointers answer 1
/// (may match).
///
/// # Safety
/// As for `leveldb_bloom_key_may_match`.
#[inline(always)]
pub(crate) unsafe fn key_may_match(
    format: impl FnOnce() -> Option<Format>,
    key: *const c_char,
    length: size_t,
    filter: *const c_char,
    filter_length: size_t,
) -> u8 {
    // SAFETY: the caller's promise about the key's bytes.
    let Some(key) = (unsafe { bytes(key, length) }) else {
        return 1;
    };
    // SAFETY: the caller's promise about the filter's bytes.
    let Some(filter) = (unsafe { bytes(filter, filter_length) }) else {
        return 1;
    };
    Filter::key_may_match_for(filter, key, |only_to_count| {
        // Counting a "may match" needs no lookup while every policy is current.
        if only_to_count && !registry::legacy_policy_made() {
            return Some(Format::Current);
        }
        format()
    })
    .into()
}

/// The format of the policy behind `handle`, `None` if the handle is not one of this
/// library's live policies. The handle registered last, when current, needs no lookup:
/// it is what a program with one policy always passes.
///
/// # Safety
/// As for [`policy_of`].
#[inline(always)]
pub(crate) unsafe fn format_of(handle: *const leveldb_filterpolicy_t) -> Option<Format> {
    if registry::is_last_current(handle as usize) {
        return Some(Format::Current);
    }
    // SAFETY: the caller's promise.
    unsafe { policy_of(handle) }.map(BloomFilterPolicy::format)
}

/// LevelDB's bits per key: a policy for any `bits_per_key` ≥ 0, in `format`;
/// `None` for a negative one (undefined in LevelDB).
pub(crate) fn bits_per_key(bits_per_key: c_int, format: Format) -> Option<BloomFilterPolicy> {
    u32::try_from(bits_per_key)
        .ok()
        .map(|bits_per_key| BloomFilterPolicy::with_format(bits_per_key, format))
}

/// `leveldb_bloom_key_may_match_batch` for an already resolved policy: every result
/// is 1 before any is computed, so that what is not answered (a bad input, a panic)
/// may match.
///
/// # Safety
/// As for `leveldb_bloom_key_may_match_batch`; the policy must outlive the call.
pub(crate) unsafe fn key_may_match_batch(
    policy: Option<&Policy>,
    key_array: *const *const c_char,
    key_length_array: *const size_t,
    num_keys: size_t,
    filter: *const c_char,
    filter_length: size_t,
    results: *mut u8,
) {
    if num_keys == 0 || !can_slice(results, num_keys) {
        return;
    }
    // SAFETY: non-NULL and writable for `num_keys` bytes per the caller.
    let results = unsafe {
        ptr::write_bytes(results, 1, num_keys);
        std::slice::from_raw_parts_mut(results, num_keys)
    };
    // SAFETY: the caller's promises about every array.
    let (filter, pointers, lengths) = unsafe {
        (
            bytes(filter, filter_length),
            array(key_array, num_keys),
            array(key_length_array, num_keys),
        )
    };
    let (Some(policy), Some(filter), Some(pointers), Some(lengths)) =
        (policy, filter, pointers, lengths)
    else {
        return;
    };
    let filter = Filter::with_format(filter, policy.bloom.format());
    // SAFETY: the caller's promise about each key.
    if let Some(keys) = unsafe { same_length_keys(pointers, lengths) } {
        filter.may_contain_same_length(keys, results);
        return;
    }
    // A bad key is queried as the empty key, and its result is then set to 1.
    let any_bad = std::cell::Cell::new(false);
    let keys = pointers.iter().zip(lengths).map(|(&key, &length)| {
        // SAFETY: the caller's promise about each key.
        unsafe { bytes(key, length) }.unwrap_or_else(|| {
            any_bad.set(true);
            &[]
        })
    });
    filter.may_contain_each(keys, results);
    if any_bad.get() {
        for ((&key, &length), result) in pointers.iter().zip(lengths).zip(results) {
            if !can_slice(key, length) && length != 0 {
                *result = 1;
            }
        }
    }
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

/// `leveldb_bloom_write_filter` for an already resolved policy: the filter, else the
/// match-all filter, written into `out`; returns the bytes written (0 when `out`
/// cannot hold even the match-all filter, which is then untouched).
///
/// # Safety
/// As for `leveldb_bloom_write_filter`.
pub(crate) unsafe fn write_filter(
    bloom: Option<&BloomFilterPolicy>,
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
    // SAFETY: the caller's promises about the arrays.
    let keys = unsafe { Keys::new(key_array, key_length_array, num_keys) };
    let fits = bloom
        .zip(keys)
        .is_some_and(|(bloom, keys)| bloom.filter_len(keys.len()) == Some(out_length));
    // Only the bytes to be written are touched: all of `out` for the real filter.
    let len = if fits {
        out_length
    } else {
        MATCH_ALL_FILTER.len()
    };
    // SAFETY: non-NULL and writable for `out_length` ≥ `len` bytes per the caller;
    // the bytes may be uninitialised, so they are zeroed before a slice is made.
    let out = unsafe {
        ptr::write_bytes(out, 0, len);
        std::slice::from_raw_parts_mut(out.cast::<u8>(), len)
    };
    write_filter_into(bloom, keys.map(Keys::iter), out)
}

/// Writes the filter of `keys` into `out` when `out` has that filter's length, else
/// the match-all filter: returns the bytes written, `out.len()` or 2. `out` holds at
/// least 2 bytes, all zero (the filter's bits are set into it).
pub(crate) fn write_filter_into<'k>(
    bloom: Option<&BloomFilterPolicy>,
    keys: Option<impl ExactSizeIterator<Item = &'k [u8]>>,
    out: &mut [u8],
) -> usize {
    let written = bloom.zip(keys).is_some_and(|(bloom, keys)| {
        bloom.filter_len(keys.len()) == Some(out.len())
            && bloom.write_filter(keys, &mut *out).is_ok()
    });
    if written {
        out.len()
    } else {
        write_match_all(out)
    }
}

/// Writes the match-all filter at the start of `out` (at least 2 bytes); returns 2.
pub(crate) fn write_match_all(out: &mut [u8]) -> usize {
    out[..MATCH_ALL_FILTER.len()].copy_from_slice(&MATCH_ALL_FILTER);
    MATCH_ALL_FILTER.len()
}
