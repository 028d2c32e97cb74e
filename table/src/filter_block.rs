//! The filter block, read as LevelDB 1.23's `FilterBlockReader` reads it, branch
//! by branch: what LevelDB does with a filter block, however malformed, is what a
//! reader of it must predict.

use crate::coding::decode_fixed32;
use crate::error::{Error, ErrorKind};

/// A filter block: one filter per `2^base_lg` bytes of data-block offsets, its base
/// read from the block (LevelDB writes 11, goleveldb what it is configured with).
pub struct FilterBlock {
    contents: Vec<u8>,
    /// The block's offset in its file.
    offset: u64,
    /// Where the offset array starts (LevelDB's `offset_ - data_`).
    array_offset: usize,
    /// How many filters the block holds (LevelDB's `num_`).
    count: usize,
    base_lg: u8,
    /// Why LevelDB's reader takes the block as holding no filter, when it does.
    ignored: Option<Error>,
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

impl FilterBlock {
    /// The filter block `contents`, at `offset` in its file, as LevelDB's reader takes
    /// it. A block shorter than 5 bytes, or whose offset array would start past its
    /// end, holds no filter for LevelDB ([`ignored`](Self::ignored) says why): it
    /// then answers "may match" for every key, so such a block hides no key.
    pub fn new(contents: Vec<u8>, offset: u64) -> Self {
        let mut block = Self {
            contents,
            offset,
            array_offset: 0,
            count: 0,
            base_lg: 0,
            ignored: None,
        };
        let n = block.contents.len();
        let Some(last_word) = n.checked_sub(5) else {
            block.ignored = Some(Error::at(offset, ErrorKind::FilterBlockTooShort));
            return block;
        };
        let array_offset = decode_fixed32(&block.contents, last_word).expect("checked") as usize;
        if array_offset > last_word {
            block.ignored = Some(Error::at(offset, ErrorKind::FilterArrayPastEnd));
            return block;
        }
        block.array_offset = array_offset;
        block.count = (last_word - array_offset) / 4;
        block.base_lg = block.contents[n - 1];
        block
    }

    /// Why LevelDB takes the block as holding no filter at all, when it does.
    pub fn ignored(&self) -> Option<&Error> {
        self.ignored.as_ref()
    }

    /// The block's bytes, offset array and base included.
    pub fn contents(&self) -> &[u8] {
        &self.contents
    }

    /// Where the block starts in its file.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// How many filters the block holds (LevelDB's `num_`; 0 when ignored).
    pub fn count(&self) -> usize {
        self.count
    }

    /// The logarithm of the data-block offsets each filter covers, as the block
    /// stores it (0 when ignored, as LevelDB's reader leaves it).
    pub fn base_lg(&self) -> u8 {
        self.base_lg
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

    /// What LevelDB does for the data block at `block_offset`: with the filter of
    /// index [`index_of`](Self::index_of) that offset.
    pub fn for_block(&self, block_offset: u64) -> Lookup<'_> {
        self.lookup(self.index_of(block_offset))
    }

    /// What LevelDB does with filter `i`.
    pub fn lookup(&self, i: usize) -> Lookup<'_> {
        if i >= self.count {
            return Lookup::MayMatch;
        }
        let entry = self.array_offset + 4 * i;
        let start = decode_fixed32(&self.contents, entry).expect("within the array") as usize;
        let limit = decode_fixed32(&self.contents, entry + 4).expect("within the block") as usize;
        if start <= limit && limit <= self.array_offset {
            Lookup::Filter(&self.contents[start..limit])
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
