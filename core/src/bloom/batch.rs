//! Many keys at a time. Keys are hashed a group at a time (with SIMD where the CPU
//! has it). At AVX-512 a query then locates and tests the group's probes in vectors
//! (`simd::LaneProbes`); elsewhere it requests the filter's line of each key's first
//! probe before the probes of the group are tested, so it fetches the filter's memory
//! for many keys at once instead of one key's after another's.

use super::probe::{all_set, set_all, Probes, UNROLLED_PROBES};
use crate::bit_position::{BitCount, Locate};
use crate::same_length_keys::SameLengthKeys;
use crate::simd::{self, SimdLevel};

/// Keys hashed per round.
const GROUP: usize = 64;

/// At most this many keys are added to a filter one after another, unhashed in
/// groups (see `add_keys`).
const SCALAR_KEYS: usize = GROUP;

/// A batch's keys: as slices, and hashed a group at a time.
pub(crate) trait BatchKeys<'k> {
    /// The keys in order.
    fn slices(self) -> impl Iterator<Item = &'k [u8]>;

    /// Calls `each` with the hashes of the keys, a group at a time, in order.
    fn for_each_group(self, level: SimdLevel, each: impl FnMut(&[u32]));
}

/// Keys of any lengths, from an iterator.
pub(crate) struct EachKey<I>(pub(crate) I);

impl<'k, I: Iterator<Item = &'k [u8]>> BatchKeys<'k> for EachKey<I> {
    fn slices(self) -> impl Iterator<Item = &'k [u8]> {
        self.0
    }

    #[inline(always)]
    fn for_each_group(self, level: SimdLevel, mut each: impl FnMut(&[u32])) {
        let mut keys = self.0;
        // Filled once per call, then overwritten group after group: only the first
        // `count` slots of each group are read.
        let mut group: [&[u8]; GROUP] = [&[]; GROUP];
        let mut hashes = [0u32; GROUP];
        loop {
            let mut count = 0;
            for (slot, key) in group.iter_mut().zip(&mut keys) {
                *slot = key;
                count += 1;
            }
            if count == 0 {
                return;
            }
            simd::bloom_hashes(level, &group[..count], &mut hashes[..count]);
            each(&hashes[..count]);
            if count < GROUP {
                return;
            }
        }
    }
}

impl<'k> BatchKeys<'k> for SameLengthKeys<'k> {
    fn slices(self) -> impl Iterator<Item = &'k [u8]> {
        self.iter()
    }

    #[inline(always)]
    fn for_each_group(self, level: SimdLevel, mut each: impl FnMut(&[u32])) {
        let mut hashes = [0u32; GROUP];
        let mut rest = self;
        while !rest.is_empty() {
            let (group, after) = rest.split_at(GROUP);
            let hashes = &mut hashes[..group.len()];
            group.bloom_hashes(level, hashes);
            each(hashes);
            rest = after;
        }
    }
}

/// Answers for `keys` into `results` (as many as both have); returns how many were
/// "absent".
pub(super) fn query_keys<'k, T>(
    keys: impl BatchKeys<'k>,
    filter: Probes<'_>,
    results: &mut [T],
    level: SimdLevel,
) -> usize
where
    T: From<bool>,
{
    let (array, num_probes) = (filter.array, filter.num_probes);
    let results = &mut results.iter_mut();
    #[cfg(target_arch = "x86_64")]
    if let Some(lanes) = simd::lane_probes(level, array, num_probes) {
        return query_in_lanes(keys, lanes, results, level);
    }
    match BitCount::new(array.len()) {
        BitCount::Small(bits) => query(keys, array, num_probes, bits, results, level),
        BitCount::Huge(bits) => query(keys, array, num_probes, bits, results, level),
    }
}

fn query<'k, 'r, L, T>(
    keys: impl BatchKeys<'k>,
    array: &[u8],
    num_probes: u8,
    bits: L,
    results: &mut impl Iterator<Item = &'r mut T>,
    level: SimdLevel,
) -> usize
where
    L: Locate,
    T: From<bool> + 'r,
{
    let mut absent = 0;
    keys.for_each_group(level, |hashes| {
        for &h in hashes {
            simd::prefetch(array.as_ptr().wrapping_add(bits.locate(h).0));
        }
        for (&h, result) in hashes.iter().zip(&mut *results) {
            let set = all_set(array, h, num_probes, bits);
            absent += usize::from(!set);
            *result = set.into();
        }
    });
    absent
}

/// [`query`] with each group's probes located and tested in vectors.
#[cfg(target_arch = "x86_64")]
fn query_in_lanes<'k, 'r, T>(
    keys: impl BatchKeys<'k>,
    lanes: simd::LaneProbes<'_>,
    results: &mut impl Iterator<Item = &'r mut T>,
    level: SimdLevel,
) -> usize
where
    T: From<bool> + 'r,
{
    const { assert!(GROUP <= simd::LANE_PROBES_MAX_KEYS) };
    let mut absent = 0;
    keys.for_each_group(level, |hashes| {
        let answers = lanes.all_set(hashes);
        absent += hashes.len() - answers.count_ones() as usize;
        for (j, result) in results.take(hashes.len()).enumerate() {
            *result = (answers >> j & 1 == 1).into();
        }
    });
    absent
}

/// Sets the probe bits of every key in `array`: keys hashed a group at a time (with
/// SIMD where the CPU has it), then each key's probes located and set.
pub(super) fn add_keys<I>(keys: I, array: &mut [u8], num_probes: u8, level: SimdLevel)
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    // The keys may be owned values: each group is held here while it is hashed.
    let mut keys = keys.into_iter().fuse();
    let bit_count = BitCount::new(array.len());
    // A filter of at most a group of keys (LevelDB's, one per 2 KiB of a table, holds
    // a few dozen): each key hashed and added as it comes. Filling a group's arrays
    // would cost more than the vectors' hashing saves there.
    if keys.size_hint().1.is_some_and(|most| most <= SCALAR_KEYS) {
        let hashes = keys.map(|key| crate::hash::bloom_hash(key.as_ref()));
        return match bit_count {
            BitCount::Small(bits) => add(array, num_probes, bits, hashes),
            BitCount::Huge(bits) => add(array, num_probes, bits, hashes),
        };
    }
    loop {
        let group: [Option<I::Item>; GROUP] = std::array::from_fn(|_| keys.next());
        let slices = group
            .iter()
            .map_while(|key| key.as_ref().map(AsRef::as_ref));
        let mut count = 0;
        EachKey(slices).for_each_group(level, |hashes| {
            count = hashes.len();
            match bit_count {
                BitCount::Small(bits) => add(array, num_probes, bits, hashes.iter().copied()),
                BitCount::Huge(bits) => add(array, num_probes, bits, hashes.iter().copied()),
            }
        });
        if count < GROUP {
            return;
        }
    }
}

/// Sets the probes of each of `hashes`: with k known to the compiler for the usual k
/// (see [`UNROLLED_PROBES`]), which unrolls the probes' loop.
#[inline(always)]
fn add<L: Locate>(array: &mut [u8], num_probes: u8, bits: L, hashes: impl Iterator<Item = u32>) {
    // No prefetch pass, unlike queries: stores do not stall the way loads do, and the
    // pass cost more than it saved (docs/performance.md).
    if num_probes == UNROLLED_PROBES {
        hashes.for_each(|h| set_all(array, h, UNROLLED_PROBES, bits));
    } else {
        hashes.for_each(|h| set_all(array, h, num_probes, bits));
    }
}
