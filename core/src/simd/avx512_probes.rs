//! The AVX-512 level's batch query: the probes of 64 keys located and tested in
//! vectors, four blocks of 16 keys side by side.
//!
//! Each key's first probe is `h mod bits`, computed in doubles; each next probe is
//! found from the one before by adding δ mod bits (and taking off 2^32 mod bits when
//! `h + δ` wraps past 2^32, as LevelDB's 32-bit arithmetic does), so a key costs two
//! divisions in vectors and no multiplication per probe. Each probe's bit is read
//! into its lane (see [`Reads`]) and tested in the vector. Every probe of every key
//! is tested, with no branch: no mispredicted branch for absent keys, and the
//! filter's memory for 64 keys requested at once (docs/performance.md).

use std::arch::x86_64::*;

use super::avx512::{splat, to_vector, LANES, V};
use super::level::Avx512;

/// Blocks of 16 keys tested side by side.
const BLOCKS: usize = 4;

/// The most keys [`LaneProbes::all_set`] takes: one bit of its answer each.
pub(crate) const MAX_KEYS: usize = BLOCKS * LANES;

/// Bit arrays of more bytes than this are read by [`Reads::Words`], others by
/// [`Reads::Bytes`]: a gather keeps more reads in flight while the array comes from
/// beyond the L2 cache, and byte loads are quicker while it is in it; where the two
/// cross over is measured in docs/performance.md.
const GATHER_ABOVE: usize = 256 << 10;

/// How each lane's probe bit is read from the bit array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Reads {
    /// A scalar load of each lane's byte, put into the vector: the fewer cycles a
    /// read while the filter is in cache.
    Bytes,
    /// One gather (`vpgatherdd`) of each lane's 32-bit word: a gather costs more
    /// cycles than its 16 loads (microcoded on Zen 4), but far fewer instructions,
    /// so that many more reads are in flight while the filter's lines come from
    /// memory.
    Words,
}

/// A filter's bit array set up for testing many keys' probes in vectors.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaneProbes<'a> {
    /// Proof that the CPU has AVX-512 F: held, not read.
    _level: Avx512,
    array: &'a [u8],
    num_probes: u8,
    /// The bit count, at most 2^31, so that a remainder plus a step fits a lane.
    bits: u32,
    /// 2^32 mod bits: what a probe's hash loses when it wraps past 2^32.
    wrap: u32,
    /// 1 / bits, rounded to the nearest double.
    inverse: f64,
    /// How the probe bits are read: by the array's size (see [`GATHER_ABOVE`]).
    reads: Reads,
    /// The array's whole 32-bit words, for [`Reads::Words`].
    whole_words: u32,
    /// The bytes after the whole words (0–3), zero-padded to a word.
    last_word: u32,
}

impl<'a> LaneProbes<'a> {
    /// `None` if `array` is empty or holds more than 2^31 bits (256 MiB).
    pub(crate) fn new(level: Avx512, array: &'a [u8], num_probes: u8) -> Option<Self> {
        let bits = u32::try_from(array.len().checked_mul(8)?).ok()?;
        if bits == 0 || bits > 1 << 31 {
            return None;
        }
        let mut last_word = [0; 4];
        let after_words = array.chunks_exact(4).remainder();
        last_word[..after_words.len()].copy_from_slice(after_words);
        Some(Self {
            _level: level,
            array,
            num_probes,
            bits,
            wrap: ((1u64 << 32) % u64::from(bits)) as u32,
            inverse: 1.0 / f64::from(bits),
            reads: if array.len() > GATHER_ABOVE {
                Reads::Words
            } else {
                Reads::Bytes
            },
            whole_words: (array.len() / 4) as u32,
            last_word: u32::from_le_bytes(last_word),
        })
    }

    /// Bit j of the answer: whether every probe of `hashes[j]` finds its bit set.
    ///
    /// # Panics
    /// If there are more than [`MAX_KEYS`] hashes.
    pub(crate) fn all_set(&self, hashes: &[u32]) -> u64 {
        assert!(hashes.len() <= MAX_KEYS, "at most {MAX_KEYS} keys");
        // SAFETY: `self._level` proves the CPU has AVX-512 F.
        unsafe { all_set_each_block(self, hashes) }
    }
}

