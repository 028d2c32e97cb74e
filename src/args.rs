//! Raw C arguments turned into checked Rust values: byte strings, arrays, key sets,
//! output buffers, and `malloc`'d memory for the caller to `free()`.

use std::ffi::{c_char, c_int};
use std::ptr;

use libc::size_t;

use bloom::SameLengthKeys;

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

/// The bytes of the slice at `slice`, handed over by LevelDB's code to the policy
/// object, which trusts it as LevelDB's own policy does: no check but the one a
/// slice needs, an empty one having no address to read (LevelDB's are never NULL,
/// a program's `Slice(nullptr, 0)` may be).
///
/// # Safety
/// `slice` must be readable, and its data valid for reads of its size, for `'a`.
#[inline(always)]
pub(crate) unsafe fn leveldb_slice<'a>(slice: *const Slice) -> &'a [u8] {
    // SAFETY: the caller's promise.
    let (data, size) = unsafe { ((*slice).data, (*slice).size) };
    let data = data.cast::<u8>();
    // NULL, which a readable slice has only with no bytes, becomes address 1, valid
    // (non-NULL and aligned) for reading no bytes: with no branch, one add.
    let data = data.wrapping_add(usize::from(data.is_null()));
    // SAFETY: non-NULL and aligned, and readable for `size` bytes per the caller
    // (NULL made 1 only for no bytes); a readable object is within isize::MAX bytes.
    unsafe { std::slice::from_raw_parts(data, size) }
}

/// The bytes of the `num_keys` slices at `keys`, which LevelDB's code handed over,
/// each read as [`leveldb_slice`] reads one; `None` if the array is NULL while
/// `num_keys > 0`, or `num_keys` is negative.
///
/// # Safety
/// A non-NULL `keys` must hold `num_keys` slices, each as [`leveldb_slice`] requires,
/// for `'a`.
pub(crate) unsafe fn slices<'a>(
    keys: *const Slice,
    num_keys: c_int,
) -> Option<impl ExactSizeIterator<Item = &'a [u8]>> {
    // SAFETY: the caller's promise about the array.
    let keys = unsafe { array(keys, usize::try_from(num_keys).ok()?) }?;
    // SAFETY: the caller's promise about each slice.
    Some(keys.iter().map(|key| unsafe { leveldb_slice(key) }))
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

/// A C caller's keys as [`SameLengthKeys`], if they all have one length (at most
/// `isize::MAX`, as any slice's) and none is NULL: then each key's bytes are read
/// where they are, with no slice made of each (the common case, fixed-size keys,
/// without the per-key checks).
///
/// # Safety
/// Each non-NULL key must be valid for reads of its length for `'a`, as for
/// `leveldb_bloom_key_may_match_batch`.
///
/// # Panics
/// If the arrays differ in length.
pub(crate) unsafe fn same_length_keys<'a>(
    pointers: &'a [*const c_char],
    lengths: &[size_t],
) -> Option<SameLengthKeys<'a>> {
    assert_eq!(pointers.len(), lengths.len(), "a length per key");
    let key_len = lengths.first().copied().unwrap_or(0);
    // One pass with no early exit, so that it is a few vector instructions a key.
    let keys = pointers.iter().zip(lengths);
    let (other_lengths, nulls) = keys.fold((0, 0), |(other, nulls), (&start, &length)| {
        (
            other | (length ^ key_len),
            nulls + usize::from(start.is_null()),
        )
    });
    if other_lengths != 0 || nulls != 0 || key_len > isize::MAX as usize {
        return None;
    }
    // SAFETY: `c_char` and `u8` have one size and alignment, so their pointers do.
    let starts = unsafe { std::slice::from_raw_parts(pointers.as_ptr().cast(), pointers.len()) };
    // SAFETY: no start is NULL, and each is readable for its length, `key_len`, per
    // the caller.
    Some(unsafe { SameLengthKeys::new(starts, key_len) })
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

/// A `calloc`'d buffer, freed when dropped (also by a panic unwinding through)
/// unless handed out.
pub(crate) struct Zeroed(*mut u8, usize);

impl Zeroed {
    pub(crate) fn new(len: usize) -> Option<Self> {
        // SAFETY: calloc has no preconditions; NULL is handled.
        let buffer = unsafe { libc::calloc(len, 1) }.cast::<u8>();
        (!buffer.is_null()).then_some(Self(buffer, len))
    }

    pub(crate) fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: `len` zeroed bytes, owned by this value.
        unsafe { std::slice::from_raw_parts_mut(self.0, self.1) }
    }

    /// The buffer and its length, now the caller's to `free()`.
    pub(crate) fn hand_out(self) -> (*mut c_char, usize) {
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

/// The first `len` bytes at `out`, zeroed: where a filter is written.
///
/// # Safety
/// `out` must be non-NULL and writable for `len` ≤ `isize::MAX` bytes for `'a` (they
/// may be uninitialised: they are zeroed before the slice is made).
pub(crate) unsafe fn zeroed<'a>(out: *mut c_char, len: usize) -> &'a mut [u8] {
    // SAFETY: the caller's promise.
    unsafe {
        ptr::write_bytes(out, 0, len);
        std::slice::from_raw_parts_mut(out.cast::<u8>(), len)
    }
}

/// The `len` results at `results`, each set to 1 (may match) before any is
/// answered, so that what is not answered (a bad input, a panic) may match; `None`
/// when there are none or they cannot form a slice.
///
/// # Safety
/// A non-NULL `results` must be writable for `len` bytes for `'a`.
pub(crate) unsafe fn results_may_match<'a>(results: *mut u8, len: usize) -> Option<&'a mut [u8]> {
    if len == 0 || !can_slice(results.cast_const(), len) {
        return None;
    }
    // SAFETY: non-NULL, within isize::MAX bytes and writable per the caller.
    unsafe {
        ptr::write_bytes(results, 1, len);
        Some(std::slice::from_raw_parts_mut(results, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_length_keys_take_one_length_and_no_null() {
        let bytes = [7 as c_char; 20];
        let starts = [bytes.as_ptr(), bytes[3..].as_ptr(), bytes[4..].as_ptr()];
        // Every non-NULL start has at least 16 bytes of `bytes` after it, and no
        // length is more than 16, so each call below keeps the function's contract.
        // The keys, copied.
        let keys = |starts: &[*const c_char], lengths: &[usize]| {
            // SAFETY: as above.
            let keys = unsafe { same_length_keys(starts, lengths) };
            keys.map(|keys| keys.iter().map(<[u8]>::to_vec).collect::<Vec<_>>())
        };
        assert_eq!(keys(&starts, &[16, 16, 16]), Some(vec![vec![7; 16]; 3]));
        assert_eq!(keys(&starts, &[16, 15, 16]), None);
        let with_null = [starts[0], std::ptr::null(), starts[2]];
        assert_eq!(keys(&with_null, &[0, 0, 0]), None);
        assert_eq!(keys(&[], &[]), Some(vec![]));
        // SAFETY: the length is refused before any key is read.
        let huge = unsafe { same_length_keys(&starts, &[usize::MAX; 3]) };
        assert!(huge.is_none());
    }
}
