//! A table: its footer, and its blocks read one at a time (data blocks a run of
//! neighbours at a time), each checked against its checksum and decompressed; the
//! index sought as a Get seeks it, and the metaindex's filter blocks.

use std::collections::BTreeMap;

use crate::block::{each_entry, each_user_key_of, seek};
use crate::compression::Family;
use crate::error::{corrupt, Error, ErrorKind, Result};
use crate::filter_block::FilterBlock;
use crate::footer::{
    decode_block, decode_block_into, decode_footer, handle_value, verify_trailer, BlockHandle,
    FOOTER_LEN, TRAILER_LEN,
};
use crate::limits::MAX_BLOCK_LEN;
use crate::source::ReadAt;

/// How many bytes of neighbouring data blocks are read at once.
const RUN_LEN: u64 = 1 << 20;
/// The metaindex key of a filter block is this prefix and the policy's name.
pub(crate) const FILTER_PREFIX: &[u8] = b"filter.";
/// The metaindex key of the statistics block Basho's table builder adds.
pub const BASHO_STATS: &[u8] = b"stats.sst1";

/// A table file, read through `source` one block at a time.
pub struct Table<'r, R: ReadAt + ?Sized> {
    source: &'r R,
    file_len: u64,
    metaindex: BlockHandle,
    index: BlockHandle,
    family: Family,
}

impl<'r, R: ReadAt + ?Sized> Table<'r, R> {
    /// Reads the footer: the magic number and the two handles.
    pub fn open(source: &'r R) -> Result<Self> {
        let file_len = source
            .size()
            .map_err(|e| Error::at(0, ErrorKind::Read(e)))?;
        let Some(start) = file_len.checked_sub(FOOTER_LEN as u64) else {
            return corrupt(0, ErrorKind::TooShortForTable { len: file_len });
        };
        let mut footer = [0; FOOTER_LEN];
        source
            .read_exact_at(&mut footer, start)
            .map_err(|e| Error::at(start, ErrorKind::ReadFooter(e)))?;
        let (metaindex, index) = decode_footer(&footer, start)?;
        let mut table = Self {
            source,
            file_len,
            metaindex,
            index,
            family: Family::Leveldb,
        };
        table.family = table.detect_family();
        Ok(table)
    }

    /// Basho's when the metaindex names a `stats.sst1` block (Basho's table builder
    /// always writes one), else LevelDB's. The metaindex is compressed as the data
    /// blocks are: one of type 2 that starts with neither a zstd frame nor a zlib
    /// header (told by its first bytes, no decoder run) can only be Basho's LZ4, and
    /// is read so. A metaindex that cannot be read says LevelDB's: reading it fails
    /// again, with its error, where it is needed.
    fn detect_family(&self) -> Family {
        let metaindex = match self.block_of(self.metaindex, Family::Leveldb) {
            Err(e) if matches!(e.kind(), ErrorKind::CompressionTwoUnrecognised) => {
                self.block_of(self.metaindex, Family::Basho)
            }
            read => read,
        };
        let mut basho = false;
        let _ = metaindex.and_then(|metaindex| {
            each_entry(&metaindex, self.metaindex.offset, |key, _| {
                basho |= key == BASHO_STATS;
                Ok(())
            })
        });
        if basho {
            Family::Basho
        } else {
            Family::Leveldb
        }
    }

    /// The names of the metaindex's entries, filters and others (Basho's
    /// `stats.sst1`), in its order.
    pub fn meta_block_names(&self) -> Result<Vec<Vec<u8>>> {
        let metaindex = self.block(self.metaindex)?;
        let mut names = Vec::new();
        each_entry(&metaindex, self.metaindex.offset, |key, _| {
            names.push(key.to_vec());
            Ok(())
        })?;
        Ok(names)
    }

    /// The file's length in bytes.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// The metaindex block: the filter blocks' names and handles.
    pub fn metaindex(&self) -> BlockHandle {
        self.metaindex
    }

    /// The index block: a separator key at or after each data block's last key, and
    /// the block's handle.
    pub fn index(&self) -> BlockHandle {
        self.index
    }

    /// Whose compression ids the table's blocks use.
    pub fn family(&self) -> Family {
        self.family
    }

    /// A block's contents: checksum verified, decompressed.
    pub fn block(&self, handle: BlockHandle) -> Result<Vec<u8>> {
        self.block_of(handle, self.family)
    }