/// [`LaneProbes::all_set`]: a whole group of [`MAX_KEYS`] as [`BLOCKS`] blocks of 16
/// side by side, so that their chains of dependent steps overlap; fewer keys (the
/// end of a batch) a block at a time.
#[target_feature(enable = "avx512f")]
fn all_set_each_block(probes: &LaneProbes, hashes: &[u32]) -> u64 {
    match probes.reads {
        Reads::Bytes => all_set_reading::<false>(probes, hashes),
        Reads::Words => all_set_reading::<true>(probes, hashes),
    }
}

/// [`all_set_each_block`] with [`Reads::Words`] or [`Reads::Bytes`], as `WORDS` says.
#[target_feature(enable = "avx512f")]
#[inline]
fn all_set_reading<const WORDS: bool>(probes: &LaneProbes, hashes: &[u32]) -> u64 {
    let join = |answers: &mut dyn Iterator<Item = u16>| {
        (answers.enumerate()).fold(0, |all, (n, set)| all | u64::from(set) << (n * LANES))
    };
    if let Ok(group) = <&[u32; MAX_KEYS]>::try_from(hashes) {
        let blocks = std::array::from_fn(|n| group[n * LANES..][..LANES].try_into().expect("16"));
        return join(&mut all_set::<BLOCKS, WORDS>(probes, blocks).into_iter());
    }
    join(&mut hashes.chunks(LANES).map(|block| {
        let mut lanes = [0; LANES];
        lanes[..block.len()].copy_from_slice(block);
        let [set] = all_set::<1, WORDS>(probes, [lanes]);
        // The padding lanes' answers dropped.
        set & (u32::MAX >> (32 - block.len())) as u16
    }))
}

/// Bit j of answer n: whether every probe of `hashes[n][j]` finds its bit set.
#[target_feature(enable = "avx512f")]
#[inline]
fn all_set<const N: usize, const WORDS: bool>(
    probes: &LaneProbes,
    hashes: [[u32; LANES]; N],
) -> [u16; N] {
    let bits = splat(probes.bits);
    let mut h: [V; N] = std::array::from_fn(|n| to_vector(hashes[n]));
    let delta = h.map(|h| _mm512_ror_epi32::<17>(h));
    let step = delta.map(|delta| remainder(delta, probes));
    // (δ - 2^32) mod bits: δ mod bits less 2^32 mod bits, plus bits if that is
    // negative (then the difference wrapped, and is the larger of the two).
    let wrapped_step = step.map(|step| {
        let less_wrap = _mm512_sub_epi32(step, splat(probes.wrap));
        _mm512_min_epu32(less_wrap, _mm512_add_epi32(less_wrap, bits))
    });
    let mut position = h.map(|h| remainder(h, probes));
    let mut all = [splat(1); N];
    for _ in 0..probes.num_probes {
        for n in 0..N {
            let bit = if WORDS {
                word_bits(probes, position[n])
            } else {
                byte_bits(probes, position[n])
            };
            all[n] = _mm512_and_si512(all[n], bit);
            // The next probe: h + δ, whose remainder is this one's plus δ's, less
            // 2^32's if the sum wrapped. Both terms are below bits ≤ 2^31, so the
            // sum fits, and one subtraction of bits brings it below bits; a sum
            // already below bits wraps on that subtraction, past itself, and the
            // minimum keeps it.
            let next = _mm512_add_epi32(h[n], delta[n]);
            let wrapped = _mm512_cmplt_epu32_mask(next, h[n]);
            let this_step = _mm512_mask_blend_epi32(wrapped, step[n], wrapped_step[n]);
            h[n] = next;
            let sum = _mm512_add_epi32(position[n], this_step);
            position[n] = _mm512_min_epu32(sum, _mm512_sub_epi32(sum, bits));
        }
    }
    all.map(|all| _mm512_test_epi32_mask(all, splat(1)))
}

/// Each lane's bit at `position` (below bits) in bit 0, read by [`Reads::Bytes`];
/// the bits above it are any.
#[target_feature(enable = "avx512f")]
#[inline]
fn byte_bits(probes: &LaneProbes, position: V) -> V {
    // Each position is below bits (see `remainder` and `all_set`); the clamp to the
    // last byte only makes each read's bounds plain where it is made.
    let last_byte = splat(probes.array.len() as u32 - 1);
    let at = lane_pairs(_mm512_min_epu32(
        _mm512_srli_epi32::<3>(position),
        last_byte,
    ));
    let bytes: [u8; LANES] = std::array::from_fn(|j| {
        let at = (at[j / 2] >> (32 * (j % 2))) as u32;
        // SAFETY: at ≤ array.len() - 1, clamped above.
        unsafe { *probes.array.get_unchecked(at as usize) }
    });
    // SAFETY: reads the 16 bytes of `bytes`; unaligned loads are allowed.
    let bytes = _mm512_cvtepu8_epi32(unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) });
    _mm512_srlv_epi32(bytes, _mm512_and_si512(position, splat(7)))
}

