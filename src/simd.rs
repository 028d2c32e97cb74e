//! Hashing many keys at once with AVX2 (8 keys) or AVX-512 (16 keys), and locating
//! the probes of 16 keys at once, at the level `level` chooses, with the scalar code
//! as the fallback and the reference; and prefetching.
//!
//! This is the one module of the core with `unsafe`: calls into functions compiled
//! for a CPU feature (only through a level that proves the feature, see `level`),
//! unaligned vector loads and stores, filter lookups at byte offsets checked in
//! vectors beforehand ([`Located`]), and the prefetch instruction.

mod level;

use crate::format::MAX_PROBES;
use crate::hash::bloom_hash;
use crate::reduce::FastRemainder;
pub(crate) use level::{SimdLevel, Vector};

/// `out[i] = bloom_hash(keys[i])`, computed at `level`.
pub(crate) fn bloom_hashes(level: SimdLevel, keys: &[&[u8]], out: &mut [u32]) {
    match level.vector() {
        None => scalar(keys, out),
        #[cfg(target_arch = "x86_64")]
        Some(Vector::Avx2(avx2)) => avx2.bloom_hashes(keys, out),
        #[cfg(target_arch = "x86_64")]
        Some(Vector::Avx512(avx512)) => avx512.bloom_hashes(keys, out),
    }
}

fn scalar(keys: &[&[u8]], out: &mut [u32]) {
    for (key, h) in keys.iter().zip(out) {
        *h = bloom_hash(key);
    }
}

/// Keys per [`Located`] block.
pub(crate) const BLOCK: usize = 16;

const ROWS: usize = MAX_PROBES as usize;

/// The probes of a block of up to [`BLOCK`] keys, located at once: probe i of key j
/// is bit `positions[i][j]` (`h % bits`) of a bit array of `array_len` bytes.
///
/// Every position held is inside that array: [`locate`] checks those it writes, and
/// the rest are the zeros of [`new`](Self::new) (bit 0 of byte 0; an array has at
/// least one byte). So any position may be read without a bounds check.
pub(crate) struct Located {
    array_len: usize,
    keys: usize,
    probes: u8,
    positions: [[u32; BLOCK]; ROWS],
}

impl Located {
    pub(crate) fn new() -> Self {
        Self {
            array_len: 0,
            keys: 0,
            probes: 0,
            positions: [[0; BLOCK]; ROWS],
        }
    }

    /// How many keys were located.
    #[inline(always)]
    pub(crate) fn keys(&self) -> usize {
        self.keys
    }

    /// How many probes each key has.
    #[inline(always)]
    pub(crate) fn probes(&self) -> u8 {
        self.probes
    }

    /// Requests from memory the lines of the first `rows` probes of every key, for
    /// the bit array at `array`.
    #[inline(always)]
    pub(crate) fn prefetch(&self, array: *const u8, rows: u8) {
        for row in &self.positions[..usize::from(rows.min(self.probes))] {
            for &position in &row[..self.keys] {
                prefetch(array.wrapping_add(position as usize / 8));
            }
        }
    }

    /// The bits of key `j`'s probes in `array`, by probe index: 1 if set.
    ///
    /// # Panics
    /// If `array` is not the length the probes were located for (or none were).
    #[inline(always)]
    pub(crate) fn key_bits<'s>(&'s self, array: &'s [u8], j: usize) -> impl Fn(u8) -> u8 + 's {
        self.check_array(array);
        move |i| {
            let position = self.positions[usize::from(i)][j];
            // SAFETY: every position held is inside an array of `array_len` bytes
            // (see the type's documentation), and `check_array` made sure `array` is
            // that long and not empty.
            let byte = unsafe { *array.get_unchecked(position as usize / 8) };
            (byte >> (position % 8)) & 1
        }
    }

