//! Reading LevelDB's files without LevelDB: a table's footer, blocks with their
//! checksums and compression, block entries, the filter block and the keys each
//! filter covers (LevelDB's doc/table_format.md); the log format ([`log`]) and the
//! MANIFEST it holds, which gives a database's live tables ([`manifest`]). The one
//! reader of the workspace: the tool and every test that reads LevelDB's files use
//! it. And its one writer, of what `leveldb-bloom refilter` commits: a table given a
//! new filter block ([`rewrite_with_filter`]), a log ([`log_writer`]) of version
//! edits ([`version_edit`]).
//!
//! Memory follows the blocks being read, never the file: a table is read through
//! [`ReadAt`] (a file read with `pread`, or bytes already in memory), and a block's
//! size is checked against the file and [`MAX_BLOCK_LEN`] before anything of that
//! size is allocated.

mod block;
mod checksum;
mod encode;
mod filter_block;
mod filter_block_builder;
pub mod internal_key;
pub mod log;
pub mod log_writer;
pub mod manifest;
mod rewrite;
mod source;
mod table;
pub mod version_edit;
pub mod write_batch;

use std::fmt;

pub use block::{each_entry, entries, handle_value, BlockHandle, Entry, INTERNAL_KEY_TAG_LEN};
pub use checksum::masked_crc;
pub(crate) use checksum::unmask;
pub use encode::{block_trailer, put_length_prefixed, put_varint};
pub use filter_block::{FilterBlock, Lookup};
pub use filter_block_builder::{FilterBlockBuilder, FILTER_BASE_LG};
pub use rewrite::{rewrite_with_filter, RewriteError, Rewritten};
pub use source::{open_regular_file, ReadAt};
pub use table::{Table, MAX_BLOCK_LEN};

/// Where a table is broken, and how.
#[derive(Debug)]
pub struct TableError {
    /// The byte offset in the file of what could not be read.
    pub offset: u64,
    pub message: String,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at offset {}: {}", self.offset, self.message)
    }
}

impl std::error::Error for TableError {}

pub(crate) fn error<T>(offset: u64, message: impl Into<String>) -> Result<T, TableError> {
    Err(TableError {
        offset,
        message: message.into(),
    })
}

pub(crate) fn varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *data.get(*pos)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

pub(crate) fn fixed32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        data.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod write_tests;
