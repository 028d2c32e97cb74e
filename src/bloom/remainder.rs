//! `h % bits` without a division.
//!
//! LevelDB reduces every probe with a 64-bit `%`. For a bit count under 2^32 the
//! remainder is computed instead from a precomputed reciprocal (Lemire, Kaser and
//! Kurz, "Faster Remainder by Direct Computation", 2019: exact for every 32-bit h),
//! and with a single multiplication that gives the byte and the bit at once; a count
//! of 2^32 or more leaves every 32-bit h unchanged. The two cases are separate types
//! so that each probe loop is compiled for one of them, with no test per probe.
//!
//! The reciprocal of a bit count d of L bits (2^(L-1) < d ≤ 2^L) is
//! `c = ceil(2^(32+L) / d)`, scaled to 64-bit fixed point as `c · 2^(32-L)`:
//! the theorem's bound for 32-bit dividends is 32 + L bits of fraction, so this is
//! exact, and c always lies in [2^32, 2^33), so that d and c's low 32 bits pack into
//! one word of the [`ReciprocalCache`].

use std::sync::atomic::{AtomicU64, Ordering};

/// Where a probe's 32-bit hash lands in a filter's bit array.
pub(crate) trait Locate: Copy {
    /// The byte and the bit within it (LSB first) of position `h % bits`, computed
    /// as LevelDB's 64-bit `size_t` arithmetic does.
    fn locate(self, h: u32) -> (usize, u32);
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

impl FastRemainder {
    pub(crate) fn bytes(self) -> u64 {
        self.bytes
    }

    pub(crate) fn reciprocal(self) -> u64 {
        self.reciprocal
    }
}

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
}

/// A bit array of fewer than 2^32 bits with its [`FastRemainder`], paired so that
/// every probe provably lands inside the array. The core stays free of `unsafe`, so
/// the read is still checked; the check is never taken and costs a compare.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SmallArray<'a> {
    array: &'a [u8],
    bits: FastRemainder,
}

impl<'a> SmallArray<'a> {
    /// `None` unless `bits` is the bit count of `array` (which a filter's decoding
    /// guarantees; checked once here rather than at every probe).
    #[inline(always)]
    pub(crate) fn new(array: &'a [u8], bits: FastRemainder) -> Option<Self> {
        (array.len() as u64 == bits.bytes).then_some(Self { array, bits })
    }

    /// The bit of probe hash `h`: 1 if set.
    #[inline(always)]
    pub(crate) fn bit(self, h: u32) -> u8 {
        let (byte, bit) = self.bits.locate(h);
        // `locate` gives byte = ⌊fraction × bytes / 2^64⌋ with fraction < 2^64, so
        // byte < bytes, and `new` made sure bytes is the array's length: the fallback
        // (1, "may match") is never taken.
        self.array.get(byte).map_or(1, |&b| (b >> bit) & 1)
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
    u32::try_from(bytes).ok()?.checked_mul(8)
}

impl BitCount {
    /// The bit count of a bit array of `bytes` bytes, at least one.
    pub(crate) fn new(bytes: usize) -> Self {
        match small_bit_count(bytes) {
            Some(bits) => Self::with_reciprocal(bits, reciprocal(bits)),
            None => Self::Huge(Unreduced),
        }
    }

