//! Hashing many keys at once with AVX2 (8 keys) or AVX-512 (16 keys), chosen at run
//! time, with the scalar hash as the fallback and the reference; and prefetching.
//!
//! This is the one module of the core with `unsafe`: calls into functions compiled
//! for a CPU feature (made only after the feature was detected), unaligned vector
//! loads, and the prefetch instruction.
//!
//! The level is the best the CPU has, or the one `LEVELDB_BLOOM_SIMD` asks for
//! (`scalar`, `avx2` or `avx512`; read once, at the first call that needs it), so
//! that every path can be run and tested on a machine that has them all. A level the
//! CPU lacks falls back to the best one below it; any other value is ignored.

use std::ffi::CStr;
use std::sync::OnceLock;

use crate::bloom::bloom_hash;

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
            Self::Avx512 => is_x86_feature_detected!("avx512f"),
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
            // found the CPU feature (`SimdLevel::active`, and the tests).
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

/// Asks the CPU to bring the cache line holding `bytes[index]` closer, for reading
/// or writing soon. A hint only: any index is harmless.
#[inline(always)]
pub(crate) fn prefetch(bytes: &[u8], index: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let address = bytes.as_ptr().wrapping_add(index).cast::<i8>();
        // SAFETY: SSE is part of x86_64, and a prefetch never faults nor changes
        // memory, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (bytes, index);
}

