//! Hashing many keys at once with AVX2 (8 keys) or AVX-512 (16 keys), and locating
//! the probes of 16 keys at once, chosen at run time, with the scalar code as the
//! fallback and the reference; and prefetching.
//!
//! This is the one module of the core with `unsafe`: calls into functions compiled
//! for a CPU feature (made only after the feature was detected), unaligned vector
//! loads and stores, filter lookups at byte offsets checked in vectors beforehand
//! ([`Located`]), and the prefetch instruction.
//!
//! The level is the best the CPU has, or the one `LEVELDB_BLOOM_SIMD` asks for
//! (`scalar`, `avx2` or `avx512`; read once, at the first call that needs it), so
//! that every path can be run and tested on a machine that has them all. A level the
//! CPU lacks falls back to the best one below it; any other value is ignored.

use std::ffi::CStr;
use std::sync::OnceLock;

use crate::bloom::{all_probes_set, bloom_hash, FastRemainder, MAX_PROBES, PROBES_PER_BRANCH};

/// How keys are hashed in bulk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SimdLevel {
    Scalar,
    Avx2,
    Avx512,
}

/// The environment variable that forces a level.
pub(crate) const LEVEL_VARIABLE: &str = "LEVELDB_BLOOM_SIMD";

impl SimdLevel {
    pub(crate) const ALL: [Self; 3] = [Self::Scalar, Self::Avx2, Self::Avx512];

    /// The level's name, as `LEVELDB_BLOOM_SIMD` spells it.
    pub(crate) fn name(self) -> &'static CStr {
        match self {
            Self::Scalar => c"scalar",
            Self::Avx2 => c"avx2",
            Self::Avx512 => c"avx512",
        }
    }

    /// Whether this CPU can run the level.
    pub(crate) fn is_available(self) -> bool {
        match self {
            Self::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Self::Avx2 => is_x86_feature_detected!("avx2"),
            #[cfg(target_arch = "x86_64")]
            Self::Avx512 => {
                is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512dq")
            }
            #[cfg(not(target_arch = "x86_64"))]
            Self::Avx2 | Self::Avx512 => false,
        }
    }

    /// The level in use: chosen once per process.
    pub(crate) fn active() -> Self {
        static ACTIVE: OnceLock<SimdLevel> = OnceLock::new();
        *ACTIVE.get_or_init(|| {
            let requested = std::env::var_os(LEVEL_VARIABLE);
            let requested = requested.as_ref().map(|value| value.as_encoded_bytes());
            let ceiling = Self::ALL
                .into_iter()
                .find(|level| requested == Some(level.name().to_bytes()))
                .unwrap_or(Self::Avx512);
            Self::best_up_to(ceiling)
        })
    }

    fn best_up_to(ceiling: Self) -> Self {
        Self::ALL
            .into_iter()
            .rev()
            .find(|level| *level <= ceiling && level.is_available())
            .unwrap_or(Self::Scalar)
    }
}

