//! The legacy format, `leveldb.BuiltinBloomFilter`: the same bits, sizing and k as
//! `leveldb.BuiltinBloomFilter2`, written under that older name by goleveldb
//! (unsigned hash) and by LevelDB before 1.18, whose hash read the 1–3 tail bytes
//! as plain `char`: sign-extended on x86, unsigned on ARM (1.18 changed the name
//! when it made the reading unsigned everywhere). A
//! filter of that name may come from either reading, so this format builds filters
//! that satisfy both and answers "may match" when either finds every probe set.
//!
//! The readings differ only for keys whose tail holds a byte ≥ 0x80
//! ([`tail_is_ambiguous`]); every other key is hashed once and costs what it costs
//! in the current format, and its bits are exactly goleveldb's.

use super::probe::{set_all, Probes};
use crate::bit_position::{BitCount, Locate};
use crate::format::HASH_SEED;
use crate::hash::{bloom_hash, hash_with, tail_is_ambiguous, TailBytes};

/// The hash of `key` with its tail bytes sign-extended, when that differs from the
/// unsigned `bloom_hash` (which is never the case for an unambiguous tail).
#[inline]
fn signed_hash(key: &[u8]) -> Option<u32> {
    tail_is_ambiguous(key).then(|| hash_with(key, HASH_SEED, TailBytes::Signed))
}

/// Sets the probe bits of every key in `array` under both readings of its hash.
/// Scalar: the SIMD hashers read the tail unsigned only.
pub(super) fn add_keys_both_readings<I>(keys: I, array: &mut [u8], num_probes: u8)
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
{
    match BitCount::new(array.len()) {
        BitCount::Small(bits) => add(keys, array, num_probes, bits),
        BitCount::Huge(bits) => add(keys, array, num_probes, bits),
    }
}

fn add<I, L>(keys: I, array: &mut [u8], num_probes: u8, bits: L)
where
    I: IntoIterator,
    I::Item: AsRef<[u8]>,
    L: Locate,
{
    for key in keys {
        let key = key.as_ref();
        let unsigned = bloom_hash(key);
        set_all(array, unsigned, num_probes, bits);
        if let Some(signed) = signed_hash(key).filter(|&signed| signed != unsigned) {
            set_all(array, signed, num_probes, bits);
        }
    }
}

