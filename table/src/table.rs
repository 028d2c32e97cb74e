//! A table: its footer, and its blocks read one at a time (data blocks a run of
//! neighbours at a time), each checked against its checksum and decompressed.

use std::collections::BTreeMap;
use std::io::Read;

use crate::block::{each_entry, handle_value, BlockHandle, TRAILER_LEN};
use crate::source::ReadAt;
use crate::{error, fixed32, masked_crc, unmask, TableError};

pub(crate) const MAGIC: u64 = 0xdb47_7524_8b80_fb57;
pub(crate) const FOOTER_LEN: usize = 48;
/// The largest block this reader reads, stored or decompressed. LevelDB cuts data
/// blocks at `block_size` (4 KiB by default) and a block exceeds it only by its last
/// entry, so only values of hundreds of megabytes could make one this large; a
/// handle claiming more is reported before anything of its size is allocated.
pub const MAX_BLOCK_LEN: u64 = 256 << 20;
/// How many bytes of neighbouring data blocks are read at once.
const RUN_LEN: u64 = 1 << 20;
/// Snappy's format expands at most 64 bytes per 3-byte copy; a block claiming a
/// larger decompressed size is corrupt, found before allocating it.
const SNAPPY_MAX_EXPANSION: u64 = 22;

/// A table file, read through `source` one block at a time.
pub struct Table<'r, R: ReadAt + ?Sized> {
    source: &'r R,
    len: u64,
    pub metaindex: BlockHandle,
    pub index: BlockHandle,
}

impl<'r, R: ReadAt + ?Sized> Table<'r, R> {
    /// Reads the footer: the magic number and the two handles.
    pub fn open(source: &'r R) -> Result<Self, TableError> {
        let len = source
            .size()
            .or_else(|e| error(0, format!("cannot read: {e}")))?;
        let Some(start) = len.checked_sub(FOOTER_LEN as u64) else {
            return error(0, format!("{len} bytes: too short for a table"));
        };
        let mut footer = [0; FOOTER_LEN];
        source
            .read_exact_at(&mut footer, start)
            .or_else(|e| error(start, format!("cannot read the footer: {e}")))?;
        let magic = u64::from(fixed32(&footer, 40).expect("48 bytes"))
            | u64::from(fixed32(&footer, 44).expect("48 bytes")) << 32;
        if magic != MAGIC {
            return error(start + 40, format!("wrong magic number {magic:#018x}"));
        }
        let (metaindex, used) = BlockHandle::decode(&footer, start)?;
        let (index, _) = BlockHandle::decode(&footer[used..], start)?;
        Ok(Self {
            source,
            len,
            metaindex,
            index,
        })
    }

    /// The file's length in bytes.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the file is empty (never, for an opened table: it has a footer).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A block's contents: checksum verified, decompressed.
    pub fn block(&self, handle: BlockHandle) -> Result<Vec<u8>, TableError> {
        let mut raw = Vec::new();
        self.read_run(handle, handle, &mut raw)?;
        let mut contents = Vec::new();
        decode(raw, handle, &mut contents)?;
        Ok(contents)
    }

    /// A block as stored, its trailer included, once its checksum is verified: what a
    /// copy of the block into another table writes.
    pub fn raw_block(&self, handle: BlockHandle) -> Result<Vec<u8>, TableError> {
        let mut raw = Vec::new();
        self.read_run(handle, handle, &mut raw)?;
        verify(&raw, handle)?;
        Ok(raw)
    }