    /// A block's contents, its compression id read as `family` writes it.
    fn block_of(&self, handle: BlockHandle, family: Family) -> Result<Vec<u8>> {
        let mut raw = Vec::new();
        self.read_run(handle, handle, &mut raw)?;
        let mut contents = Vec::new();
        decode_block(raw, handle, family, &mut contents)?;
        Ok(contents)
    }

    /// A block as stored, its trailer included, once its checksum is verified: what a
    /// copy of the block into another table writes.
    pub(crate) fn raw_block(&self, handle: BlockHandle) -> Result<Vec<u8>> {
        let mut raw = Vec::new();
        self.read_run(handle, handle, &mut raw)?;
        verify_trailer(&raw, handle)?;
        Ok(raw)
    }

    /// The handle of the data block a Get of `lookup` reads (an internal key, as
    /// [`lookup_key`](crate::internal_key::lookup_key) makes it): the first whose
    /// index key is at or after `lookup` in LevelDB's internal-key order (user keys
    /// ascending, then sequence numbers descending), as LevelDB's `Table::InternalGet`
    /// seeks the index. `None` when `lookup` sorts after the table's last block.
    pub fn seek(&self, lookup: &[u8]) -> Result<Option<BlockHandle>> {
        let index = self.block(self.index)?;
        match seek(&index, self.index.offset, lookup)? {
            Some((_, value)) => Ok(Some(handle_value(value, self.index.offset)?)),
            None => Ok(None),
        }
    }

    /// The policy names of the filter blocks the metaindex names (its keys without
    /// `filter.`), in its order.
    pub fn filter_block_names(&self) -> Result<Vec<Vec<u8>>> {
        let mut names = Vec::new();
        self.each_filter_block(|name, _| {
            names.push(name.to_vec());
            Ok(false)
        })?;
        Ok(names)
    }

    /// The first filter block the metaindex names, whatever its policy: the policy's
    /// name and the block's handle.
    pub fn first_filter_block(&self) -> Result<Option<(Vec<u8>, BlockHandle)>> {
        let mut found = None;
        self.each_filter_block(|name, value| {
            found = Some((name.to_vec(), handle_value(value, self.metaindex.offset)?));
            Ok(true)
        })?;
        Ok(found)
    }

    /// The handle of the filter block stored under `filter.` + `policy_name`, if any
    /// (the first, should the metaindex name it twice).
    pub fn filter_block_handle(&self, policy_name: &str) -> Result<Option<BlockHandle>> {
        let mut found = None;
        self.each_filter_block(|name, value| {
            if name != policy_name.as_bytes() {
                return Ok(false);
            }
            found = Some(handle_value(value, self.metaindex.offset)?);
            Ok(true)
        })?;
        Ok(found)
    }

    /// The filter block LevelDB reads with the policy `policy_name` (stored under
    /// `filter.` + the name), if the table has one: LevelDB's `Table::ReadFilter`.
    pub fn filter(&self, policy_name: &str) -> Result<Option<FilterBlock>> {
        match self.filter_block_handle(policy_name)? {
            Some(handle) => Ok(Some(self.read_filter(handle)?)),
            None => Ok(None),
        }
    }

    /// The filter block of `handle`, read and checked against its checksum.
    pub fn read_filter(&self, handle: BlockHandle) -> Result<FilterBlock> {
        Ok(FilterBlock::new(self.block(handle)?, handle.offset))
    }

    /// The user keys (internal keys without their tag) of the data blocks each filter
    /// of `filters` covers, in order, duplicates kept: what the table builder gave
    /// the policy for each filter (of the [reachable](FilterBlock::reachable_count)
    /// ones). Holds every key of the table: for tests and small tables.
    pub fn keys_by_filter(&self, filters: &FilterBlock) -> Result<Vec<Vec<Vec<u8>>>> {
        let mut keys = vec![Vec::new(); filters.reachable_count(self.file_len)];
        self.for_each_data_block(|handle, block| {
            let Some(covering) = keys.get_mut(filters.index_of(handle.offset)) else {
                return Ok(());
            };
            each_user_key_of(block, handle.offset, self.family, |key| {
                covering.push(key.to_vec())
            })
        })?;
        Ok(keys)
    }