/// [`byte_bits`] by [`Reads::Words`]. Bits are numbered LSB first in each byte, so
/// bit b of the little-endian word at byte 4w is bit b mod 8 of byte 4w + b / 8:
/// position p is bit p mod 32 of word p / 32.
#[target_feature(enable = "avx512f")]
#[inline]
fn word_bits(probes: &LaneProbes, position: V) -> V {
    let word = _mm512_srli_epi32::<5>(position);
    let whole = _mm512_cmplt_epu32_mask(word, splat(probes.whole_words));
    // SAFETY: only the lanes in `whole` are read, each a word inside the array
    // (4 × word + 4 ≤ 4 × whole_words ≤ array.len()), and word < 2^26 (bits ≤
    // 2^31), so the signed index and its scaling cannot overflow. The other lanes
    // (the last, partial word) take `last_word`.
    let words = unsafe {
        _mm512_mask_i32gather_epi32::<4>(
            splat(probes.last_word),
            whole,
            word,
            probes.array.as_ptr().cast(),
        )
    };
    _mm512_srlv_epi32(words, _mm512_and_si512(position, splat(31)))
}

/// `h mod bits` in each lane. The quotient `h × (1 / bits)` in doubles is within
/// 2^-20 of the exact one (h < 2^32, and the two roundings err by 2^-52 at most
/// relatively), so its floor is off by one at most; the remainder computed from it
/// with one fused multiply-add is exact (an integer below 2^34), and one correction
/// either way brings it into [0, bits).
#[target_feature(enable = "avx512f")]
#[inline]
fn remainder(h: V, probes: &LaneProbes) -> V {
    let bits = _mm512_set1_pd(f64::from(probes.bits));
    let half = |h: __m256i| {
        let h = _mm512_cvtepu32_pd(h);
        let quotient = _mm512_roundscale_pd::<{ _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC }>(
            _mm512_mul_pd(h, _mm512_set1_pd(probes.inverse)),
        );
        let r = _mm512_fnmadd_pd(quotient, bits, h);
        let negative = _mm512_cmp_pd_mask::<_CMP_LT_OQ>(r, _mm512_setzero_pd());
        let r = _mm512_mask_add_pd(r, negative, r, bits);
        let too_large = _mm512_cmp_pd_mask::<_CMP_GE_OQ>(r, bits);
        _mm512_cvttpd_epu32(_mm512_mask_sub_pd(r, too_large, r, bits))
    };
    let low = half(_mm512_castsi512_si256(h));
    let high = half(_mm512_extracti64x4_epi64::<1>(h));
    _mm512_inserti64x4::<1>(_mm512_castsi256_si512(low), high)
}

