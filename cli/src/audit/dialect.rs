//! Whose bits a table's filters hold: the writers that could have built every
//! filter, narrowed one filter at a time, so that no more than one filter's keys
//! (their hashes) are held at once.

use leveldb_bloom::{BloomFilterPolicy, LEGACY_POLICY_NAME, POLICY_NAME};
use serde::Serialize;

/// RocksDB's retired block-based filter: LevelDB's layout, the signed hash.
pub const ROCKSDB_BLOCK_BASED: &str = "rocksdb.BuiltinBloomFilter";
/// The largest bits per key tried when finding the writer of a filter.
const MAX_BITS_PER_KEY: u32 = 100;

/// Whose bits a table's filters hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// `leveldb.BuiltinBloomFilter2`, byte for byte LevelDB ≥ 1.18's.
    Leveldb,
    /// `leveldb.BuiltinBloomFilter` with the unsigned hash: LevelDB < 1.18 on ARM, goleveldb.
    LegacyUnsigned,
    /// `leveldb.BuiltinBloomFilter` with the signed hash: LevelDB < 1.18 on x86.
    LegacySigned,
    /// `leveldb.BuiltinBloomFilter` with both readings set: this library's legacy policy.
    LegacyBoth,
    /// `rocksdb.BuiltinBloomFilter`: RocksDB's block-based filter (signed hash).
    RocksdbBlockBased,
    /// `leveldb.BuiltinBloomFilter2` in a table of Basho's LevelDB (its `stats.sst1`
    /// block): Basho's bloom2, every key found by bloom2's own probes.
    BashoBloom2,
    /// A name this tool knows, with bits matching none of the above.
    Foreign,
    /// A filter name this tool does not know.
    UnknownName,
    /// No filter block.
    None,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Self::Leveldb => "leveldb",
            Self::LegacyUnsigned => "legacy-unsigned",
            Self::LegacySigned => "legacy-signed",
            Self::LegacyBoth => "legacy-both",
            Self::RocksdbBlockBased => "rocksdb-block-based",
            Self::BashoBloom2 => "basho-bloom2",
            Self::Foreign => "foreign",
            Self::UnknownName => "unknown-name",
            Self::None => "none",
        }
    }

    /// The writers that can have written filters under `name`, in the order they
    /// are reported when several fit (keys whose tails read the same under either
    /// hash cannot tell them apart).
    fn candidates(name: &str) -> &'static [Dialect] {
        match name {
            POLICY_NAME => &[Self::Leveldb],
            LEGACY_POLICY_NAME => &[Self::LegacyUnsigned, Self::LegacySigned, Self::LegacyBoth],
            ROCKSDB_BLOCK_BASED => &[Self::RocksdbBlockBased],
            _ => &[],
        }
    }
}

/// The hashes of one filter's keys: under the unsigned reading, and under the
/// signed one where some key's tail reads differently.
#[derive(Default)]
pub struct KeyHashes {
    pub unsigned: Vec<u32>,
    pub signed: Vec<u32>,
    pub ambiguous: bool,
}

impl KeyHashes {
    pub fn clear(&mut self) {
        self.unsigned.clear();
        self.signed.clear();
        self.ambiguous = false;
    }
}

/// The writers (and their bits per key) that could have built every filter seen so
/// far.
pub struct Writers {
    known_name: bool,
    /// `None` until the first filter is seen.
    left: Option<Vec<(Dialect, u32)>>,
    built: Vec<u8>,
    other: Vec<u8>,
}

impl Writers {
    pub fn new(name: &str) -> Self {
        Self {
            known_name: !Dialect::candidates(name).is_empty(),
            left: Option::None,
            built: Vec::new(),
            other: Vec::new(),
        }
        .with_candidates(name)
    }

    fn with_candidates(mut self, name: &str) -> Self {
        if self.known_name {
            let all = Dialect::candidates(name)
                .iter()
                .flat_map(|&d| (0..=MAX_BITS_PER_KEY).map(move |bpk| (d, bpk)))
                .collect();
            self.left = Some(all);
        }
        self
    }