/// The SIMD hasher, written once for both instruction sets. LevelDB's hash mixes a
/// key's 4-byte words in order; `LANES` keys are hashed side by side, one per 32-bit
/// lane, over the 16-byte chunks that every key of the group has, and each key's
/// remaining bytes are then finished by the scalar code. Each instruction set's
/// module provides `LANES`, the vector type `V` and, compiled for its feature:
/// `rows` (16 bytes of every key, as four vectors; lane i of row r is key 4i + r),
/// `transpose` (to four vectors of one word each, lane j holding key j), `mix`
/// (one word into the states), and `to_vector` / `to_array`.
#[cfg(target_arch = "x86_64")]
macro_rules! lane_hasher {
    ($feature:literal) => {
        /// `out[i] = bloom_hash(keys[i])`; the CPU must have the feature.
        #[target_feature(enable = $feature)]
        pub(super) fn bloom_hashes(keys: &[&[u8]], out: &mut [u32]) {
            for (keys, out) in keys.chunks(LANES).zip(out.chunks_mut(LANES)) {
                // A short last group is padded with its first key; only the real
                // lanes' hashes are kept.
                let group: [&[u8]; LANES] = std::array::from_fn(|i| *keys.get(i).unwrap_or(&keys[0]));
                let hashes = hash_lanes(&group);
                out.copy_from_slice(&hashes[..out.len()]);
            }
        }

        #[target_feature(enable = $feature)]
        fn hash_lanes(keys: &[&[u8]; LANES]) -> [u32; LANES] {
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
            let states = to_array(h);
            std::array::from_fn(|i| crate::hash::hash_rest(states[i], &keys[i][16 * chunks..]))
        }
    };
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use crate::hash::MULTIPLIER;

    const LANES: usize = 8;
    type V = __m256i;

    lane_hasher!("avx2");

    /// # Safety
    /// Every key must have at least `at + 16` bytes.
    #[target_feature(enable = "avx2")]
    #[inline]
    unsafe fn rows(keys: &[&[u8]; LANES], at: usize) -> [V; 4] {
        // SAFETY: 16 readable bytes at `at` in every key, per the caller; unaligned
        // loads are allowed.
        let load = |i: usize| unsafe { _mm_loadu_si128(keys[i].as_ptr().add(at).cast()) };
        std::array::from_fn(|r| _mm256_set_m128i(load(r + 4), load(r)))
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn transpose([r0, r1, r2, r3]: [V; 4]) -> [V; 4] {
        let (t0, t1) = (_mm256_unpacklo_epi32(r0, r1), _mm256_unpackhi_epi32(r0, r1));
        let (t2, t3) = (_mm256_unpacklo_epi32(r2, r3), _mm256_unpackhi_epi32(r2, r3));
        [
            _mm256_unpacklo_epi64(t0, t2),
            _mm256_unpackhi_epi64(t0, t2),
            _mm256_unpacklo_epi64(t1, t3),
            _mm256_unpackhi_epi64(t1, t3),
        ]
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn mix(h: V, word: V) -> V {
        let h = _mm256_mullo_epi32(
            _mm256_add_epi32(h, word),
            _mm256_set1_epi32(MULTIPLIER as i32),
        );
        _mm256_xor_si256(h, _mm256_srli_epi32::<16>(h))
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn to_vector(lanes: [u32; LANES]) -> V {
        // SAFETY: reads the 32 bytes of the array; unaligned loads are allowed.
        unsafe { _mm256_loadu_si256(lanes.as_ptr().cast()) }
    }

    #[target_feature(enable = "avx2")]
    #[inline]
    fn to_array(v: V) -> [u32; LANES] {
        let mut lanes = [0; LANES];
        // SAFETY: writes the 32 bytes of the array; unaligned stores are allowed.
        unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().cast(), v) };
        lanes
    }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    use crate::hash::MULTIPLIER;

    const LANES: usize = 16;
    type V = __m512i;

    lane_hasher!("avx512f");

    /// # Safety
    /// Every key must have at least `at + 16` bytes.
    #[target_feature(enable = "avx512f")]
    #[inline]
    unsafe fn rows(keys: &[&[u8]; LANES], at: usize) -> [V; 4] {
        // SAFETY: 16 readable bytes at `at` in every key, per the caller; unaligned
        // loads are allowed.
        let load = |i: usize| unsafe { _mm_loadu_si128(keys[i].as_ptr().add(at).cast()) };
        std::array::from_fn(|r| {
            let v = _mm512_castsi128_si512(load(r));
            let v = _mm512_inserti32x4::<1>(v, load(r + 4));
            let v = _mm512_inserti32x4::<2>(v, load(r + 8));
            _mm512_inserti32x4::<3>(v, load(r + 12))
        })
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn transpose([r0, r1, r2, r3]: [V; 4]) -> [V; 4] {
        let (t0, t1) = (_mm512_unpacklo_epi32(r0, r1), _mm512_unpackhi_epi32(r0, r1));
        let (t2, t3) = (_mm512_unpacklo_epi32(r2, r3), _mm512_unpackhi_epi32(r2, r3));
        [
            _mm512_unpacklo_epi64(t0, t2),
            _mm512_unpackhi_epi64(t0, t2),
            _mm512_unpacklo_epi64(t1, t3),
            _mm512_unpackhi_epi64(t1, t3),
        ]
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn mix(h: V, word: V) -> V {
        let h = _mm512_mullo_epi32(
            _mm512_add_epi32(h, word),
            _mm512_set1_epi32(MULTIPLIER as i32),
        );
        _mm512_xor_si512(h, _mm512_srli_epi32::<16>(h))
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn to_vector(lanes: [u32; LANES]) -> V {
        // SAFETY: reads the 64 bytes of the array; unaligned loads are allowed.
        unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) }
    }

    #[target_feature(enable = "avx512f")]
    #[inline]
    fn to_array(v: V) -> [u32; LANES] {
        let mut lanes = [0; LANES];
        // SAFETY: writes the 64 bytes of the array; unaligned stores are allowed.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), v) };
        lanes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys of every length 0..=80 with bytes of every value, in groups whose
    /// lengths differ, and groups of one length: each level equals the scalar hash.
    #[test]
    fn every_available_level_hashes_as_the_scalar_code() {
        let bytes: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
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
                eprintln!("SIMD level {:?} not available on this CPU: skipped", level.name());
                continue;
            }
            // Every group size and offset, so short and padded groups are covered.
            for window in [1, 7, 8, 9, 15, 16, 17, 31, 33, 64, keys.len()] {
                for start in (0..keys.len()).step_by(window.max(61)) {
                    let keys = &keys[start..(start + window).min(keys.len())];
                    let mut out = vec![0; keys.len()];
                    bloom_hashes(level, keys, &mut out);
                    assert_eq!(out, expected[start..start + keys.len()], "{:?}", level.name());
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