    /// Calls `visit` with each data block's handle and contents, in the index's order,
    /// each block once (see [`data_block_handles`](Self::data_block_handles)),
    /// reading neighbouring blocks together (up to a megabyte) and stopping at the
    /// first error, `visit`'s or the table's.
    pub fn for_each_data_block(
        &self,
        mut visit: impl FnMut(BlockHandle, &[u8]) -> Result<(), TableError>,
    ) -> Result<(), TableError> {
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
                let block = decode_into(raw, handle, &mut contents)?;
                visit(handle, block)?;
            }
            rest = &rest[count..];
        }
        Ok(())
    }

    /// The data blocks the index lists, in its order, each once: an entry naming a
    /// block already listed is dropped (its keys are that block's, already counted),
    /// and one whose block overlaps another listed block, or lies past the file, is
    /// an error. LevelDB writes one entry per block, in file order; a crafted index
    /// of millions of entries naming one block so costs a walk of the index, not
    /// millions of reads, and the blocks read add up to at most the file's size.
    pub fn data_block_handles(&self) -> Result<Vec<BlockHandle>, TableError> {
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
                return error(
                    handle.offset,
                    format!(
                        "the index lists a block of {} bytes here that overlaps another block it lists",
                        handle.size
                    ),
                );
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
    fn check_extent(&self, handle: BlockHandle) -> Result<u64, TableError> {
        if handle.size > MAX_BLOCK_LEN {
            return error(
                handle.offset,
                format!(
                    "block of {} bytes: larger than any this tool reads ({MAX_BLOCK_LEN})",
                    handle.size
                ),
            );
        }
        match handle.end() {
            Some(end) if end <= self.len => Ok(end),
            _ => error(
                handle.offset,
                format!(
                    "block of {} bytes runs past the end of the file ({} bytes)",
                    handle.size, self.len
                ),
            ),
        }
    }

    /// Reads the blocks from `first` to `last` (neighbours in the file), trailers
    /// included, into `buf`, once their extent is known to be within the file and
    /// each block within [`MAX_BLOCK_LEN`].
    fn read_run(
        &self,
        first: BlockHandle,
        last: BlockHandle,
        buf: &mut Vec<u8>,
    ) -> Result<(), TableError> {
        self.check_extent(first)?;
        let end = self.check_extent(last)?;
        buf.clear();
        buf.resize((end - first.offset) as usize, 0);
        self.source
            .read_exact_at(buf, first.offset)
            .or_else(|e| error(first.offset, format!("cannot read: {e}")))
    }
}

/// A block read with its trailer: its contents once the checksum is verified,
/// decompressed when it was compressed (reusing `raw` when it was not).
fn decode(mut raw: Vec<u8>, handle: BlockHandle, out: &mut Vec<u8>) -> Result<(), TableError> {
    if raw.get(handle.size as usize) == Some(&0) {
        verify(&raw, handle)?;
        raw.truncate(handle.size as usize);
        *out = raw;
        return Ok(());
    }
    decode_into(&raw, handle, out).map(|_| ())
}

/// The contents of `raw` (a block and its trailer): `raw` itself when stored
/// uncompressed, else decompressed into `out`.
pub(crate) fn decode_into<'a>(
    raw: &'a [u8],
    handle: BlockHandle,
    out: &'a mut Vec<u8>,
) -> Result<&'a [u8], TableError> {
    verify(raw, handle)?;
    let (contents, trailer) = raw.split_at(handle.size as usize);
    let at = handle.offset;
    match trailer[0] {
        0 => return Ok(contents),
        1 => {
            let len = snap::raw::decompress_len(contents)
                .or_else(|e| error(at, format!("snappy: {e}")))?;
            let bound = (contents.len() as u64 * SNAPPY_MAX_EXPANSION).min(MAX_BLOCK_LEN);
            if len as u64 > bound {
                return error(at, format!("snappy: claims {len} bytes decompressed"));
            }
            // Grown, never cleared: zeroing what the decoder overwrites costs as much
            // as a good part of decompressing.
            if out.len() < len {
                out.resize(len, 0);
            }
            let written = snap::raw::Decoder::new()
                .decompress(contents, &mut out[..len])
                .or_else(|e| error(at, format!("snappy: {e}")))?;
            return Ok(&out[..written]);
        }
        2 => {
            out.clear();
            zstd::stream::read::Decoder::new(contents)
                .and_then(|decoder| decoder.take(MAX_BLOCK_LEN + 1).read_to_end(out))
                .or_else(|e| error(at, format!("zstd: {e}")))?;
            if out.len() as u64 > MAX_BLOCK_LEN {
                return error(at, "zstd: decompresses past the largest block");
            }
        }
        other => return error(at, format!("unknown compression type {other}")),
    }
    Ok(out)
}

fn verify(raw: &[u8], handle: BlockHandle) -> Result<(), TableError> {
    let (contents, trailer) = raw.split_at(handle.size as usize);
    let stored = unmask(fixed32(trailer, 1).expect("5-byte trailer"));
    let actual = unmask(masked_crc(contents, trailer[0]));
    if stored != actual {
        return error(
            handle.offset,
            format!("checksum mismatch (stored {stored:#010x}, computed {actual:#010x})"),
        );
    }
    Ok(())
}