    /// Keeps the writers that build exactly `filter` from the keys hashed in `keys`.
    pub fn narrow(&mut self, filter: &[u8], keys: &KeyHashes) {
        let Some(left) = self.left.as_mut() else {
            return;
        };
        let (built, other) = (&mut self.built, &mut self.other);
        left.retain(|&(dialect, bits_per_key)| {
            let policy = BloomFilterPolicy::new(bits_per_key);
            if policy.filter_len(keys.unsigned.len()) != Some(filter.len())
                || filter.last() != Some(&policy.num_probes())
            {
                return false;
            }
            let signed = if keys.ambiguous {
                &keys.signed
            } else {
                &keys.unsigned
            };
            built.resize(filter.len(), 0);
            let hashes = match dialect {
                Dialect::LegacySigned | Dialect::RocksdbBlockBased => signed,
                _ => &keys.unsigned,
            };
            let written = policy.write_filter_of_hashes(hashes.iter().copied(), built);
            if dialect == Dialect::LegacyBoth && keys.ambiguous {
                // Both readings' bits: the union of the two filters.
                other.resize(filter.len(), 0);
                let _ = policy.write_filter_of_hashes(signed.iter().copied(), other);
                built
                    .iter_mut()
                    .zip(other.iter())
                    .for_each(|(b, o)| *b |= o);
            }
            written.is_ok() && built[..] == *filter
        });
    }

    /// The writer of every filter seen, if one could have built them all.
    pub fn found(&self, any_filter: bool) -> Dialect {
        match &self.left {
            Option::None => Dialect::UnknownName,
            Some(left) if any_filter => left
                .iter()
                .map(|&(dialect, _)| dialect)
                .min()
                .unwrap_or(Dialect::Foreign),
            Some(_) => Dialect::Foreign,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leveldb_bloom::hash::{bloom_hash_with, TailBytes};

    /// The hashes of `keys` as the audit gathers them for one filter.
    fn hashes(keys: &[&[u8]]) -> KeyHashes {
        let mut hashes = KeyHashes::default();
        for key in keys {
            hashes
                .unsigned
                .push(bloom_hash_with(key, TailBytes::Unsigned));
            hashes.signed.push(bloom_hash_with(key, TailBytes::Signed));
            hashes.ambiguous |= leveldb_bloom::hash::tail_is_ambiguous(key);
        }
        hashes
    }

    #[test]
    fn leveldbs_own_filter_is_found_leveldbs() {
        let keys: [&[u8]; 3] = [b"apple", b"banana", b"cherry"];
        let filter = BloomFilterPolicy::new(10).build_filter(keys.iter());
        let mut writers = Writers::new(POLICY_NAME);
        writers.narrow(&filter, &hashes(&keys));
        assert_eq!(writers.found(true), Dialect::Leveldb);
    }

    #[test]
    fn bits_no_writer_builds_are_foreign_and_an_unknown_name_is_said_so() {
        let keys: [&[u8]; 2] = [b"apple", b"banana"];
        let mut filter = BloomFilterPolicy::new(10).build_filter(keys.iter());
        filter[0] ^= 0xff;
        let mut writers = Writers::new(POLICY_NAME);
        writers.narrow(&filter, &hashes(&keys));
        assert_eq!(writers.found(true), Dialect::Foreign);
        assert_eq!(
            Writers::new("basho.Bloom2").found(true),
            Dialect::UnknownName
        );
        // A known name whose filters cover no key: nothing tells the writer.
        assert_eq!(Writers::new(POLICY_NAME).found(false), Dialect::Foreign);
    }

    #[test]
    fn a_legacy_filter_of_keys_whose_tails_read_alike_is_reported_unsigned_first() {
        let keys: [&[u8]; 2] = [b"plain", b"ascii"];
        let filter = BloomFilterPolicy::new(10).build_filter(keys.iter());
        let mut writers = Writers::new(LEGACY_POLICY_NAME);
        writers.narrow(&filter, &hashes(&keys));
        assert_eq!(writers.found(true), Dialect::LegacyUnsigned);
    }
}
