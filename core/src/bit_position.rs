//! `h % bits`, LevelDB's reduction of a probe's hash to a bit of the filter.
//!
//! LevelDB computes it with a 64-bit `%` on `size_t`. For a bit count under 2^32
//! both operands fit in 32 bits, so the remainder is the same in 32-bit arithmetic:
//! a one-key query divides in 32 bits ([`SmallArray`]), which every x86 CPU does at
//! least as fast as 64-bit division, and which on some is faster than any
//! multiplication trick, as the divider works beside the multiplier that the key's
//! hash keeps busy (docs/performance.md). Building filters and batches instead compute the
//! remainder from a precomputed reciprocal ([`FastRemainder`]: a 64-bit fraction
//! whose product with h holds the quotient's fraction, exact for every 32-bit h),
//! with a single multiplication that gives the byte and the bit at once, set up once
//! for many keys. A count of 2^32 or more leaves every 32-bit h unchanged
//! ([`Unreduced`]). Each case is its own type, so that each probe loop is compiled
//! for one of them, with no test per probe.
//!
//! The reciprocal of a bit count d of L bits (2^(L-1) < d ≤ 2^L) is
//! `c = ceil(2^(32+L) / d)`, scaled to 64-bit fixed point as `c · 2^(32-L)`:
//! the theorem's bound for 32-bit dividends is 32 + L bits of fraction, so this is
//! exact.

use std::num::NonZeroU32;

/// Where a probe's 32-bit hash lands in a filter's bit array.
pub(crate) trait Locate: Copy {
    /// The byte and the bit within it (LSB first) of position `h % bits`, computed
    /// as LevelDB's 64-bit `size_t` arithmetic does.
    fn locate(self, h: u32) -> (usize, u32);

    /// Sets the bit of probe hash `h` in `array`, made for this bit count. A bit
    /// outside the array (never: each caller makes the count from its array) would be
    /// a false negative: it panics, and a panic turns into the match-all filter.
    #[inline(always)]
    fn set(self, array: &mut [u8], h: u32) {
        let (byte, bit) = self.locate(h);
        array[byte] |= 1 << bit;
    }
}

/// A bit array of `bytes` bytes, fewer than 2^32 bits, with the reciprocal of its
/// bit count (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub(crate) struct FastRemainder {
    bytes: u64,
    reciprocal: u64,
}

/// A bit array of 2^32 bits or more: h is its own remainder.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unreduced;

impl Locate for FastRemainder {
    #[inline(always)]
    fn locate(self, h: u32) -> (usize, u32) {
        // `fraction` is h / bits in 64-bit fixed point, its integer part dropped by
        // the wrap; the remainder is fraction × bits / 2^64, rounded down. With bits
        // = 8 × bytes and fraction × bytes = high:low, that is 8 × high + (low >> 61):
        // the byte is the high word, the bit the low word's top three bits.
        let fraction = self.reciprocal.wrapping_mul(u64::from(h));
        let product = u128::from(fraction) * u128::from(self.bytes);
        ((product >> 64) as usize, (product as u64 >> 61) as u32)
    }

    /// [`Locate::set`] with one test of the array's length, the same for every probe
    /// (so the compiler tests it once a key), for a test of each probe's byte.
    #[inline(always)]
    fn set(self, array: &mut [u8], h: u32) {
        assert!(
            self.bytes as usize <= array.len(),
            "a bit array shorter than its count"
        );
        let (byte, bit) = self.locate(h);
        // SAFETY: byte = (fraction × bytes) >> 64 < bytes, as fraction < 2^64, and
        // bytes ≤ array.len() (asserted above).
        unsafe { *array.get_unchecked_mut(byte) |= 1 << bit };
    }
}

/// A bit array of fewer than 2^32 bits, probed by 32-bit division: the one-key
/// path. Made only from the array itself, so every position `h % bits` lies inside
/// it, which lets [`bit`](Self::bit) read without a bounds check.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SmallArray<'a> {
    array: &'a [u8],
    bits: NonZeroU32,
}

