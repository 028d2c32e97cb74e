//! A table given new filters without rewriting its data: its data blocks copied byte
//! for byte (they start at offset 0 and follow one another, so their offsets do not
//! move), then a filter block built from their keys as LevelDB's table builder
//! builds it, a metaindex naming it, the index block copied byte for byte, and a
//! footer: the table LevelDB 1.23 writes for the same entries with that policy
//! (table/table_builder.cc).

use std::io::{self, Write};

use crate::block::{each_entry, BlockHandle, INTERNAL_KEY_TAG_LEN};
use crate::encode::{block_trailer, put_varint};
use crate::filter_block_builder::FilterBlockBuilder;
use crate::source::ReadAt;
use crate::table::{Table, FOOTER_LEN, MAGIC};
use crate::{error, TableError};

/// Bytes copied from the old table at a time.
const COPY_LEN: usize = 1 << 20;

/// Why a table could not be given new filters.
#[derive(Debug)]
pub enum RewriteError {
    /// The old table could not be read completely, or is not laid out as LevelDB
    /// lays tables out.
    Read(TableError),
    /// The new table could not be written.
    Write(io::Error),
}

impl std::fmt::Display for RewriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Read(e) => write!(f, "reading the table: {e}"),
            Self::Write(e) => write!(f, "writing the new table: {e}"),
        }
    }
}

impl std::error::Error for RewriteError {}

impl From<TableError> for RewriteError {
    fn from(e: TableError) -> Self {
        Self::Read(e)
    }
}

impl From<io::Error> for RewriteError {
    fn from(e: io::Error) -> Self {
        Self::Write(e)
    }
}

/// What was written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rewritten {
    /// The new table's length in bytes.
    pub size: u64,
    /// The bytes of data blocks copied (the new filter block starts there).
    pub data_len: u64,
    /// Entries of the data blocks (each given to the filter as its user key).
    pub entries: u64,
    /// The filter block's length, its offset array and base included.
    pub filter_block_len: u64,
}

/// Writes to `out` the table read from `source` with the filter block `filter_name`
/// (the metaindex key is `filter.` + it) whose filters `create` makes from user keys
/// (the policy's `CreateFilter`). Memory: a data block, the keys of one filter and
/// the filter block being built.
pub fn rewrite_with_filter<R: ReadAt + ?Sized>(
    source: &R,
    out: &mut impl Write,
    filter_name: &str,
    create: impl FnMut(&[&[u8]], &mut Vec<u8>),
) -> Result<Rewritten, RewriteError> {
    let table = Table::open(source)?;
    let index = table.raw_block(table.index)?;
    let mut filters = FilterBlockBuilder::new(create);
    filters.start_block(0);
    let (mut data_len, mut entries) = (0u64, 0u64);
    table.for_each_data_block(|handle, block| {
        if handle.offset != data_len {
            return error(
                handle.offset,
                format!("data block not where the one before it ends ({data_len}): not a table LevelDB laid out"),
            );
        }
        each_entry(block, handle.offset, |key, _| {
            let Some(user_key_len) = key.len().checked_sub(INTERNAL_KEY_TAG_LEN) else {
                return error(handle.offset, "a key shorter than its 8-byte tag");
            };
            filters.add_key(&key[..user_key_len]);
            entries += 1;
            Ok(())
        })?;
        data_len = handle.end().expect("within the file");
        filters.start_block(data_len);
        Ok(())
    })?;
    copy_range(source, data_len, out)?;
    let (filter_block, filter_trailer) = filters.finish_with_trailer();
    out.write_all(&filter_block)?;
    out.write_all(&filter_trailer)?;
    let filter_handle = BlockHandle {
        offset: data_len,
        size: filter_block.len() as u64,
    };
    let metaindex = metaindex_block(filter_name, filter_handle);
    out.write_all(&metaindex)?;
    out.write_all(&block_trailer(&metaindex, 0))?;
    let metaindex_handle = BlockHandle {
        offset: filter_handle.end().expect("small"),
        size: metaindex.len() as u64,
    };
    let index_handle = BlockHandle {
        offset: metaindex_handle.end().expect("small"),
        size: table.index.size,
    };
    out.write_all(&index)?;
    out.write_all(&footer(metaindex_handle, index_handle))?;
    Ok(Rewritten {
        size: index_handle.end().expect("small") + FOOTER_LEN as u64,
        data_len,
        entries,
        filter_block_len: filter_block.len() as u64,
    })
}

/// Copies the first `len` bytes of `source` to `out`, a megabyte at a time.
fn copy_range<R: ReadAt + ?Sized>(
    source: &R,
    len: u64,
    out: &mut impl Write,
) -> Result<(), RewriteError> {
    let mut buf = vec![0; COPY_LEN.min(len as usize)];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(COPY_LEN as u64) as usize;
        source
            .read_exact_at(&mut buf[..n], at)
            .or_else(|e| error(at, format!("cannot read: {e}")))?;
        out.write_all(&buf[..n])?;
        at += n as u64;
    }
    Ok(())
}

/// The metaindex block of one entry, `filter.<name>` → the filter block's handle, as
/// LevelDB's block builder writes a block of one entry: no shared prefix, one
/// restart point at 0. Stored raw: a block this small never shrinks by the eighth
/// LevelDB asks of compression.
fn metaindex_block(filter_name: &str, filter: BlockHandle) -> Vec<u8> {
    let key = format!("filter.{filter_name}");
    let mut value = Vec::new();
    filter.encode_to(&mut value);
    let mut block = Vec::new();
    put_varint(&mut block, 0);
    put_varint(&mut block, key.len() as u64);
    put_varint(&mut block, value.len() as u64);
    block.extend_from_slice(key.as_bytes());
    block.extend_from_slice(&value);
    block.extend_from_slice(&0u32.to_le_bytes());
    block.extend_from_slice(&1u32.to_le_bytes());
    block
}

/// The 48-byte footer: both handles, zero padding to 40 bytes, the magic number.
fn footer(metaindex: BlockHandle, index: BlockHandle) -> Vec<u8> {
    let mut footer = Vec::with_capacity(FOOTER_LEN);
    metaindex.encode_to(&mut footer);
    index.encode_to(&mut footer);
    footer.resize(FOOTER_LEN - 8, 0);
    footer.extend_from_slice(&MAGIC.to_le_bytes());
    footer
}
