//! Hashing many keys at once with AVX2 (8 keys) or AVX-512 (16 keys), at the level
//! `level` chooses, with the scalar code as the fallback and the reference; and
//! prefetching.
//!
//! At AVX-512, a batch query also locates and tests its keys' probes in vectors
//! (`avx512_probes`). Elsewhere, and for building, probes are located one by one
//! where their bits are tested or set: with AVX2, and for building at every level,
//! that was the faster of the two (docs/performance.md).
//!
//! Most of the core's `unsafe` is here: calls into functions compiled for a CPU
//! feature (only through a level that proves the feature, see `level`), unaligned
//! vector loads and stores, gathers, and the prefetch instruction. (Elsewhere: one
//! unchecked read in `bit_position`, and the keys of `SameLengthKeys`.)

mod level;
mod scalar;

pub use level::SimdLevel;
#[cfg(target_arch = "x86_64")]
use level::Vector;
pub use level::SIMD_LEVELS;

/// `out[i] = bloom_hash(keys[i])`, computed at `level`.
pub(crate) fn bloom_hashes(level: SimdLevel, keys: &[&[u8]], out: &mut [u32]) {
    match level.vector() {
        None => scalar::bloom_hashes(keys, out),
        #[cfg(target_arch = "x86_64")]
        Some(Vector::Avx2(avx2)) => avx2.bloom_hashes(keys, out),
        #[cfg(target_arch = "x86_64")]
        Some(Vector::Avx512(avx512)) => avx512.bloom_hashes(keys, out),
    }
}

/// `out[i]`: the hash of the `len` bytes at `starts[i]`, computed at `level`.
///
/// # Safety
/// Every start must be valid for reads of `len` bytes.
pub(crate) unsafe fn bloom_hashes_same_length(
    level: SimdLevel,
    starts: &[*const u8],
    len: usize,
    out: &mut [u32],
) {
    // SAFETY: the caller's promise.
    unsafe {
        match level.vector() {
            None => scalar::same_length(starts, len, out),
            #[cfg(target_arch = "x86_64")]
            Some(Vector::Avx2(avx2)) => avx2.bloom_hashes_same_length(starts, len, out),
            #[cfg(target_arch = "x86_64")]
            Some(Vector::Avx512(avx512)) => avx512.bloom_hashes_same_length(starts, len, out),
        }
    }
}

/// `array`, a filter's bit array, set up for a batch query to test its keys' probes
/// in vectors, where `level` can (AVX-512) and the array suits it (see
/// [`LaneProbes::new`]).
#[cfg(target_arch = "x86_64")]
pub(crate) fn lane_probes(
    level: SimdLevel,
    array: &[u8],
    num_probes: u8,
) -> Option<LaneProbes<'_>> {
    match level.vector()? {
        Vector::Avx512(avx512) => LaneProbes::new(avx512, array, num_probes),
        Vector::Avx2(_) => None,
    }
}

