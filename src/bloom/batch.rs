//! Many keys at a time. Keys are hashed a group at a time (with SIMD where the CPU
//! has it); with SIMD, the probes of a block of keys are also located at once, in
//! vectors, and the filter's memory for them requested before any is tested or set.
//! Without it, a query requests the line of each key's first probe before the probes
//! of the group are tested. Either way a query fetches the filter's memory for many
//! keys at once instead of one key's after another's.

use super::probe::{all_probes_set, all_set, set_all, Probes, PROBES_PER_BRANCH};
use crate::reduce::{BitCount, FastRemainder, Locate};
use crate::simd::{self, Located, SimdLevel, Vector, BLOCK};

/// Keys hashed per round.
const GROUP: usize = 64;

/// Calls `each` with the hashes of `keys`, a group at a time, in order.
#[inline(always)]
fn for_each_group<'k>(
    mut keys: impl Iterator<Item = &'k [u8]>,
    level: SimdLevel,
    mut each: impl FnMut(&[u32]),
) {
    loop {
        let mut group: [&[u8]; GROUP] = [&[]; GROUP];
        let mut count = 0;
        for (slot, key) in group.iter_mut().zip(&mut keys) {
            *slot = key;
            count += 1;
        }
        if count == 0 {
            return;
        }
        let mut hashes = [0u32; GROUP];
        simd::bloom_hashes(level, &group[..count], &mut hashes[..count]);
        each(&hashes[..count]);
        if count < GROUP {
            return;
        }
    }
}

/// Calls `each` with the located probes of `hashes`, a block at a time, each block
/// requested from memory (the bit array at `array`, of `len` bytes) while the one
/// before it is handled.
#[inline(always)]
fn for_each_located(
    vector: Vector,
    (array, len): (*const u8, usize),
    num_probes: u8,
    bits: FastRemainder,
    hashes: &[u32],
    [even, odd]: &mut [Located; 2],
    mut each: impl FnMut(&Located),
) {
    let blocks = hashes.len().div_ceil(BLOCK);
    for index in 0..=blocks {
        // Block `index` is located into one buffer while block `index - 1`, in the
        // other, is handled. (Alternating, not swapping: the buffers are large.)
        let (next, current) = if index % 2 == 0 {
            (&mut *even, &*odd)
        } else {
            (&mut *odd, &*even)
        };
        if index < blocks {
            let block = &hashes[index * BLOCK..hashes.len().min((index + 1) * BLOCK)];
            simd::locate(vector, len, num_probes, bits, block, next);
            // The probes each key is sure to test (see `all_probes_set`).
            next.prefetch(array, num_probes.min(PROBES_PER_BRANCH));
        }
        if index > 0 {
            each(current);
        }
    }
}

/// Answers for `keys` into `results` (as many as both have).
pub(super) fn query_keys<'k, T>(
    keys: impl Iterator<Item = &'k [u8]>,
    filter: Probes<'_>,
    results: &mut [T],
    level: SimdLevel,
) where
    T: From<bool>,
{
    let (array, num_probes) = (filter.array, filter.num_probes);
    let mut results = results.iter_mut();
    match (BitCount::new(array.len()), level.vector()) {
        (BitCount::Small(bits), Some(vector)) => {
            let located = &mut [Located::new(), Located::new()];
            let at = (array.as_ptr(), array.len());
            for_each_group(keys, level, |hashes| {
                for_each_located(vector, at, num_probes, bits, hashes, located, |located| {
                    answer(located, array, &mut results);
                });
            });
        }
        (BitCount::Small(bits), None) => query(keys, array, num_probes, bits, &mut results, level),
        (BitCount::Huge(bits), _) => query(keys, array, num_probes, bits, &mut results, level),
    }
}

fn query<'k, 'r, L, T>(
    keys: impl Iterator<Item = &'k [u8]>,
    array: &[u8],
    num_probes: u8,
    bits: L,
    results: &mut impl Iterator<Item = &'r mut T>,
    level: SimdLevel,
) where
    L: Locate,
    T: From<bool> + 'r,
{
    for_each_group(keys, level, |hashes| {
        for &h in hashes {
            simd::prefetch(array.as_ptr().wrapping_add(bits.locate(h).0));
        }
        for (&h, result) in hashes.iter().zip(&mut *results) {
            *result = all_set(array, h, num_probes, bits).into();
        }
    });
}

/// Sets the probe bits of every key in `array`.
pub(super) fn add_keys<I>(keys: I, array: &mut [u8], num_probes: u8, level: SimdLevel)
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    // The keys may be owned values: each group is held here while it is hashed.
    let mut keys = keys.into_iter().fuse();
    let located = &mut [Located::new(), Located::new()];
    let bit_count = BitCount::new(array.len());
    loop {
        let group: [Option<I::Item>; GROUP] = std::array::from_fn(|_| keys.next());
        let slices = group
            .iter()
            .map_while(|key| key.as_ref().map(AsRef::as_ref));
        let mut count = 0;
        for_each_group(slices, level, |hashes| {
            count = hashes.len();
            match (bit_count, level.vector()) {
                (BitCount::Small(bits), Some(vector)) => {
                    let at = (array.as_ptr(), array.len());
                    for_each_located(vector, at, num_probes, bits, hashes, located, |located| {
                        located.set_bits(array);
                    });
                }
                (BitCount::Small(bits), None) => add(array, num_probes, bits, hashes),
                (BitCount::Huge(bits), _) => add(array, num_probes, bits, hashes),
            }
        });
        if count < GROUP {
            return;
        }
    }
}

fn add<L: Locate>(array: &mut [u8], num_probes: u8, bits: L, hashes: &[u32]) {
    // No prefetch pass, unlike queries: stores do not stall the way loads do, and
    // measured (scalar level, AMD Zen 3) the pass cost more than it saved.
    for &h in hashes {
        set_all(array, h, num_probes, bits);
    }
}

/// Writes each located key's answer to the next of `results`.
#[inline(always)]
fn answer<'r, T: From<bool> + 'r>(
    located: &Located,
    array: &[u8],
    results: &mut impl Iterator<Item = &'r mut T>,
) {
    for (key, result) in (0..located.keys()).zip(results) {
        let bit = located.key_bits(array, key);
        *result = all_probes_set(located.probes(), bit).into();
    }
}
