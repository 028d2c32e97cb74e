//! The filter block, read as LevelDB 1.23's `FilterBlockReader` reads it, branch
//! by branch: what LevelDB does with a filter
//! block, however malformed, is what a reader of it must predict.

use crate::coding::decode_fixed32;
use crate::error::{corrupt, ErrorKind, Result};

/// A filter block: one filter per `2^base_lg` bytes of data-block offsets.
pub struct FilterBlock<'a> {
    data: &'a [u8],
    /// Where the offset array starts (LevelDB's `offset_ - data_`).
    array_offset: usize,
    count: usize,
    pub base_lg: u8,
}

/// What LevelDB's `KeyMayMatch(block_offset, key)` does for the data block at
/// `block_offset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup<'a> {
    /// It asks the policy about this filter (empty filters included: the bloom policy
    /// answers "absent" for anything shorter than two bytes).
    Filter(&'a [u8]),
    /// "Absent" for every key without asking the policy: an offset pair whose start
    /// equals its limit but lies past the offset array (`start == limit`, the
    /// "empty filters do not match any keys" branch).
    Absent,
    /// "May match" for every key: no filter has this index, or its offsets are bad
    /// ("errors are treated as potential matches").
    MayMatch,
}

impl<'a> FilterBlock<'a> {
    /// The filter block `data` (at `offset` in its file, for errors). An error where
    /// LevelDB's reader takes the block as holding no filter at all (shorter than 5
    /// bytes, or an offset array starting past its end): LevelDB then answers "may
    /// match" for every key, so such a block hides no key.
    pub fn parse(data: &'a [u8], offset: u64) -> Result<Self> {
        let n = data.len();
        if n < 5 {
            return corrupt(offset, ErrorKind::FilterBlockTooShort);
        }
        let array_offset = decode_fixed32(data, n - 5).expect("checked") as usize;
        if array_offset > n - 5 {
            return corrupt(offset, ErrorKind::FilterArrayPastEnd);
        }
        Ok(Self {
            data,
            array_offset,
            count: (n - 5 - array_offset) / 4,
            base_lg: data[n - 1],
        })
    }

    /// How many filters the block holds (LevelDB's `num_`).
    pub fn count(&self) -> usize {
        self.count
    }

    /// How many of the filters a data block of a file of `file_len` bytes can be
    /// covered by: those of index `offset >> base_lg` for some offset within the
    /// file. LevelDB writes no others; a block claiming millions more (its offset
    /// array as long as the block) names filters no Get ever consults, and a reader
    /// that keeps something per filter keeps it for these only, as many as the file
    /// has bytes at most.
    pub fn reachable_count(&self, file_len: u64) -> usize {
        match file_len.checked_sub(1) {
            Some(last) => self.count.min(self.index_of(last).saturating_add(1)),
            None => 0,
        }
    }

    /// What LevelDB does with filter `i`.
    pub fn lookup(&self, i: usize) -> Lookup<'a> {
        if i >= self.count {
            return Lookup::MayMatch;
        }
        let entry = self.array_offset + 4 * i;
        let start = decode_fixed32(self.data, entry).expect("within the array") as usize;
        let limit = decode_fixed32(self.data, entry + 4).expect("within the block") as usize;
        if start <= limit && limit <= self.array_offset {
            Lookup::Filter(&self.data[start..limit])
        } else if start == limit {
            Lookup::Absent
        } else {
            Lookup::MayMatch
        }
    }

    /// The index of the filter that covers the data block starting at `offset`:
    /// `offset >> base_lg`. LevelDB shifts a 64-bit value by a `size_t`, undefined in
    /// C++ from 64 on; x86-64 and AArch64 take the count modulo 64, as here.
    pub fn index_of(&self, offset: u64) -> usize {
        usize::try_from(offset.wrapping_shr(u32::from(self.base_lg))).unwrap_or(usize::MAX)
    }
}
