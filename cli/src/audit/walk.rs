//! The walk through one table's keys, data block by data block, with the filter
//! LevelDB consults for each: which keys the readers counted would miss, and the
//! hashes that tell the writer of each filter.

use leveldb_bloom::hash::{bloom_hash_with, tail_is_ambiguous, TailBytes};
use leveldb_bloom::{Filter, LEGACY_POLICY_NAME, POLICY_NAME};
use leveldb_table::{Family, FilterBlock, Lookup};

use crate::audit::bloom2;
use crate::audit::dialect::{KeyHashes, Writers};
use crate::audit::readers::Readings;
use crate::command_line::Reader;
use crate::hex::hex_cut;

/// Bytes of a missed key shown in hex.
const SHOWN_KEY_BYTES: usize = 64;

/// The walk through a table's keys, data block by data block, with the filter
/// LevelDB consults for each block.
pub struct Walk<'a> {
    /// The readings whose misses count.
    pub readings: Readings,
    /// A Basho table's `leveldb.BuiltinBloomFilter2`: Basho's bloom2, whose readers
    /// are Basho's; keys are checked with bloom2.
    pub bloom2: bool,
    /// `leveldb.BuiltinBloomFilter` outside Basho's tables: read with either hash.
    pub legacy: bool,
    pub filters: Option<&'a FilterBlock>,
    /// The filter index of the blocks being walked, and what LevelDB does with it.
    pub current: Option<(usize, Lookup<'a>)>,
    pub hashes: KeyHashes,
    pub writers: Writers,
    /// Keys per filter index, of the filters LevelDB consults.
    pub consulted_keys: Vec<usize>,
    /// The keys a counted reader misses.
    pub missed: Misses,
    /// For `leveldb.BuiltinBloomFilter`: the keys each reading misses.
    pub missed_unsigned: usize,
    pub missed_signed: usize,
    pub max_missed: usize,
}

/// Keys missed under one reading: how many, and the first of them in hex.
#[derive(Default)]
pub struct Misses {
    pub count: usize,
    pub keys: Vec<String>,
}

impl Misses {
    fn add(&mut self, key: &[u8], max_missed: usize) {
        self.count += 1;
        if self.keys.len() < max_missed {
            self.keys.push(hex_cut(key, SHOWN_KEY_BYTES));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

impl<'a> Walk<'a> {
    pub fn new(
        name: Option<&str>,
        (family, readers): (Family, &[Reader]),
        filters: Option<&'a FilterBlock>,
        reachable: usize,
        max_missed: usize,
    ) -> Self {
        Self {
            readings: name.map_or(Readings::default(), |name| {
                Readings::of(name, family, readers)
            }),
            bloom2: family == Family::Basho && name == Some(POLICY_NAME),
            legacy: family != Family::Basho && name == Some(LEGACY_POLICY_NAME),
            filters,
            current: None,
            hashes: KeyHashes::default(),
            writers: Writers::new(name.unwrap_or("")),
            consulted_keys: vec![0; reachable],
            missed: Misses::default(),
            missed_unsigned: 0,
            missed_signed: 0,
            max_missed,
        }
    }

    /// Starts the data block at `offset`, finishing the filter before it when this
    /// block has another.
    pub fn enter(&mut self, offset: u64) {
        let Some(filters) = self.filters else {
            return;
        };
        let index = filters.index_of(offset);
        if self.current.is_some_and(|(i, _)| i == index) {
            return;
        }
        self.finish_filter();
        self.current = Some((index, filters.lookup(index)));
    }

    /// Narrows the writers down with the filter walked so far, if LevelDB consults
    /// it and it covers keys.
    pub fn finish_filter(&mut self) {
        if let Some((_, Lookup::Filter(filter))) = self.current.take() {
            if !self.hashes.unsigned.is_empty() {
                self.writers.narrow(filter, &self.hashes);
            }
        }
        self.hashes.clear();
    }

    /// Checks `key`, whose hash under the unsigned reading is `unsigned`.
    pub fn key(&mut self, key: &[u8], unsigned: u32) {
        let Some((index, lookup)) = self.current else {
            return;
        };
        let ambiguous = tail_is_ambiguous(key);
        let signed = if ambiguous {
            bloom_hash_with(key, TailBytes::Signed)
        } else {
            unsigned
        };
        // Whether the unsigned and the signed reading find the key.
        let (unsigned_found, signed_found) = match lookup {
            Lookup::Filter(filter) => {
                if let Some(keys) = self.consulted_keys.get_mut(index) {
                    *keys += 1;
                }
                self.hashes.unsigned.push(unsigned);
                self.hashes.signed.push(signed);
                self.hashes.ambiguous |= ambiguous;
                if self.bloom2 {
                    let found = bloom2::key_may_match(key, filter);
                    return self.count(key, (found, found));
                }
                let filter = Filter::new(filter);
                let unsigned_found = filter.may_contain_hash(unsigned);
                let signed_found = if ambiguous {
                    filter.may_contain_hash(signed)
                } else {
                    unsigned_found
                };
                (unsigned_found, signed_found)
            }
            Lookup::Absent => (false, false),
            Lookup::MayMatch => (true, true),
        };
        if self.legacy {
            self.missed_unsigned += usize::from(!unsigned_found);
            self.missed_signed += usize::from(!signed_found);
        }
        self.count(key, (unsigned_found, signed_found));
    }

    /// Counts `key` missed when a counted reading misses it (`found`: whether the
    /// unsigned and the signed reading find it).
    fn count(&mut self, key: &[u8], (unsigned_found, signed_found): (bool, bool)) {
        if self.readings.miss(unsigned_found, signed_found) {
            self.missed.add(key, self.max_missed);
        }
    }
}
