//! `h % bits` without a division.
//!
//! LevelDB reduces every probe with a 64-bit `%`, its most expensive instruction.
//! For a bit count under 2^32 the remainder is computed instead from a precomputed
//! reciprocal with two multiplications (Lemire, Kaser and Kurz, "Faster Remainder by
//! Direct Computation", 2019), exact for every 32-bit h; a count of 2^32 or more
//! leaves every 32-bit h unchanged. The two cases are separate types so that each
//! probe loop is compiled for one of them, with no test per probe.

use std::sync::atomic::{AtomicU64, Ordering};

/// How a probe's 32-bit hash becomes a bit position below the filter's bit count.
pub(crate) trait Reduce: Copy {
    /// `h % bits`, as LevelDB's 64-bit `size_t` arithmetic computes it.
    fn reduce(self, h: u32) -> usize;
}

/// A bit count below 2^32 with its reciprocal `ceil(2^64 / bits)`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FastRemainder {
    bits: u64,
    reciprocal: u64,
}

/// A bit count of 2^32 or more: h is its own remainder.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Unreduced;

impl Reduce for FastRemainder {
    #[inline(always)]
    fn reduce(self, h: u32) -> usize {
        // The fraction h / bits in 64-bit fixed point; its integer part times bits is
        // dropped by the wrap, and the fractional part times bits is the remainder.
        let fraction = self.reciprocal.wrapping_mul(u64::from(h));
        ((u128::from(fraction) * u128::from(self.bits)) >> 64) as usize
    }
}

impl Reduce for Unreduced {
    #[inline(always)]
    fn reduce(self, h: u32) -> usize {
        h as usize
    }
}

/// A filter's bit count, ready for reducing probes.
#[derive(Clone, Copy, Debug)]
pub(crate) enum BitCount {
    Small(FastRemainder),
    Huge(Unreduced),
}

impl BitCount {
    /// `bits` must be at least 2 (a filter has at least 8).
    pub(crate) fn new(bits: u64) -> Self {
        match u32::try_from(bits) {
            Ok(d) => Self::with_reciprocal(d, reciprocal(d)),
            Err(_) => Self::Huge(Unreduced),
        }
    }

    /// As [`new`](Self::new), taking the reciprocal from `cache` when it holds it.
    pub(crate) fn cached(bits: u64, cache: &ReciprocalCache) -> Self {
        match u32::try_from(bits) {
            Ok(d) => Self::with_reciprocal(d, cache.reciprocal(d)),
            Err(_) => Self::Huge(Unreduced),
        }
    }

    fn with_reciprocal(bits: u32, reciprocal: u64) -> Self {
        Self::Small(FastRemainder {
            bits: bits.into(),
            reciprocal,
        })
    }

    #[cfg(test)]
    pub(crate) fn reduce(self, h: u32) -> usize {
        match self {
            Self::Small(r) => r.reduce(h),
            Self::Huge(r) => r.reduce(h),
        }
    }
}

/// `ceil(2^64 / d)` (0 for d = 1, which the wrap then makes exact too).
fn reciprocal(d: u32) -> u64 {
    (u64::MAX / u64::from(d)).wrapping_add(1)
}

/// Whether `m` is `ceil(2^64 / d)`: exactly then `m·d` is the first multiple of d at
/// or above 2^64, so it lies in `[2^64, 2^64 + d)`. One multiplication instead of the
/// division that computes it.
fn is_reciprocal(m: u64, d: u32) -> bool {
    let product = u128::from(m) * u128::from(d);
    product >> 64 == 1 && (product as u64) < u64::from(d)
}