impl Probes<'_> {
    /// Whether every probe of `key` is set under the unsigned reading or, only when
    /// that fails and the tail is ambiguous, under the signed one. Not inlined, so
    /// that the current format's one-key path stays lean.
    /// `unsigned` is the key's `bloom_hash`.
    #[inline(never)]
    pub(super) fn all_set_either_reading(self, key: &[u8], unsigned: u32) -> bool {
        self.all_set(unsigned) || self.all_set_signed_reading(key)
    }

    /// Whether the key's probes are all set under the signed reading of its tail,
    /// when that reading differs from the unsigned one (false otherwise: the caller
    /// has probed that one already).
    pub(super) fn all_set_signed_reading(self, key: &[u8]) -> bool {
        signed_hash(key).is_some_and(|h| self.all_set(h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bloom::{BloomFilterPolicy, Filter};
    use crate::format::{Format, LEGACY_POLICY_NAME};

    /// Keys of every tail length, about half with a byte ≥ 0x80 in the tail.
    fn keys(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                let mut key = format!("key{i}").into_bytes();
                key.extend(std::iter::repeat_n(0x7f + (i % 3) as u8, i % 4));
                key
            })
            .collect()
    }

    /// The filter a writer whose hash reads the tail as `tail` builds, written out
    /// from the format's description (LevelDB's `BloomHash` and its double-hashed
    /// probes), independently of the core.
    fn filter_of_one_reading(keys: &[Vec<u8>], bits_per_key: u64, tail: TailBytes) -> Vec<u8> {
        let k = ((bits_per_key as f64 * 0.69) as u8).clamp(1, 30);
        let bits = (keys.len() as u64 * bits_per_key).max(64);
        let mut filter = vec![0u8; bits.div_ceil(8) as usize + 1];
        *filter.last_mut().unwrap() = k;
        for key in keys {
            set_probes(&mut filter, key, tail);
        }
        filter
    }

    /// Sets `key`'s probe bits, read as `tail`, in `filter` (k from its last byte).
    fn set_probes(filter: &mut [u8], key: &[u8], tail: TailBytes) {
        let (&mut k, array) = filter.split_last_mut().unwrap();
        let bits = array.len() as u64 * 8;
        let mut h = hash_with(key, HASH_SEED, tail);
        let delta = h.rotate_right(17);
        for _ in 0..k {
            let bitpos = u64::from(h) % bits;
            array[(bitpos / 8) as usize] |= 1 << (bitpos % 8);
            h = h.wrapping_add(delta);
        }
    }

    #[test]
    fn names() {
        assert_eq!(Format::default(), Format::Current);
        assert_eq!(Format::Current.name(), "leveldb.BuiltinBloomFilter2");
        assert_eq!(Format::Legacy.name(), "leveldb.BuiltinBloomFilter");
        assert_eq!(BloomFilterPolicy::legacy(10).name(), LEGACY_POLICY_NAME);
        assert_eq!(BloomFilterPolicy::legacy(10).format(), Format::Legacy);
        assert_eq!(BloomFilterPolicy::legacy(10).num_probes(), 6);
    }

    #[test]
    fn matches_filters_of_either_reading() {
        let keys = keys(3000);
        let ambiguous = keys.iter().filter(|key| tail_is_ambiguous(key)).count();
        assert!(ambiguous > 1000, "{ambiguous}");
        let legacy = BloomFilterPolicy::legacy(10);
        let current = BloomFilterPolicy::new(10);
        for tail in [TailBytes::Signed, TailBytes::Unsigned] {
            let filter = filter_of_one_reading(&keys, 10, tail);
            let mut results = vec![false; keys.len()];
            Filter::with_format(&filter, Format::Legacy).may_contain_batch(&keys, &mut results);
            for (key, result) in keys.iter().zip(results) {
                assert!(legacy.key_may_match(key, &filter), "{tail:?} {key:02x?}");
                assert!(result, "batch, {tail:?} {key:02x?}");
            }
        }
        // The control: the current format misses keys of the signed filter.
        let signed = filter_of_one_reading(&keys, 10, TailBytes::Signed);
        let missed = keys
            .iter()
            .filter(|key| !current.key_may_match(key, &signed))
            .count();
        assert!(missed > ambiguous / 2, "{missed} of {ambiguous}");
    }

    #[test]
    fn filters_satisfy_both_readings_and_equal_the_unsigned_one_without_high_tails() {
        let keys = keys(2000);
        let legacy = BloomFilterPolicy::legacy(10);
        let filter = legacy.build_filter(&keys);
        for tail in [TailBytes::Signed, TailBytes::Unsigned] {
            // A reader of one reading only: the filter built of exactly the key's probes
            // is a subset of ours.
            for key in &keys {
                let mut one = vec![0; filter.len()];
                *one.last_mut().unwrap() = legacy.num_probes();
                set_probes(&mut one, key, tail);
                let covered = one.iter().zip(&filter).all(|(a, b)| a & !b == 0);
                assert!(covered, "{tail:?} {key:02x?}");
            }
        }
        let plain: Vec<Vec<u8>> = keys.into_iter().filter(|k| !tail_is_ambiguous(k)).collect();
        assert_eq!(
            legacy.build_filter(&plain),
            filter_of_one_reading(&plain, 10, TailBytes::Unsigned)
        );
        assert_eq!(
            legacy.build_filter(&plain),
            BloomFilterPolicy::new(10).build_filter(&plain)
        );
    }

    #[test]
    fn malformed_filters_as_the_current_format() {
        for filter in [
            &[][..],
            &[0x00],
            &[0x00, 0x1e],
            &[0x00, 0x1f],
            &[0x00, 0x00],
        ] {
            for key in [&b"key"[..], b"ke\xff"] {
                assert_eq!(
                    Filter::with_format(filter, Format::Legacy).may_contain(key),
                    Filter::new(filter).may_contain(key),
                    "{filter:02x?}"
                );
            }
        }
    }
}
