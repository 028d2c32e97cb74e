//! The scalar code of each bulk operation: the level without vectors, and what the
//! vector levels leave over (the keys after the last whole group of lanes).

use crate::hash::bloom_hash;

/// `out[i] = bloom_hash(keys[i])`.
pub(crate) fn bloom_hashes(keys: &[&[u8]], out: &mut [u32]) {
    for (key, h) in keys.iter().zip(out) {
        *h = bloom_hash(key);
    }
}

/// `out[i]`: the hash of the `len` bytes at `starts[i]`.
///
/// # Safety
/// Every start must be valid for reads of `len` bytes.
pub(crate) unsafe fn same_length(starts: &[*const u8], len: usize, out: &mut [u32]) {
    for (&start, h) in starts.iter().zip(out) {
        // SAFETY: readable for `len` bytes per the caller.
        *h = bloom_hash(unsafe { std::slice::from_raw_parts(start, len) });
    }
}
