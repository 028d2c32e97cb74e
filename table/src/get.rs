//! A Get in one table, as LevelDB 1.23's `Table::InternalGet` does it: the index
//! sought for the data block that may hold the key, the filter of that block asked,
//! and, unless it answers "absent", the block read and sought.

use crate::block::seek;
use crate::error::Result;
use crate::filter_block::{FilterBlock, Lookup};
use crate::footer::BlockHandle;
use crate::internal_key::INTERNAL_KEY_TAG_LEN;
use crate::source::ReadAt;
use crate::table::Table;

/// The filter policy of a Get: which filter block it reads, and its answer for a key
/// and a filter of that block (LevelDB's `FilterPolicy::KeyMayMatch`).
#[derive(Clone, Copy)]
pub struct FilterPolicy<'p> {
    /// The filter block read is `filter.` + this name.
    pub name: &'p str,
    /// Whether the filter (the second argument) may hold the user key (the first).
    pub key_may_match: &'p dyn Fn(&[u8], &[u8]) -> bool,
}

/// What a Get saw of the table's filters.
pub enum FilterSeen {
    /// None read: the Get has no policy, or the key sorts after the table's last
    /// block.
    NotRead,
    /// The table has no filter block of the policy's name.
    NoBlock,
    /// The filter block, the index of the filter LevelDB consults for the data block
    /// and its answer (also when the block is [ignored](FilterBlock::ignored): "may
    /// match").
    Asked {
        filters: FilterBlock,
        index: usize,
        may_match: bool,
    },
}

/// What a Get saw in a table.
pub struct Got {
    /// The data block the index names for the key; `None` when the key sorts after
    /// the table's last block (then nothing else is read).
    pub data_block: Option<BlockHandle>,
    pub filter: FilterSeen,
    /// Whether the data block was read: unless the filter answered "absent".
    pub block_read: bool,
    /// The block's first entry at or after the lookup key, when it was read and has
    /// one: its internal key and value (LevelDB's `handle_result` arguments, whose
    /// user key the caller compares with its own).
    pub entry: Option<(Vec<u8>, Vec<u8>)>,
}

impl FilterSeen {
    /// Whether the filter answered "absent", sparing the data block's read.
    pub fn absent(&self) -> bool {
        matches!(
            self,
            Self::Asked {
                may_match: false,
                ..
            }
        )
    }
}

impl<R: ReadAt + ?Sized> Table<'_, R> {
    /// LevelDB's `Table::InternalGet` for `lookup` (an internal key, as
    /// [`lookup_key`](crate::internal_key::lookup_key) makes it) with `policy`'s
    /// filters: what it read and found.
    pub fn get(&self, lookup: &[u8], policy: Option<FilterPolicy<'_>>) -> Result<Got> {
        let mut got = Got {
            data_block: self.seek(lookup)?,
            filter: FilterSeen::NotRead,
            block_read: false,
            entry: None,
        };
        let Some(handle) = got.data_block else {
            return Ok(got);
        };
        if let Some(policy) = policy {
            got.filter = match self.filter(policy.name)? {
                None => FilterSeen::NoBlock,
                Some(filters) => {
                    let user_key = &lookup[..lookup.len().saturating_sub(INTERNAL_KEY_TAG_LEN)];
                    let index = filters.index_of(handle.offset);
                    let may_match = match filters.lookup(index) {
                        Lookup::Filter(filter) => (policy.key_may_match)(user_key, filter),
                        Lookup::Absent => false,
                        Lookup::MayMatch => true,
                    };
                    FilterSeen::Asked {
                        filters,
                        index,
                        may_match,
                    }
                }
            };
        }
        if got.filter.absent() {
            return Ok(got);
        }
        got.block_read = true;
        let block = self.block(handle)?;
        got.entry = seek(&block, handle.offset, lookup)?.map(|(key, value)| (key, value.to_vec()));
        Ok(got)
    }
}
