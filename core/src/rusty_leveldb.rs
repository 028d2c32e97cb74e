//! [`rusty_leveldb::FilterPolicy`] for [`BloomFilterPolicy`] (cargo feature
//! `rusty-leveldb`), so Rust programs on rusty-leveldb write and read the filters
//! LevelDB itself does, under LevelDB's name.
//!
//! rusty-leveldb's own `BloomPolicy` builds the same bytes for ordinary keys but
//! answers differently on malformed filters (an empty or one-byte filter matches
//! everything there, and a one-byte filter with a valid k divides by zero); this
//! implementation answers exactly as LevelDB's `KeyMayMatch` does.

#![forbid(unsafe_code)]

use rusty_leveldb::FilterPolicy;

use crate::bloom::BloomFilterPolicy;
use crate::format::MATCH_ALL_FILTER;

/// The policy's own format: [`BloomFilterPolicy::legacy`] writes and reads
/// `leveldb.BuiltinBloomFilter` filters in rusty-leveldb too.
impl FilterPolicy for BloomFilterPolicy {
    fn name(&self) -> &'static str {
        BloomFilterPolicy::name(self)
    }

    /// `keys` holds the keys end to end; key i starts at `key_offsets[i]` and ends
    /// where the next one starts (the last at the end of `keys`). Offsets that do not
    /// describe such a split, which rusty-leveldb never passes, give
    /// [`MATCH_ALL_FILTER`]: a filter that can never hide a key.
    fn create_filter(&self, keys: &[u8], key_offsets: &[usize]) -> Vec<u8> {
        match split_keys(keys, key_offsets) {
            Some(keys) => self.build_filter(&keys),
            None => MATCH_ALL_FILTER.to_vec(),
        }
    }

    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        BloomFilterPolicy::key_may_match(self, key, filter)
    }
}

/// The keys of rusty-leveldb's concatenated form, or `None` when an offset is out of
/// order or out of range.
fn split_keys<'a>(keys: &'a [u8], key_offsets: &[usize]) -> Option<Vec<&'a [u8]>> {
    let ends = key_offsets.iter().skip(1).copied().chain([keys.len()]);
    key_offsets
        .iter()
        .zip(ends)
        .map(|(&start, end)| keys.get(start..end))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The concatenated form of `keys`, as rusty-leveldb's filter block builder makes it.
    fn concatenated(keys: &[&[u8]]) -> (Vec<u8>, Vec<usize>) {
        let mut data = Vec::new();
        let mut offsets = Vec::new();
        for key in keys {
            offsets.push(data.len());
            data.extend_from_slice(key);
        }
        (data, offsets)
    }

    #[test]
    fn builds_the_filter_of_the_split_keys() {
        let keys: [&[u8]; 6] = [b"hello", b"", b"world", b"hello", b"\x00\xff", b""];
        for bits_per_key in [1, 10, 20] {
            let policy = BloomFilterPolicy::new(bits_per_key);
            for n in 0..=keys.len() {
                let (data, offsets) = concatenated(&keys[..n]);
                assert_eq!(
                    FilterPolicy::create_filter(&policy, &data, &offsets),
                    policy.build_filter(&keys[..n]),
                    "{n} keys at {bits_per_key} bits per key"
                );
            }
        }
    }

    #[test]
    fn bad_offsets_give_the_match_all_filter() {
        let policy = BloomFilterPolicy::new(10);
        for offsets in [&[0, 6, 3][..], &[0, 11], &[1, 0], &[12]] {
            let filter = FilterPolicy::create_filter(&policy, b"helloworld", offsets);
            assert_eq!(filter, MATCH_ALL_FILTER, "offsets {offsets:?}");
        }
    }

    #[test]
    fn answers_as_leveldb_on_malformed_filters() {
        let policy = BloomFilterPolicy::new(10);
        for (filter, expected) in [
            (&[][..], false),
            (&[0x06], false),
            (&[0x00, 0x1e], false),
            (&[0x00, 0x1f], true),
            (&[0x00, 0x00], true),
        ] {
            assert_eq!(
                FilterPolicy::key_may_match(&policy, b"key", filter),
                expected,
                "filter {filter:02x?}"
            );
        }
        assert_eq!(FilterPolicy::name(&policy), "leveldb.BuiltinBloomFilter2");
    }

    #[test]
    fn legacy_policy_keeps_its_name_and_reading() {
        let policy = BloomFilterPolicy::legacy(10);
        assert_eq!(FilterPolicy::name(&policy), "leveldb.BuiltinBloomFilter");
        let keys: [&[u8]; 3] = [b"caf\xc3\xa9", b"\xff", b"plain"];
        let (data, offsets) = concatenated(&keys);
        let filter = FilterPolicy::create_filter(&policy, &data, &offsets);
        assert_eq!(filter, policy.build_filter(&keys));
        assert!(keys
            .iter()
            .all(|key| FilterPolicy::key_may_match(&policy, key, &filter)));
    }
}
