//! The facts of LevelDB's bloom filter format, each written once: the names filter
//! blocks are stored under, the hash seed, the limits on k and on a filter's size,
//! and the filter that matches every key.
//!
//! A filter is a bit array followed by one byte, k, the number of probes. Each key
//! sets k bits chosen by double hashing its 32-bit hash.

#![forbid(unsafe_code)]

/// The name LevelDB stores with every filter block of this format.
pub const POLICY_NAME: &str = "leveldb.BuiltinBloomFilter2";

/// The name goleveldb and LevelDB before 1.18 store with their filter blocks.
pub const LEGACY_POLICY_NAME: &str = "leveldb.BuiltinBloomFilter";

/// Which filter blocks a [`BloomFilterPolicy`](crate::BloomFilterPolicy) writes and
/// reads: their name, and how the key's hash is read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Format {
    /// `leveldb.BuiltinBloomFilter2`, LevelDB ≥ 1.18's (and rusty-leveldb's): the
    /// unsigned hash; filters byte for byte LevelDB's.
    #[default]
    Current,
    /// `leveldb.BuiltinBloomFilter`, goleveldb's and LevelDB < 1.18's: each key's
    /// probe bits are set under both readings of the hash (signed and unsigned tail
    /// bytes), and a key may match when all its probes are set under either. Safe
    /// for every writer and reader of that name; for keys without a tail byte ≥ 0x80
    /// the filters equal goleveldb's byte for byte.
    Legacy,
}

impl Format {
    /// The name stored with filter blocks of this format (after `filter.`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Current => POLICY_NAME,
            Self::Legacy => LEGACY_POLICY_NAME,
        }
    }
}

/// The seed of LevelDB's `BloomHash`.
pub(crate) const HASH_SEED: u32 = 0xbc9f1d34;

/// Small key sets would get a very high false-positive rate, so a bit array is never
/// shorter than this.
pub(crate) const MIN_BITS: u64 = 64;

/// k is `bits_per_key * 0.69` (≈ ln 2, the optimum), truncated, clamped to
/// `1..=MAX_PROBES`. Readers treat a k byte above this as reserved for other
/// encodings and answer "may match".
pub(crate) const MAX_PROBES: u8 = 30;

/// The smallest filter that matches every key: a one-byte bit array and a reserved k.
/// It is what a filter degrades to when the real one cannot be built.
pub const MATCH_ALL_FILTER: [u8; 2] = [0x00, 0xff];
