//! A table given new filters without rewriting its data: its data blocks copied byte
//! for byte (they start at offset 0 and follow one another, so their offsets do not
//! move), then a filter block built from their keys as LevelDB's table builder
//! builds it, a metaindex naming it, the index block copied byte for byte, and a
//! footer: the table LevelDB 1.23's `TableBuilder` writes for the same entries with
//! that policy.

use std::io::Write;

use crate::block::each_user_key;
use crate::coding::put_varint;
use crate::compression::Family;
use crate::error::{corrupt, write_all, Error, ErrorKind, Result};
use crate::filter_block_builder::FilterBlockBuilder;
use crate::footer::{block_trailer, encode_footer, BlockHandle, FOOTER_LEN};
use crate::source::ReadAt;
use crate::table::{Table, FILTER_PREFIX};

/// Bytes copied from the old table at a time.
const COPY_LEN: usize = 1 << 20;

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

/// The new table but its data blocks, which are the old table's first
/// [`data_len`](Rewritten::data_len) bytes unchanged: the filter block, the
/// metaindex and the index block, each with its trailer, and the footer.
#[derive(Debug)]
pub struct NewTail {
    pub rewritten: Rewritten,
    /// The bytes that follow the data blocks.
    pub bytes: Vec<u8>,
    /// The keys each filter was made of, by filter index (0 for an empty filter).
    pub keys_per_filter: Vec<usize>,
}

impl NewTail {
    /// The filter block's contents (without its trailer).
    pub fn filter_block(&self) -> &[u8] {
        &self.bytes[..self.rewritten.filter_block_len as usize]
    }
}

/// Writes to `out` the table read from `source` with the filter block `filter_name`
/// (the metaindex key is `filter.` + it) whose filters `create` makes from user keys
/// (the policy's `CreateFilter`): the old table's data blocks copied whatever their
/// compression (Mojang's raw deflate included), then its [`new_tail`]. A table of
/// Basho's LevelDB is refused: its readers take `leveldb.BuiltinBloomFilter2` for
/// Basho's bloom2. An error of kind [`ErrorKind::Write`] is one of writing `out`; any
/// other, of reading the old table.
pub fn rewrite_with_filter<R: ReadAt + ?Sized>(
    source: &R,
    out: &mut impl Write,
    filter_name: &str,
    create: impl FnMut(&[&[u8]], &mut Vec<u8>),
) -> Result<Rewritten> {
    let tail = new_tail(source, filter_name, create)?;
    copy_range(source, tail.rewritten.data_len, out)?;
    write_all(out, &tail.bytes)?;
    Ok(tail.rewritten)
}

/// Reads every data block of the table in `source` (each key decoded once, into
/// the filter of its block) and builds what follows them in the new table.
/// Memory: a data block, the keys of one filter, the filter block and the index
/// block.
pub fn new_tail<R: ReadAt + ?Sized>(
    source: &R,
    filter_name: &str,
    create: impl FnMut(&[&[u8]], &mut Vec<u8>),
) -> Result<NewTail> {
    let table = Table::open(source)?;
    if table.family() == Family::Basho {
        return Err(Error::new(ErrorKind::BashoTable));
    }
    let index = table.raw_block(table.index())?;
    let mut filters = FilterBlockBuilder::new(create);
    filters.start_block(0);
    let (mut data_len, mut entries) = (0u64, 0u64);
    table.for_each_data_block(|handle, block| {
        if handle.offset != data_len {
            let expected = data_len;
            return corrupt(handle.offset, ErrorKind::DataBlockMisplaced { expected });
        }
        each_user_key(block, handle.offset, |key| {
            filters.add_key(key);
            entries += 1;
        })?;
        data_len = handle.end().expect("within the file");
        filters.start_block(data_len);
        Ok(())
    })?;
    let (mut bytes, keys_per_filter) = filters.finish_counted();
    let filter_handle = BlockHandle {
        offset: data_len,
        size: bytes.len() as u64,
    };
    bytes.extend_from_slice(&block_trailer(&bytes, 0));
    let metaindex = metaindex_block(filter_name, filter_handle);
    bytes.extend_from_slice(&metaindex);
    bytes.extend_from_slice(&block_trailer(&metaindex, 0));
    let metaindex_handle = BlockHandle {
        offset: filter_handle.end().expect("small"),
        size: metaindex.len() as u64,
    };
    let index_handle = BlockHandle {
        offset: metaindex_handle.end().expect("small"),
        size: table.index().size,
    };
    bytes.extend_from_slice(&index);
    bytes.extend_from_slice(&encode_footer(metaindex_handle, index_handle));
    Ok(NewTail {
        rewritten: Rewritten {
            size: index_handle.end().expect("small") + FOOTER_LEN as u64,
            data_len,
            entries,
            filter_block_len: filter_handle.size,
        },
        bytes,
        keys_per_filter,
    })
}

/// Copies the first `len` bytes of `source` to `out`, a megabyte at a time.
fn copy_range<R: ReadAt + ?Sized>(source: &R, len: u64, out: &mut impl Write) -> Result<()> {
    let mut buf = vec![0; COPY_LEN.min(len as usize)];
    let mut at = 0;
    while at < len {
        let n = (len - at).min(COPY_LEN as u64) as usize;
        source
            .read_exact_at(&mut buf[..n], at)
            .map_err(|e| Error::at(at, ErrorKind::Read(e)))?;
        write_all(out, &buf[..n])?;
        at += n as u64;
    }
    Ok(())
}

/// The metaindex block of one entry, `filter.<name>` → the filter block's handle, as
/// LevelDB's block builder writes a block of one entry: no shared prefix, one
/// restart point at 0. Stored raw: a block this small never shrinks by the eighth
/// LevelDB asks of compression.
fn metaindex_block(filter_name: &str, filter: BlockHandle) -> Vec<u8> {
    let key = [FILTER_PREFIX, filter_name.as_bytes()].concat();
    let mut value = Vec::new();
    filter.encode_to(&mut value);
    let mut block = Vec::new();
    put_varint(&mut block, 0);
    put_varint(&mut block, key.len() as u64);
    put_varint(&mut block, value.len() as u64);
    block.extend_from_slice(&key);
    block.extend_from_slice(&value);
    block.extend_from_slice(&0u32.to_le_bytes());
    block.extend_from_slice(&1u32.to_le_bytes());
    block
}