/// The lanes two by two, lane 2i in the low half of word i: read this way, each
/// move from the vector to a general register carries two lanes, half the moves of
/// one lane per move.
#[target_feature(enable = "avx512f")]
#[inline]
fn lane_pairs(v: V) -> [u64; LANES / 2] {
    let mut pairs = [0; LANES / 2];
    // SAFETY: writes the 64 bytes of `pairs`; unaligned stores are allowed.
    unsafe { _mm512_storeu_si512(pairs.as_mut_ptr().cast(), v) };
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::level::{Name, Vector};
    use crate::test_random::random;

    /// The AVX-512 level, or `None` (the test skipped, and said so) on a CPU without it.
    fn avx512() -> Option<Avx512> {
        match Name::Avx512.detect().and_then(|level| level.vector()) {
            Some(Vector::Avx512(level)) => Some(level),
            _ => {
                eprintln!("skipped: this CPU has no AVX-512");
                None
            }
        }
    }

    /// LevelDB's query loop, written plainly: the oracle.
    fn leveldb_all_set(array: &[u8], num_probes: u8, mut h: u32) -> bool {
        let bits = 8 * array.len() as u64;
        let delta = h.rotate_right(17);
        (0..num_probes).all(|_| {
            let position = u64::from(h) % bits;
            h = h.wrapping_add(delta);
            array[(position / 8) as usize] >> (position % 8) & 1 == 1
        })
    }

    /// Bit counts of every magnitude up to 2^31 (whole bytes), and hashes anywhere
    /// (the edges of 32 bits included): each lane's remainder equals `%`'s.
    #[test]
    fn remainders_equal_division() {
        let Some(level) = avx512() else { return };
        let mut state = 5;
        let byte_counts = (0..20_000)
            .map(|i| (random(&mut state) >> (36 + i % 28)).max(1) as usize)
            .chain([1, 2, 3, 1 << 20, (1 << 28) - 1, 1 << 28])
            .collect::<Vec<_>>();
        let mut lanes_checked = 0;
        for bytes in byte_counts {
            let array = vec![0u8; 0];
            let probes = LaneProbes {
                _level: level,
                array: &array,
                num_probes: 0,
                bits: 8 * bytes as u32,
                wrap: ((1u64 << 32) % (8 * bytes as u64)) as u32,
                inverse: 1.0 / (8 * bytes) as f64,
                reads: Reads::Bytes,
                whole_words: 0,
                last_word: 0,
            };
            let d = 8 * bytes as u64;
            let edges = [0, 1, d - 1, d, d + 1, (1 << 32) - 1, (1 << 32) - d, 1 << 31];
            for round in 0..4 {
                let h: [u32; LANES] = std::array::from_fn(|j| match (round, edges.get(j)) {
                    (0, Some(&edge)) => edge as u32,
                    _ => random(&mut state) as u32,
                });
                // SAFETY: `level` proves the CPU has AVX-512 F.
                let pairs = unsafe { lane_pairs(remainder(to_vector(h), &probes)) };
                let out = pairs
                    .iter()
                    .flat_map(|&pair| [pair as u32, (pair >> 32) as u32]);
                for (h, r) in h.iter().zip(out) {
                    assert_eq!(u64::from(r), u64::from(*h) % d, "{h} % {d}");
                    lanes_checked += 1;
                }
            }
        }
        assert!(lanes_checked > 1_000_000);
    }

    /// Filters of many sizes (1 byte, sizes not a multiple of 4, large), every k up
    /// to 30, random filters and hashes, read both ways: the answers equal LevelDB's
    /// loop, whatever the number of hashes.
    #[test]
    fn answers_equal_leveldbs_loop() {
        let Some(level) = avx512() else { return };
        let mut state = 9;
        for bytes in [1usize, 2, 3, 5, 8, 13, 64, 1250, 4099, 65_537, 1 << 21] {
            for num_probes in 0..=30u8 {
                // Mostly set bits, so that keys with every probe set are common.
                let mut mostly_set = || {
                    let (a, b) = (random(&mut state), random(&mut state));
                    (a | b | a >> 8) as u8
                };
                let array: Vec<u8> = (0..bytes).map(|_| mostly_set()).collect();
                let probes = LaneProbes::new(level, &array, num_probes).expect("small filter");
                let both = [Reads::Bytes, Reads::Words].map(|reads| LaneProbes { reads, ..probes });
                for (probes, count) in both
                    .iter()
                    .flat_map(|probes| [0, 1, 15, 16, 17, 33, 63, 64].map(|count| (probes, count)))
                {
                    let hashes: Vec<u32> = (0..count).map(|_| random(&mut state) as u32).collect();
                    let answer = probes.all_set(&hashes);
                    for (j, &h) in hashes.iter().enumerate() {
                        let expected = leveldb_all_set(&array, num_probes, h);
                        assert_eq!(
                            answer >> j & 1 == 1,
                            expected,
                            "{bytes} bytes, k {num_probes}, {:?}",
                            probes.reads
                        );
                    }
                    if count < MAX_KEYS {
                        assert_eq!(answer >> count, 0, "no bits past the keys");
                    }
                }
            }
        }
    }

    #[test]
    fn refuses_empty_and_huge_arrays() {
        let Some(level) = avx512() else { return };
        assert!(LaneProbes::new(level, &[], 6).is_none());
        let huge = vec![0u8; (1 << 28) + 1];
        assert!(LaneProbes::new(level, &huge, 6).is_none());
        assert!(LaneProbes::new(level, &huge[..1 << 28], 6).is_some());
    }

    #[test]
    fn large_arrays_are_read_by_gathers() {
        let Some(level) = avx512() else { return };
        let reads = |bytes: usize| LaneProbes::new(level, &vec![0; bytes], 6).map(|p| p.reads);
        assert_eq!(reads(GATHER_ABOVE), Some(Reads::Bytes));
        assert_eq!(reads(GATHER_ABOVE + 1), Some(Reads::Words));
    }
}