impl<'a> SmallArray<'a> {
    /// `None` if `array` is empty or holds 2^32 bits or more.
    #[inline(always)]
    pub(crate) fn new(array: &'a [u8]) -> Option<Self> {
        if array.is_empty() {
            return None;
        }
        let bits = small_bit_count(array.len())?;
        // SAFETY: 8 × len for 1 ≤ len < 2^29 bytes: at least 8, below 2^32 (the
        // compiler, which cannot see it, would test it once more per query).
        let bits = unsafe { NonZeroU32::new_unchecked(bits) };
        Some(Self { array, bits })
    }

    /// The bit of probe hash `h`: 1 if set.
    #[inline(always)]
    pub(crate) fn bit(self, h: u32) -> u8 {
        let position = h % self.bits;
        // SAFETY: position < bits = 8 × array.len() (see `new`), so position / 8 is
        // an index into the array.
        let byte = unsafe { *self.array.get_unchecked((position / 8) as usize) };
        (byte >> (position % 8)) & 1
    }
}

impl Locate for Unreduced {
    #[inline(always)]
    fn locate(self, h: u32) -> (usize, u32) {
        (h as usize / 8, h % 8)
    }
}

/// A filter's bit count, ready for locating probes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum BitCount {
    Small(FastRemainder),
    Huge(Unreduced),
}

/// The bit count of a bit array of `bytes` bytes, if below 2^32.
fn small_bit_count(bytes: usize) -> Option<u32> {
    (bytes < 1 << 29).then_some(8 * bytes as u32)
}

impl BitCount {
    /// The bit count of a bit array of `bytes` bytes, at least one.
    pub(crate) fn new(bytes: usize) -> Self {
        match small_bit_count(bytes) {
            Some(bits) => Self::with_reciprocal(bits, reciprocal(bits)),
            None => Self::Huge(Unreduced),
        }
    }

    fn with_reciprocal(bits: u32, reciprocal: u64) -> Self {
        Self::Small(FastRemainder {
            bytes: u64::from(bits / 8),
            reciprocal,
        })
    }
}

/// `32 - L` for a bit count d of L bits, d ≥ 2: how far c is scaled up.
#[inline(always)]
fn scale(d: u32) -> u32 {
    // `| 1` changes nothing for d ≥ 3 (d - 1 ≥ 2 keeps its top bit) and tells the
    // compiler the operand is never 0; d = 2 gives 31 either way.
    ((d - 1) | 1).leading_zeros()
}