/// Asks the CPU to bring the cache line holding `address` closer, for reading or
/// writing soon. A hint only: any address is harmless.
#[inline(always)]
pub(crate) fn prefetch(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of x86_64, and a prefetch never faults nor changes
        // memory, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// The SIMD hasher, written once for both instruction sets. LevelDB's hash mixes a
/// key's 4-byte words in order, then its 1–3 tail bytes; `LANES` keys are hashed side
/// by side, one per 32-bit lane. Keys of one length (the common case: fixed-size
/// keys) are hashed entirely in vectors: whole 16-byte chunks, then the last words
/// and the tail taken from 16-byte windows that end where they end. Keys of mixed
/// lengths share the chunks that all of them have, and each is finished by the
/// scalar code.
///
/// It also gives the instruction set's level (the token `$level`) its safe entry
/// point, `bloom_hashes`. Each instruction set's module provides `LANES`, the vector
/// type `V` and, compiled for its features: `rows` (16 bytes at one offset of every
/// key, as four vectors; lane i of row r holding key 4i + r), `transpose` (to four
/// vectors of one word each, lane j holding key j's), `mix` (a word into the states),
/// `mix_tail`, `splat`, `shift_right`, `to_vector` and `store`.
#[cfg(target_arch = "x86_64")]
macro_rules! lane_hasher {
    ($features:literal, $level:ident) => {
        impl $level {
            /// `out[i] = bloom_hash(keys[i])`.
            pub(super) fn bloom_hashes(self, keys: &[&[u8]], out: &mut [u32]) {
                // SAFETY: this level's value is made only where detection found the
                // features (see `level`).
                unsafe { bloom_hashes(keys, out) }
            }

            /// `out[i]`: the hash of the `len` bytes at `starts[i]`.
            ///
            /// # Safety
            /// Every start must be valid for reads of `len` bytes.
            pub(super) unsafe fn bloom_hashes_same_length(
                self,
                starts: &[*const u8],
                len: usize,
                out: &mut [u32],
            ) {
                // SAFETY: as above, and the caller's promise.
                unsafe { bloom_hashes_same_length(starts, len, out) }
            }
        }

        /// `out[i]`: the hash of the `len` bytes at `starts[i]`; the CPU must have
        /// the features.
        ///
        /// # Safety
        /// Every start must be valid for reads of `len` bytes.
        #[target_feature(enable = $features)]
        unsafe fn bloom_hashes_same_length(starts: &[*const u8], len: usize, out: &mut [u32]) {
            let key = |start| {
                // SAFETY: every start is readable for `len` bytes, per the caller.
                unsafe { std::slice::from_raw_parts(start, len) }
            };
            let mut groups = starts.chunks_exact(LANES);
            let mut outs = out.chunks_exact_mut(LANES);
            for (group, out) in (&mut groups).zip(&mut outs) {
                let group: &[*const u8; LANES] = group.try_into().expect("chunks of LANES");
                let h = if len >= 16 {
                    // SAFETY: as above.
                    unsafe { same_length(group, len) }
                } else {
                    mixed_lengths(&group.map(key))
                };
                store(out, h);
            }
            // SAFETY: as above.
            unsafe {
                crate::simd::scalar::same_length(groups.remainder(), len, outs.into_remainder())
            }
        }

        /// `out[i] = bloom_hash(keys[i])`; the CPU must have the features.
        #[target_feature(enable = $features)]
        fn bloom_hashes(keys: &[&[u8]], out: &mut [u32]) {
            let mut groups = keys.chunks_exact(LANES);
            let mut outs = out.chunks_exact_mut(LANES);
            for (group, out) in (&mut groups).zip(&mut outs) {
                let group: &[&[u8]; LANES] = group.try_into().expect("chunks of LANES");
                store(out, hash_lanes(group));
            }
            crate::simd::scalar::bloom_hashes(groups.remainder(), outs.into_remainder());
        }

        #[target_feature(enable = $features)]
        fn hash_lanes(keys: &[&[u8]; LANES]) -> V {
            let len = keys[0].len();
            if len >= 16 && keys.iter().all(|key| key.len() == len) {
                // SAFETY: every key has `len` bytes.
                unsafe { same_length(&keys.map(<[u8]>::as_ptr), len) }
            } else {
                mixed_lengths(keys)
            }
        }

        /// The hashes of keys of `len` ≥ 16 bytes, from their first bytes' addresses.
        ///
        /// # Safety
        /// Every key must be readable for `len` bytes.
        #[target_feature(enable = $features)]
        unsafe fn same_length(keys: &[*const u8; LANES], len: usize) -> V {
            assert!(len >= 16);
            let words = len / 4;
            let mut h = splat(crate::hash::initial_state(len, crate::format::HASH_SEED));
            for chunk in 0..words / 4 {
                // SAFETY: the chunk ends at 16 * (chunk + 1) <= 4 * words <= len.
                let [w0, w1, w2, w3] = transpose(unsafe { rows(keys, 16 * chunk) });
                h = mix(mix(mix(mix(h, w0), w1), w2), w3);
            }
            let rest = words % 4;
            if rest > 0 {
                // The 16 bytes that end the whole words; their last `rest` words are
                // the ones not mixed yet. SAFETY: 16 <= 4 * words <= len.
                let last = transpose(unsafe { rows(keys, 4 * words - 16) });
                for &word in &last[4 - rest..] {
                    h = mix(h, word);
                }
            }
            let tail = len % 4;
            if tail > 0 {
                // The last 4 bytes, shifted so that only the tail bytes remain, in the
                // order LevelDB adds them. SAFETY: 16 <= len.
                let [_, _, _, last_word] = transpose(unsafe { rows(keys, len - 16) });
                h = mix_tail(h, shift_right(last_word, 8 * (4 - tail as i32)));
            }
            h
        }

        #[target_feature(enable = $features)]
        fn mixed_lengths(keys: &[&[u8]; LANES]) -> V {
            let shortest = keys.iter().map(|key| key.len()).min().unwrap_or(0);
            let chunks = shortest / 16;
            let mut h = to_vector(std::array::from_fn(|i| {
                crate::hash::initial_state(keys[i].len(), crate::format::HASH_SEED)
            }));
            let starts = keys.map(<[u8]>::as_ptr);
            for chunk in 0..chunks {
                // SAFETY: 16 bytes at 16 * chunk end within the shortest key.
                let [w0, w1, w2, w3] = transpose(unsafe { rows(&starts, 16 * chunk) });
                h = mix(mix(mix(mix(h, w0), w1), w2), w3);
            }
            let mut states = [0; LANES];
            store(&mut states, h);
            to_vector(std::array::from_fn(|i| {
                crate::hash::hash_rest(
                    states[i],
                    &keys[i][16 * chunks..],
                    crate::hash::TailBytes::Unsigned,
                )
            }))
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2;

#[cfg(target_arch = "x86_64")]
mod avx512;

#[cfg(target_arch = "x86_64")]
mod avx512_probes;
#[cfg(target_arch = "x86_64")]
pub(crate) use avx512_probes::{LaneProbes, MAX_KEYS as LANE_PROBES_MAX_KEYS};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::bloom_hash;

    /// Keys of every length 0..=80 with bytes of every value, in groups whose
    /// lengths differ, and groups of one length: each level equals the scalar hash.
    #[test]
    fn every_available_level_hashes_as_the_scalar_code() {
        let bytes: Vec<u8> = (0..4096u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let mut keys: Vec<&[u8]> = Vec::new();
        for len in 0..=80usize {
            for start in 0..24 {
                keys.push(&bytes[start * 97 % 3000..][..len]);
            }
        }
        for start in 0..200 {
            keys.push(&bytes[start..start + 100]);
            keys.push(&bytes[start * 7..start * 7 + 16]);
        }
        let expected: Vec<u32> = keys.iter().map(|key| bloom_hash(key)).collect();
        for level in SimdLevel::each_available() {
            // Every group size and offset, so short and padded groups are covered.
            for window in [1, 7, 8, 9, 15, 16, 17, 31, 33, 64, keys.len()] {
                for start in (0..keys.len()).step_by(window.max(61)) {
                    let keys = &keys[start..(start + window).min(keys.len())];
                    let mut out = vec![0; keys.len()];
                    bloom_hashes(level, keys, &mut out);
                    assert_eq!(
                        out,
                        expected[start..start + keys.len()],
                        "{:?}",
                        level.name()
                    );
                }
            }
        }
    }

    /// Keys of one length, 0..=80 bytes, given by their starts: each level equals the
    /// scalar hash, for groups whole and partial.
    #[test]
    fn every_available_level_hashes_same_length_keys_as_the_scalar_code() {
        let bytes: Vec<u8> = (0..8192u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        for len in 0..=80usize {
            let starts: Vec<*const u8> = (0..100).map(|i| bytes[i * 67..].as_ptr()).collect();
            let expected: Vec<u32> = (0..100)
                .map(|i| bloom_hash(&bytes[i * 67..][..len]))
                .collect();
            for level in SimdLevel::each_available() {
                for count in [1, 15, 16, 17, 64, 100] {
                    let mut out = vec![0; count];
                    // SAFETY: each start is followed by at least 8192 - 99 * 67 > 80
                    // bytes of `bytes`.
                    unsafe { bloom_hashes_same_length(level, &starts[..count], len, &mut out) };
                    assert_eq!(out, expected[..count], "{:?}, {len} bytes", level.name());
                }
            }
        }
    }
}