    /// Calls `visit` with each data block's handle and contents, in the index's order,
    /// each block once (an index entry naming a block already listed is dropped; one
    /// naming a block that overlaps another, or lies past the file, is an error),
    /// reading neighbouring blocks together (up to a megabyte) and stopping at the
    /// first error, `visit`'s or the table's.
    pub fn for_each_data_block(
        &self,
        mut visit: impl FnMut(BlockHandle, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let handles = self.data_block_handles()?;
        let (mut run, mut contents) = (Vec::new(), Vec::new());
        let mut rest = &handles[..];
        while let Some(&first) = rest.first() {
            // The blocks that follow one another in the file, up to RUN_LEN bytes.
            let mut count = 1;
            while let Some(next) = rest.get(count) {
                let adjacent = rest[count - 1].end() == Some(next.offset);
                if !adjacent || next.end().is_none_or(|end| end - first.offset > RUN_LEN) {
                    break;
                }
                count += 1;
            }
            self.read_run(first, rest[count - 1], &mut run)?;
            for &handle in &rest[..count] {
                let start = (handle.offset - first.offset) as usize;
                let raw = &run[start..start + handle.size as usize + TRAILER_LEN];
                let block = decode_block_into(raw, handle, self.family, &mut contents)?;
                visit(handle, block)?;
            }
            rest = &rest[count..];
        }
        Ok(())
    }

    /// Calls `visit` with the policy name and encoded handle of each filter block
    /// the metaindex names, in its order, until `visit` returns `true`. A handle is
    /// decoded only by the caller that wants it: a bad one elsewhere is no error.
    fn each_filter_block(&self, mut visit: impl FnMut(&[u8], &[u8]) -> Result<bool>) -> Result<()> {
        let metaindex = self.block(self.metaindex)?;
        let mut done = false;
        each_entry(&metaindex, self.metaindex.offset, |key, value| {
            match key.strip_prefix(FILTER_PREFIX) {
                Some(name) if !done => done = visit(name, value)?,
                _ => {}
            }
            Ok(())
        })
    }

    /// The data blocks the index lists, in its order, each once: an entry naming a
    /// block already listed is dropped (its keys are that block's, already counted),
    /// and one whose block overlaps another listed block, or lies past the file, is
    /// an error. LevelDB writes one entry per block, in file order; a crafted index
    /// of millions of entries naming one block so costs a walk of the index, not
    /// millions of reads, and the blocks read add up to at most the file's size.
    fn data_block_handles(&self) -> Result<Vec<BlockHandle>> {
        let index = self.block(self.index)?;
        let mut handles = Vec::new();
        // The listed blocks: offset to end, trailer included.
        let mut listed: BTreeMap<u64, u64> = BTreeMap::new();
        let mut last = None;
        each_entry(&index, self.index.offset, |_, value| {
            let handle = handle_value(value, self.index.offset)?;
            if last == Some(handle) {
                return Ok(());
            }
            let end = self.check_extent(handle)?;
            let before = listed.range(..=handle.offset).next_back();
            let after = listed.range(handle.offset..).next();
            if before.is_some_and(|(&start, &e)| start == handle.offset && e == end) {
                return Ok(());
            }
            let overlaps = before.is_some_and(|(_, &e)| e > handle.offset)
                || after.is_some_and(|(&start, _)| start < end);
            if overlaps {
                let size = handle.size;
                return corrupt(handle.offset, ErrorKind::OverlappingBlock { size });
            }
            listed.insert(handle.offset, end);
            handles.push(handle);
            last = Some(handle);
            Ok(())
        })?;
        Ok(handles)
    }

    /// Where `handle`'s block ends, trailer included, once it is known to lie within
    /// the file and within [`MAX_BLOCK_LEN`].
    fn check_extent(&self, handle: BlockHandle) -> Result<u64> {
        let size = handle.size;
        if size > MAX_BLOCK_LEN {
            return corrupt(handle.offset, ErrorKind::BlockTooLarge { size });
        }
        match handle.end() {
            Some(end) if end <= self.file_len => Ok(end),
            _ => {
                let file_len = self.file_len;
                corrupt(handle.offset, ErrorKind::BlockPastEnd { size, file_len })
            }
        }
    }

    /// Reads the blocks from `first` to `last` (neighbours in the file), trailers
    /// included, into `buf`, once their extent is known to be within the file and
    /// each block within [`MAX_BLOCK_LEN`].
    fn read_run(&self, first: BlockHandle, last: BlockHandle, buf: &mut Vec<u8>) -> Result<()> {
        self.check_extent(first)?;
        let end = self.check_extent(last)?;
        buf.clear();
        buf.resize((end - first.offset) as usize, 0);
        self.source
            .read_exact_at(buf, first.offset)
            .map_err(|e| Error::at(first.offset, ErrorKind::Read(e)))
    }
}