/// The reciprocal of bit count d, ≥ 2: c scaled by 2^(32-L).
fn reciprocal(d: u32) -> u64 {
    // ceil(x / d) = floor((x - 1) / d) + 1, and 2^(32+L) - 1 = u64::MAX >> (32 - L);
    // c < 2^33, so c · 2^(32-L) < 2^(65-L) fits in 64 bits for every L ≥ 1.
    ((u64::MAX >> scale(d)) / u64::from(d) + 1) << scale(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_random::random;

    /// `h % bits` as the probe functions compute it.
    fn remainder(count: BitCount, h: u32) -> u64 {
        let (byte, bit) = match count {
            BitCount::Small(r) => r.locate(h),
            BitCount::Huge(r) => r.locate(h),
        };
        8 * byte as u64 + u64::from(bit)
    }

    /// Checks the remainder for every 32-bit h, with no division: h runs through the
    /// blocks `[q·bits, (q+1)·bits)`, where the remainder is `h - q·bits`. Mismatches
    /// are OR-ed rather than branched on; 2^32 cases take a few seconds of CPU in a
    /// release build.
    fn check_every_h(bytes: usize) {
        let BitCount::Small(fast) = BitCount::new(bytes) else {
            panic!("{bytes} bytes hold fewer than 2^32 bits");
        };
        let bits = 8 * bytes as u64;
        let end = 1u64 << 32;
        let mut mismatch = 0;
        let mut block = 0;
        while block < end {
            let stop = (block + bits).min(end);
            let (mut h, mut expected) = (block, 0);
            while h < stop {
                let (byte, bit) = fast.locate(h as u32);
                mismatch |= (8 * byte as u64 + u64::from(bit)) ^ expected;
                h += 1;
                expected += 1;
            }
            block = stop;
        }
        assert_eq!(mismatch, 0, "h % {bits} differs for some h");
    }

    // 2^32 cases per bit count: run only where optimised (`cargo test --release`).
    // Bit counts are whole bytes, so these are the smallest, one that is not a power
    // of two, one near 2^31, and the largest below 2^32.
    #[test]
    #[cfg_attr(debug_assertions, ignore = "exhaustive: run with --release")]
    fn remainder_is_exact_for_every_h() {
        let byte_counts = [8, 10_000, (1 << 28) + 1, (1 << 29) - 1];
        std::thread::scope(|scope| {
            for bytes in byte_counts {
                scope.spawn(move || check_every_h(bytes));
            }
        });
    }

    #[test]
    fn remainder_matches_division_for_random_bit_counts() {
        let mut state = 0x5eed;
        for i in 0..100_000 {
            // Every magnitude of bit count below 2^32, then h anywhere.
            let bytes = (random(&mut state) >> (35 + i % 29)).max(1) as usize;
            let (count, bits) = (BitCount::new(bytes), 8 * bytes as u64);
            assert!(matches!(count, BitCount::Small(_)));
            for _ in 0..50 {
                let h = random(&mut state) as u32;
                assert_eq!(remainder(count, h), u64::from(h) % bits, "{h} % {bits}");
            }
            for h in [0, 1, bits - 1, bits, bits + 1, u64::from(u32::MAX)] {
                let h = h as u32;
                assert_eq!(remainder(count, h), u64::from(h) % bits, "{h} % {bits}");
            }
        }
    }

    #[test]
    fn bit_counts_of_2_pow_32_and_more_leave_h_unchanged() {
        let mut state = 7;
        for bytes in [1usize << 29, (1 << 29) + 1, 1 << 37, usize::MAX / 8] {
            let count = BitCount::new(bytes);
            assert!(matches!(count, BitCount::Huge(_)));
            for h in [0, 1, 12345, u32::MAX - 1, u32::MAX] {
                assert_eq!(remainder(count, h), u64::from(h));
            }
            for _ in 0..10_000 {
                let h = random(&mut state) as u32;
                assert_eq!(remainder(count, h), u64::from(h) % (8 * bytes as u64));
            }
        }
    }

    /// c = ceil(2^(32+L) / d) for a bit count d of L bits lies in [2^32, 2^33), and
    /// the reciprocal is c · 2^(32-L): checked against 128-bit arithmetic.
    #[test]
    fn reciprocal_is_c_in_fixed_point() {
        let mut state = 11;
        let edges = [2, 3, 4, 5, 8, 64, 65, 1 << 31, (1 << 31) + 1, u32::MAX - 7];
        let random_counts = (0..100_000).map(|i| {
            // Every magnitude of bit count.
            ((random(&mut state) as u32) >> (i % 31)).max(2)
        });
        for d in edges.into_iter().chain(random_counts) {
            let bits = 32 - (d - 1).leading_zeros();
            let c = ((1u128 << (32 + bits)) - 1) / u128::from(d) + 1;
            assert!((1 << 32..1 << 33).contains(&c), "{d}");
            assert_eq!(u128::from(reciprocal(d)), c << (32 - bits), "{d}");
        }
    }

    /// `SmallArray::bit` reads the bit `h % bits` names, for probes across the whole
    /// array (first and last byte included), and refuses an empty array.
    #[test]
    fn small_array_reads_the_located_bit() {
        let mut state = 3;
        for bytes in [1usize, 2, 7, 1250, 65_537] {
            let array: Vec<u8> = (0..bytes).map(|_| random(&mut state) as u8).collect();
            let small = SmallArray::new(&array).expect("fewer than 2^32 bits");
            let d = 8 * bytes as u64;
            let edges = [0, 1, d - 1, d, d + 1, 8 * d - 1, u64::from(u32::MAX)];
            let random_h = (0..20_000).map(|_| random(&mut state) as u32);
            for h in edges.map(|h| h as u32).into_iter().chain(random_h) {
                let r = u64::from(h) % d;
                let expected = (array[(r / 8) as usize] >> (r % 8)) & 1;
                assert_eq!(small.bit(h), expected, "{h} in {bytes} bytes");
            }
        }
        assert!(SmallArray::new(&[]).is_none());
    }
}
