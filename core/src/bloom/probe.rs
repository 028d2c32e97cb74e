//! Where a key's probes land, and testing or setting them: LevelDB's double hashing.

use crate::bit_position::{BitCount, Locate, SmallArray, Unreduced};

/// A filter that must be probed: its bit array (at least one byte) and k.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probes<'a> {
    pub(super) array: &'a [u8],
    pub(super) num_probes: u8,
}

impl Probes<'_> {
    /// Whether every probe of hash `h` finds its bit set: the one-key path.
    #[inline(always)]
    pub(super) fn all_set(self, h: u32) -> bool {
        match SmallArray::new(self.array) {
            Some(array) if self.num_probes == UNROLLED_PROBES => {
                all_probe_bits_set(h, UNROLLED_PROBES, |h| array.bit(h))
            }
            Some(_) => all_set_small(self.array, h, self.num_probes),
            None => all_set_huge(self.array, h, self.num_probes),
        }
    }
}

/// [`Probes::all_set`] for another k than [`UNROLLED_PROBES`] (the array made small
/// again: taking the filter's parts rather than a `SmallArray` or a `Probes`, which
/// would be passed through memory, the caller needs no stack copy of them): its loop
/// kept out of the usual filter's path, whose registers it would crowd.
#[inline(never)]
fn all_set_small(array: &[u8], h: u32, num_probes: u8) -> bool {
    match SmallArray::new(array) {
        Some(array) => all_probe_bits_set(h, num_probes, |h| array.bit(h)),
        None => all_set_huge(array, h, num_probes),
    }
}

/// [`Probes::all_set`] for a bit array of 2^32 bits or more (512 MiB), out of line
/// as [`all_set_small`] is.
#[cold]
#[inline(never)]
fn all_set_huge(array: &[u8], h: u32, num_probes: u8) -> bool {
    all_set(array, h, num_probes, Unreduced)
}

impl Probes<'_> {
    /// Each probe of hash `h` in order: its bit number in the array and whether it
    /// is set.
    pub(super) fn each(self, h: u32) -> Vec<(u64, bool)> {
        fn collect<L: Locate>(array: &[u8], h: u32, k: u8, bits: L) -> Vec<(u64, bool)> {
            probes(h, k, bits)
                .map(|(byte, bit)| {
                    (
                        8 * byte as u64 + u64::from(bit),
                        array[byte] >> bit & 1 == 1,
                    )
                })
                .collect()
        }
        match BitCount::new(self.array.len()) {
            BitCount::Small(bits) => collect(self.array, h, self.num_probes, bits),
            BitCount::Huge(bits) => collect(self.array, h, self.num_probes, bits),
        }
    }
}

/// LevelDB's double hashing: probe i is at `(h + i·δ) mod 2^32`, reduced modulo the
/// bit count, where δ is h rotated right by 17 bits ([`delta`]). Bits are numbered
/// LSB first within each byte. Yields each probe's byte and bit.
#[inline(always)]
pub(super) fn probes<L: Locate>(
    h: u32,
    num_probes: u8,
    bits: L,
) -> impl Iterator<Item = (usize, u32)> {
    let delta = delta(h);
    (0..num_probes).scan(h, move |h, _| {
        let at = bits.locate(*h);
        *h = h.wrapping_add(delta);
        Some(at)
    })
}

/// δ, the step between the probes of hash `h`.
#[inline(always)]
pub(super) fn delta(h: u32) -> u32 {
    h.rotate_right(17)
}

/// Whether every probe of `h` finds its bit set. The byte is always in range, the
/// remainder being below the bit count; were it not, the answer would be 1, "may
/// match", the fail-safe one for a reader.
#[inline(always)]
pub(super) fn all_set<L: Locate>(array: &[u8], h: u32, num_probes: u8, bits: L) -> bool {
    all_probe_bits_set(h, num_probes, |h| {
        let (byte, bit) = bits.locate(h);
        array.get(byte).map_or(1, |byte| (byte >> bit) & 1)
    })
}

/// Whether `bit_of` gives 1 for the hash of every probe of `h` (see
/// [`all_probes_set`]).
#[inline(always)]
fn all_probe_bits_set(h: u32, num_probes: u8, bit_of: impl Fn(u32) -> u8) -> bool {
    let delta = delta(h);
    let mut h = h;
    // Probes are asked for in order, so each one's hash is the one before plus δ.
    all_probes_set(num_probes, |_| {
        let bit = bit_of(h);
        h = h.wrapping_add(delta);
        bit
    })
}

/// Probes tested per branch in [`all_probes_set`].
const PROBES_PER_BRANCH: u8 = 3;

/// The k for which [`all_probes_set`] is compiled with a constant count, so the
/// compiler unrolls its loop: 6, what bits_per_key = 10 gives, the value LevelDB's
/// documentation recommends and most programs use. Unrolled, a query runs fewer
/// instructions (docs/performance.md).
pub(super) const UNROLLED_PROBES: u8 = 6;

/// Whether `bit(i)` is 1 for every probe i below `num_probes`, asked for in order of
/// i, stopping at the first group with a 0. Probes are tested
/// three at a time, their bits AND-ed, with one branch per three: whether one probe
/// of an absent key hits a set bit is a coin toss the branch predictor cannot learn,
/// while three rarely all do, so rejecting a key costs a few more loads instead of a
/// mispredicted branch. A present key takes every probe either way.
#[inline(always)]
pub(super) fn all_probes_set(num_probes: u8, bit: impl FnMut(u8) -> u8) -> bool {
    if num_probes == UNROLLED_PROBES {
        test_groups(UNROLLED_PROBES, bit)
    } else {
        test_groups(num_probes, bit)
    }
}

/// [`all_probes_set`]'s loop.
#[inline(always)]
fn test_groups(num_probes: u8, mut bit: impl FnMut(u8) -> u8) -> bool {
    // Counting down what is left, not up to `num_probes`: one value fewer to keep,
    // and none at all where `bit` ignores i.
    let (mut i, mut left) = (0, num_probes);
    while left >= PROBES_PER_BRANCH {
        if bit(i) & bit(i + 1) & bit(i + 2) == 0 {
            return false;
        }
        i += PROBES_PER_BRANCH;
        left -= PROBES_PER_BRANCH;
    }
    while left > 0 {
        if bit(i) == 0 {
            return false;
        }
        i += 1;
        left -= 1;
    }
    true
}

/// Sets every probe bit of `h`.
#[inline(always)]
pub(super) fn set_all<L: Locate>(array: &mut [u8], h: u32, num_probes: u8, bits: L) {
    let delta = delta(h);
    let mut h = h;
    for _ in 0..num_probes {
        bits.set(array, h);
        h = h.wrapping_add(delta);
    }
}