    /// As [`new`](Self::new), taking the reciprocal from `cache` when it holds it.
    #[inline(always)]
    pub(crate) fn cached(bytes: usize, cache: &ReciprocalCache) -> Self {
        match small_bit_count(bytes) {
            Some(bits) => Self::with_reciprocal(bits, cache.reciprocal(bits)),
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

/// c's bits below 2^32, the part of the reciprocal of bit count d (≥ 2) that the
/// cache stores: `ceil(2^(32+L) / d) - 2^32`.
fn reciprocal_low(d: u32) -> u32 {
    // ceil(x / d) = floor((x - 1) / d) + 1, and 2^(32+L) - 1 = u64::MAX >> (32 - L);
    // c < 2^33, so its low word is all that is not the constant 2^32.
    ((u64::MAX >> scale(d)) / u64::from(d) + 1) as u32
}

/// The 64-bit reciprocal of bit count d (≥ 2) from the low word of its c.
#[inline(always)]
fn reciprocal_from_low(d: u32, low: u32) -> u64 {
    ((1 << 32) | u64::from(low)) << scale(d)
}

/// The reciprocal of bit count d, ≥ 2.
fn reciprocal(d: u32) -> u64 {
    reciprocal_from_low(d, reciprocal_low(d))
}

/// Reciprocals of recently seen bit counts, so that a one-key query through the C
/// API does not pay a 64-bit division to set up. Shared by threads without locks:
/// each slot is one atomic word holding a bit count (high half) and the low word of
/// its c (low half), written and read whole, so a value read is used only for the
/// bit count it was computed for; a stale or racing value costs a division, never a
/// wrong answer. Slots are written only on a miss, so threads querying filters of a
/// few sizes share the cache lines read-only.
#[derive(Debug)]
pub(crate) struct ReciprocalCache {
    slots: [AtomicU64; CACHE_SLOTS],
}

/// LevelDB builds one filter per 2 KiB of table data, so a table's filters come in a
/// few sizes; 16 slots (two cache lines) hold them.
const CACHE_SLOTS: usize = 16;

impl ReciprocalCache {
    pub(crate) const fn new() -> Self {
        Self {
            // Bit count 0: never a filter's (at least 8).
            slots: [const { AtomicU64::new(0) }; CACHE_SLOTS],
        }
    }

    #[inline(always)]
    fn reciprocal(&self, d: u32) -> u64 {
        // Bit counts are multiples of 8: index by byte count.
        let slot = &self.slots[(d / 8) as usize % CACHE_SLOTS];
        let packed = slot.load(Ordering::Relaxed);
        if (packed >> 32) as u32 == d {
            return reciprocal_from_low(d, packed as u32);
        }
        let low = reciprocal_low(d);
        slot.store(u64::from(d) << 32 | u64::from(low), Ordering::Relaxed);
        reciprocal_from_low(d, low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// A splitmix64 stream: fixed seeds, reproducible cases.
    fn random(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
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

    /// c = ceil(2^(32+L) / d) for a bit count d of L bits lies in [2^32, 2^33), so
    /// its low word and d determine it: checked against 128-bit arithmetic.
    #[test]
    fn reciprocal_packs_into_its_low_word() {
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
    /// array (first and last byte included), and refuses a mismatched bit count.
    #[test]
    fn small_array_reads_the_located_bit() {
        let mut state = 3;
        for bytes in [1usize, 2, 7, 1250, 65_537] {
            let array: Vec<u8> = (0..bytes).map(|_| random(&mut state) as u8).collect();
            let BitCount::Small(bits) = BitCount::new(bytes) else {
                unreachable!("small counts");
            };
            let small = SmallArray::new(&array, bits).expect("matching length");
            let d = 8 * bytes as u64;
            let edges = [0, 1, d - 1, d, d + 1, 8 * d - 1, u64::from(u32::MAX)];
            let random_h = (0..20_000).map(|_| random(&mut state) as u32);
            for h in edges.map(|h| h as u32).into_iter().chain(random_h) {
                let r = u64::from(h) % d;
                let expected = (array[(r / 8) as usize] >> (r % 8)) & 1;
                assert_eq!(small.bit(h), expected, "{h} in {bytes} bytes");
            }
            assert!(SmallArray::new(&array[1..], bits).is_none());
        }
    }

    #[test]
    fn cache_gives_the_computed_reciprocal() {
        let cache = ReciprocalCache::new();
        // Sizes that share slots, in turn, twice: misses, hits and overwrites.
        for _ in 0..2 {
            for d in [64u32, 64 + 8 * 16, 1000, 80_000, u32::MAX - 7, 64] {
                assert_eq!(cache.reciprocal(d), reciprocal(d));
            }
        }
        let shared = ReciprocalCache::new();
        std::thread::scope(|scope| {
            for t in 0..4u32 {
                let shared = &shared;
                scope.spawn(move || {
                    for i in 0..20_000u32 {
                        let d = 8 * (1 + (i * 7 + t) % 40);
                        assert_eq!(shared.reciprocal(d), reciprocal(d));
                    }
                });
            }
        });
        // A cached bit count locates as a fresh one.
        for bytes in [8, 9, 1250, 125_000] {
            let (BitCount::Small(fresh), BitCount::Small(cached)) =
                (BitCount::new(bytes), BitCount::cached(bytes, &cache))
            else {
                unreachable!("small counts");
            };
            assert_eq!(fresh.reciprocal, cached.reciprocal);
        }
    }
}