/// Reciprocals of recently seen bit counts, so that a one-key query through the C
/// API does not pay a 64-bit division to set up. Shared by threads without locks:
/// each slot is one atomic word, and a value read from it is used only after
/// [`is_reciprocal`] proves it right for the bit count at hand, so a stale or racing
/// value costs a division, never a wrong answer. Slots are written only on a miss,
/// so threads querying filters of a few sizes share the cache lines read-only.
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
            // 0 is never a reciprocal of a filter's bit count (at least 8).
            slots: [const { AtomicU64::new(0) }; CACHE_SLOTS],
        }
    }

    fn reciprocal(&self, d: u32) -> u64 {
        // Bit counts are multiples of 8: index by byte count.
        let slot = &self.slots[(d / 8) as usize % CACHE_SLOTS];
        let cached = slot.load(Ordering::Relaxed);
        if is_reciprocal(cached, d) {
            return cached;
        }
        let fresh = reciprocal(d);
        slot.store(fresh, Ordering::Relaxed);
        fresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks `reduce(h) == h % d` for every 32-bit h, with no division: h runs
    /// through the blocks `[q·d, (q+1)·d)`, where the remainder is `h - q·d`.
    /// Mismatches are OR-ed rather than branched on, so 2^32 cases take about a
    /// second in a release build.
    fn check_every_h(d: u32) {
        let BitCount::Small(fast) = BitCount::new(d.into()) else {
            panic!("{d} is below 2^32");
        };
        let end = 1u64 << 32;
        let mut mismatch = 0usize;
        for block in (0..end).step_by(d as usize) {
            for h in block..(block + u64::from(d)).min(end) {
                mismatch |= fast.reduce(h as u32) ^ (h - block) as usize;
            }
        }
        assert_eq!(mismatch, 0, "h % {d} differs for some h");
    }

    // 2^32 cases per divisor: run only where optimised (`cargo test --release`).
    #[test]
    #[cfg_attr(debug_assertions, ignore = "exhaustive: run with --release")]
    fn remainder_is_exact_for_every_h() {
        let divisors = [
            64,            // the smallest filter
            80_000,        // 1,000 keys at 10 bits per key: not a power of two
            (1 << 31) + 8, // near 2^31
            u32::MAX - 7,  // the largest filter below 2^32 bits
            u32::MAX,      // the largest divisor of all
        ];
        std::thread::scope(|scope| {
            for d in divisors {
                scope.spawn(move || check_every_h(d));
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
    fn remainder_matches_division_for_random_divisors() {
        let mut state = 0x5eed;
        for i in 0..100_000 {
            // Every magnitude of divisor, then h anywhere.
            let d = (random(&mut state) >> (32 + i % 31)).max(2) as u32;
            let count = BitCount::new(d.into());
            for _ in 0..50 {
                let h = random(&mut state) as u32;
                assert_eq!(count.reduce(h), (h % d) as usize, "{h} % {d}");
            }
            for h in [0, 1, d - 1, d, d.wrapping_add(1), u32::MAX - 1, u32::MAX] {
                assert_eq!(count.reduce(h), (h % d) as usize, "{h} % {d}");
            }
        }
    }

    #[test]
    fn bit_counts_of_2_pow_32_and_more_leave_h_unchanged() {
        let mut state = 7;
        for bits in [1u64 << 32, (1 << 32) + 8, 1 << 40, u64::MAX] {
            let count = BitCount::new(bits);
            assert!(matches!(count, BitCount::Huge(_)));
            for h in [0, 1, 12345, u32::MAX - 1, u32::MAX] {
                assert_eq!(count.reduce(h), h as usize);
            }
            for _ in 0..10_000 {
                let h = random(&mut state) as u32;
                assert_eq!(count.reduce(h) as u64, u64::from(h) % bits);
            }
        }
    }

    #[test]
    fn reciprocal_check_accepts_only_the_reciprocal() {
        let mut state = 11;
        for _ in 0..100_000 {
            let d = (random(&mut state) as u32).max(2);
            let m = reciprocal(d);
            assert!(is_reciprocal(m, d), "{d}");
            assert!(!is_reciprocal(m.wrapping_add(1), d), "{d}");
            assert!(!is_reciprocal(m.wrapping_sub(1), d), "{d}");
            assert!(!is_reciprocal(0, d), "{d}");
            let other = random(&mut state);
            assert_eq!(is_reciprocal(other, d), other == m, "{d}");
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
    }
}
