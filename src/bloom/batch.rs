//! Many keys at a time. Keys are hashed a group at a time (with SIMD where the CPU
//! has it), the filter's cache line for each key's first probe is requested, and only
//! then are the probes tested or set: the memory of a whole group is fetched at once
//! instead of one key's after another's.

use super::remainder::{BitCount, Locate};
use super::{all_set, set_all, Probes};
use crate::simd::{self, SimdLevel};

/// Keys per group: enough that the line requested for the first key has arrived
/// when it is tested, few enough to stay in registers and L1.
const GROUP: usize = 64;

/// Calls `each` with the hashes of `keys`, a group at a time, in order.
#[inline(always)]
fn for_each_group<I>(keys: I, level: SimdLevel, mut each: impl FnMut(&[u32]))
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    let mut keys = keys.into_iter().fuse();
    loop {
        let group: [Option<I::Item>; GROUP] = std::array::from_fn(|_| keys.next());
        let count = group.iter().take_while(|key| key.is_some()).count();
        if count == 0 {
            return;
        }
        let slices: [&[u8]; GROUP] =
            std::array::from_fn(|i| group[i].as_ref().map_or(&[][..], AsRef::as_ref));
        let mut hashes = [0u32; GROUP];
        simd::bloom_hashes(level, &slices[..count], &mut hashes[..count]);
        each(&hashes[..count]);
        if count < GROUP {
            return;
        }
    }
}

/// Answers for `keys` into `results` (as many as both have).
pub(super) fn query_keys<I, T>(keys: I, filter: Probes<'_>, results: &mut [T], level: SimdLevel)
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
    T: From<bool>,
{
    match filter.bits {
        BitCount::Small(r) => query(keys, filter.array, filter.num_probes, r, results, level),
        BitCount::Huge(r) => query(keys, filter.array, filter.num_probes, r, results, level),
    }
}

fn query<I, R, T>(keys: I, array: &[u8], num_probes: u8, bits: R, results: &mut [T], level: SimdLevel)
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
    R: Locate,
    T: From<bool>,
{
    let mut results = results.iter_mut();
    for_each_group(keys, level, |hashes| {
        for &h in hashes {
            simd::prefetch(array, bits.locate(h).0);
        }
        for (&h, result) in hashes.iter().zip(&mut results) {
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
    match BitCount::new(array.len()) {
        BitCount::Small(r) => add(keys, array, num_probes, r, level),
        BitCount::Huge(r) => add(keys, array, num_probes, r, level),
    }
}

fn add<I, R>(keys: I, array: &mut [u8], num_probes: u8, bits: R, level: SimdLevel)
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
    R: Locate,
{
    for_each_group(keys, level, |hashes| {
        for &h in hashes {
            simd::prefetch(array, bits.locate(h).0);
        }
        for &h in hashes {
            set_all(array, h, num_probes, bits);
        }
    });
}