/// `out[i] = bloom_hash(keys[i])`, computed at `level`, which must be available.
pub(crate) fn bloom_hashes(level: SimdLevel, keys: &[&[u8]], out: &mut [u32]) {
    debug_assert!(level.is_available());
    match level {
        SimdLevel::Scalar => scalar(keys, out),
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => {
            // SAFETY: levels other than Scalar are used only where `is_available`
            // found the CPU features (`SimdLevel::active`, and the tests).
            unsafe { avx2::bloom_hashes(keys, out) }
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx512 => {
            // SAFETY: as above.
            unsafe { avx512::bloom_hashes(keys, out) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        SimdLevel::Avx2 | SimdLevel::Avx512 => scalar(keys, out),
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
/// is bit `bits[i][j]` of byte `bytes[i][j]` of a bit array of `array_len` bytes.
/// [`locate`] checks that every byte is below `array_len`, which the lookups below
/// rely on.
pub(crate) struct Located {
    array_len: usize,
    keys: usize,
    probes: u8,
    bytes: [[u32; BLOCK]; ROWS],
    bits: [[u32; BLOCK]; ROWS],
}

impl Located {
    pub(crate) fn new() -> Self {
        Self {
            array_len: 0,
            keys: 0,
            probes: 0,
            bytes: [[0; BLOCK]; ROWS],
            bits: [[0; BLOCK]; ROWS],
        }
    }

    /// Requests the lines of the probes each key is sure to test (see
    /// `all_probes_set`) from memory, for the bit array at `array`.
    #[inline(always)]
    pub(crate) fn prefetch(&self, array: *const u8) {
        for row in &self.bytes[..usize::from(self.probes.min(PROBES_PER_BRANCH))] {
            for &byte in &row[..self.keys] {
                prefetch(array.wrapping_add(byte as usize));
            }
        }
    }

    /// The bit of probe `i` of key `j`.
    #[inline(always)]
    fn bit(&self, array: &[u8], i: u8, j: usize) -> u8 {
        let (byte, bit) = (self.bytes[usize::from(i)][j], self.bits[usize::from(i)][j]);
        debug_assert!((byte as usize) < array.len() && array.len() == self.array_len);
        // SAFETY: `locate` checked that every byte is below `array_len`, and the
        // callers checked that `array` is that long.
        (unsafe { *array.get_unchecked(byte as usize) } >> bit) & 1
    }

    /// Writes each key's answer to the next of `results`.
    #[inline(always)]
    pub(crate) fn answer<'r, T: From<bool> + 'r>(
        &self,
        array: &[u8],
        results: &mut impl Iterator<Item = &'r mut T>,
    ) {
        assert_eq!(array.len(), self.array_len);
        for (j, result) in (0..self.keys).zip(results) {
            *result = all_probes_set(self.probes, |i| self.bit(array, i, j)).into();
        }
    }

    /// Sets every probe bit of every key.
    #[inline(always)]
    pub(crate) fn set(&self, array: &mut [u8]) {
        assert_eq!(array.len(), self.array_len);
        for (row, bits) in self.bytes.iter().zip(&self.bits).take(self.probes.into()) {
            for (&byte, &bit) in row.iter().zip(bits).take(self.keys) {
                debug_assert!((byte as usize) < array.len());
                // SAFETY: as in `bit`.
                unsafe { *array.get_unchecked_mut(byte as usize) |= 1 << bit };
            }
        }
    }
}

/// Whether `level` locates probes in vectors ([`locate`]).
pub(crate) fn locates(level: SimdLevel) -> bool {
    level != SimdLevel::Scalar
}

/// Locates the probes of up to [`BLOCK`] `hashes` into `located`, in a bit array of
/// `array_len` bytes, fewer than 2^32 bits, whose bit count is `bits`. `level` must
/// be available and one that [`locates`].
pub(crate) fn locate(
    level: SimdLevel,
    array_len: usize,
    num_probes: u8,
    bits: FastRemainder,
    hashes: &[u32],
    located: &mut Located,
) {
    assert!(hashes.len() <= BLOCK && num_probes <= MAX_PROBES);
    assert_eq!(array_len as u64, bits.bytes());
    located.array_len = array_len;
    located.keys = hashes.len();
    located.probes = num_probes;
    let in_range = match level {
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx2 => {
            // SAFETY: levels other than Scalar are used only where `is_available`
            // found the CPU features (`SimdLevel::active`, and the tests).
            unsafe { avx2::locate(bits, num_probes, hashes, located) }
        }
        #[cfg(target_arch = "x86_64")]
        SimdLevel::Avx512 => {
            // SAFETY: as above.
            unsafe { avx512::locate(bits, num_probes, hashes, located) }
        }
        _ => unreachable!("{level:?} does not locate probes"),
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
/// Each instruction set's module provides `LANES`, the vector type `V` and, compiled
/// for its features: `rows` (16 bytes at one offset of every key, as four vectors;
/// lane i of row r holding key 4i + r), `transpose` (to four vectors of one word each,
/// lane j holding key j's), `mix` (a word into the states), `mix_tail`, `splat`,
/// `shift_right`, `to_vector` and `store`.
#[cfg(target_arch = "x86_64")]
macro_rules! lane_hasher {
    ($features:literal) => {
        /// `out[i] = bloom_hash(keys[i])`; the CPU must have the features.
        #[target_feature(enable = $features)]
        pub(super) fn bloom_hashes(keys: &[&[u8]], out: &mut [u32]) {
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
            let mut h = splat(crate::hash::initial_state(len, crate::bloom::HASH_SEED));
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
                crate::hash::initial_state(keys[i].len(), crate::bloom::HASH_SEED)
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
        for level in SimdLevel::ALL {
            if !level.is_available() {
                eprintln!(
                    "SIMD level {:?} not available on this CPU: skipped",
                    level.name()
                );
                continue;
            }
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

    #[test]
    fn levels_fall_back_to_what_the_cpu_has() {
        assert_eq!(SimdLevel::best_up_to(SimdLevel::Scalar), SimdLevel::Scalar);
        for ceiling in SimdLevel::ALL {
            let chosen = SimdLevel::best_up_to(ceiling);
            assert!(chosen <= ceiling && chosen.is_available());
        }
        assert!(SimdLevel::active().is_available());
    }
}
