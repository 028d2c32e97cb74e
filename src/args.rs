//! Raw C arguments turned into checked Rust values: byte strings, arrays, key sets,
//! and `malloc`'d copies for the caller to `free()`.

use std::ffi::{c_char, c_int};
use std::ptr;

use libc::size_t;

/// `len` bytes at `data`; NULL is the empty slice when `len` is 0, and `None` otherwise.
///
/// # Safety
/// A non-NULL `data` must be valid for reads of `len` bytes for `'a`.
pub(crate) unsafe fn bytes<'a>(data: *const c_char, len: size_t) -> Option<&'a [u8]> {
    // SAFETY: the caller's promise; NULL and oversized lengths are refused first.
    unsafe { array(data.cast::<u8>(), len) }
}

/// `len` values at `data`, with the same rules as [`bytes`].
///
/// # Safety
/// A non-NULL `data` must be valid for reads of `len` values for `'a`.
pub(crate) unsafe fn array<'a, T>(data: *const T, len: usize) -> Option<&'a [T]> {
    if len == 0 {
        return Some(&[]);
    }
    if !can_slice(data, len) {
        return None;
    }
    // SAFETY: non-NULL, within isize::MAX bytes, and valid for reads per the caller.
    Some(unsafe { std::slice::from_raw_parts(data, len) })
}

/// Whether `len` values at `data` can form a slice: non-NULL and within isize::MAX bytes.
pub(crate) fn can_slice<T>(data: *const T, len: usize) -> bool {
    !data.is_null()
        && len
            .checked_mul(size_of::<T>())
            .is_some_and(|bytes| bytes <= isize::MAX as usize)
}

/// LevelDB's `leveldb::Slice`: a pointer and a length, as LevelDB passes keys and
/// filters to a policy object.
#[repr(C)]
pub(crate) struct Slice {
    pub(crate) data: *const c_char,
    pub(crate) size: size_t,
}

/// The bytes of the `num_keys` slices at `keys`; `None` if the array is NULL while
/// `num_keys > 0`, `num_keys` is negative, or a key is NULL with a non-zero size.
///
/// # Safety
/// A non-NULL `keys` must hold `num_keys` slices, each valid for reads of its size,
/// for `'a`.
pub(crate) unsafe fn slices<'a>(
    keys: *const Slice,
    num_keys: c_int,
) -> Option<impl ExactSizeIterator<Item = &'a [u8]>> {
    // SAFETY: the caller's promise about the array.
    let keys = unsafe { array(keys, usize::try_from(num_keys).ok()?) }?;
    let valid = keys
        .iter()
        .all(|key| key.size == 0 || can_slice(key.data, key.size));
    valid.then(|| {
        keys.iter().map(|key| {
            // SAFETY: each key checked above; its bytes are readable per the caller.
            unsafe { bytes(key.data, key.size) }.unwrap_or_default()
        })
    })
}

/// A C key array, checked: every key is either non-NULL or empty.
#[derive(Clone, Copy)]
pub(crate) struct Keys<'a> {
    pointers: &'a [*const c_char],
    lengths: &'a [size_t],
}

impl<'a> Keys<'a> {
    /// `None` if either array is NULL while `num_keys > 0`, or a key is NULL with a
    /// non-zero length.
    ///
    /// # Safety
    /// Non-NULL arrays must hold `num_keys` entries, and each non-NULL key as many
    /// readable bytes as its length, for `'a`.
    pub(crate) unsafe fn new(
        key_array: *const *const c_char,
        key_length_array: *const size_t,
        num_keys: usize,
    ) -> Option<Self> {
        // SAFETY: the caller's promise.
        let (pointers, lengths) = unsafe {
            (
                array(key_array, num_keys)?,
                array(key_length_array, num_keys)?,
            )
        };
        let valid = pointers
            .iter()
            .zip(lengths)
            .all(|(key, &len)| len == 0 || (!key.is_null() && len <= isize::MAX as usize));
        valid.then_some(Self { pointers, lengths })
    }

    pub(crate) fn len(&self) -> usize {
        self.pointers.len()
    }

    pub(crate) fn iter(self) -> impl ExactSizeIterator<Item = &'a [u8]> {
        self.pointers.iter().zip(self.lengths).map(|(&key, &len)| {
            if len == 0 {
                &[][..]
            } else {
                // SAFETY: `new` checked the key is non-NULL and its length in range;
                // its creator promised the bytes are readable for 'a.
                unsafe { std::slice::from_raw_parts(key.cast::<u8>(), len) }
            }
        })
    }
}

/// A `malloc`'d copy of `filter`, for the caller to `free()`.
pub(crate) fn malloc_copy(filter: &[u8]) -> Option<(*mut c_char, usize)> {
    // SAFETY: malloc has no preconditions; NULL is handled.
    let buffer = unsafe { libc::malloc(filter.len()) }.cast::<u8>();
    if buffer.is_null() {
        return None;
    }
    // SAFETY: `buffer` was just allocated with room for `filter.len()` bytes.
    unsafe { ptr::copy_nonoverlapping(filter.as_ptr(), buffer, filter.len()) };
    Some((buffer.cast(), filter.len()))
}