    /// Sets every located bit in `array`, probe by probe (the order the vectors
    /// stored them in).
    ///
    /// # Panics
    /// As for [`key_bits`](Self::key_bits).
    #[inline(always)]
    pub(crate) fn set_bits(&self, array: &mut [u8]) {
        self.check_array(array);
        for row in &self.positions[..usize::from(self.probes)] {
            for &position in &row[..self.keys] {
                // SAFETY: as in `key_bits`.
                unsafe { *array.get_unchecked_mut(position as usize / 8) |= 1 << (position % 8) };
            }
        }
    }

    /// Asserts that `array` is the array the probes were located for, which every
    /// unchecked read relies on: its length, and never the empty one (positions 0
    /// are held before anything is located).
    #[inline(always)]
    fn check_array(&self, array: &[u8]) {
        assert!(
            array.len() == self.array_len && !array.is_empty(),
            "probes located for another array"
        );
    }
}

/// Locates the probes of up to [`BLOCK`] `hashes` into `located`, in a bit array of
/// `array_len` bytes, fewer than 2^32 bits, whose bit count is `bits`.
pub(crate) fn locate(
    vector: Vector,
    array_len: usize,
    num_probes: u8,
    bits: FastRemainder,
    hashes: &[u32],
    located: &mut Located,
) {
    assert!(hashes.len() <= BLOCK && num_probes <= MAX_PROBES);
    assert_eq!(array_len as u64, bits.bytes());
    // The held positions are those of an array at least this long (see `Located`).
    assert!(array_len >= located.array_len.max(1));
    located.array_len = array_len;
    located.keys = hashes.len();
    located.probes = num_probes;
    let rows = &mut located.positions[..usize::from(num_probes)];
    let in_range = match vector {
        #[cfg(target_arch = "x86_64")]
        Vector::Avx2(avx2) => avx2.locate(bits, hashes, rows),
        #[cfg(target_arch = "x86_64")]
        Vector::Avx512(avx512) => avx512.locate(bits, hashes, rows),
    };
    // The remainder is below the bit count (Lemire's theorem, and the exhaustive
    // tests of `FastRemainder`): this never fails, and the lookups rely on it.
    assert!(in_range, "a probe beyond the filter");
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
/// It also gives the instruction set's level (the token `$level`) its two safe entry
/// points, `bloom_hashes` and `locate`. Each instruction set's module provides
/// `locate`, `LANES`, the vector type `V` and, compiled for its features: `rows` (16 bytes at one offset of every key, as four vectors;
/// lane i of row r holding key 4i + r), `transpose` (to four vectors of one word each,
/// lane j holding key j's), `mix` (a word into the states), `mix_tail`, `splat`,
/// `shift_right`, `to_vector` and `store`.
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

            /// Writes row i of `rows` with the position of probe i of each of
            /// `hashes`, in every lane (lanes past the hashes get position 0). Returns
            /// whether every position is inside the array; see `super::locate`.
            pub(super) fn locate(
                self,
                bits: FastRemainder,
                hashes: &[u32],
                rows: &mut [[u32; BLOCK]],
            ) -> bool {
                // SAFETY: as above.
                unsafe { locate(bits, hashes, rows) }
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
            super::scalar(groups.remainder(), outs.into_remainder());
        }

        #[target_feature(enable = $features)]
        fn hash_lanes(keys: &[&[u8]; LANES]) -> V {
            let len = keys[0].len();
            if len >= 16 && keys.iter().all(|key| key.len() == len) {
                same_length(keys, len)
            } else {
                mixed_lengths(keys)
            }
        }

        /// Every key is `len` ≥ 16 bytes long.
        #[target_feature(enable = $features)]
        fn same_length(keys: &[&[u8]; LANES], len: usize) -> V {
            assert!(len >= 16 && keys.iter().all(|key| key.len() == len));
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
            for chunk in 0..chunks {
                // SAFETY: 16 bytes at 16 * chunk end within the shortest key.
                let [w0, w1, w2, w3] = transpose(unsafe { rows(keys, 16 * chunk) });
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

#[cfg(test)]
mod tests {
    use super::*;

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
                        level.name().as_c_str()
                    );
                }
            }
        }
    }
}
