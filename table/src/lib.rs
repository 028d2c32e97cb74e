//! Reading a LevelDB table file without LevelDB (LevelDB's doc/table_format.md):
//! the footer, blocks with their checksums and compression, block entries, the
//! filter block, and the keys each filter covers. The one reader of tables of the
//! workspace: the tool and every test that reads tables use it.

use std::borrow::Cow;
use std::fmt;

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

fn error<T>(offset: u64, message: impl Into<String>) -> Result<T, TableError> {
    Err(TableError {
        offset,
        message: message.into(),
    })
}

const MAGIC: u64 = 0xdb47_7524_8b80_fb57;
const FOOTER_LEN: usize = 48;
/// Type byte and masked crc32c after every block.
const TRAILER_LEN: usize = 5;

/// A block's place in the file (its trailer follows it).
#[derive(Clone, Copy, Debug)]
pub struct BlockHandle {
    pub offset: u64,
    pub size: u64,
}

impl BlockHandle {
    /// Decodes a handle (two varint64s) at the start of `data`.
    fn decode(data: &[u8], at: u64) -> Result<(Self, usize), TableError> {
        let mut pos = 0;
        match (varint(data, &mut pos), varint(data, &mut pos)) {
            (Some(offset), Some(size)) => Ok((Self { offset, size }, pos)),
            _ => error(at, "bad block handle"),
        }
    }
}

fn varint(data: &[u8], pos: &mut usize) -> Option<u64> {
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

fn fixed32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
}

/// A whole table file in memory.
pub struct Table<'a> {
    data: &'a [u8],
    pub metaindex: BlockHandle,
    pub index: BlockHandle,
}

impl<'a> Table<'a> {
    /// Reads the footer: the magic number and the two handles.
    pub fn open(data: &'a [u8]) -> Result<Self, TableError> {
        let Some(start) = data.len().checked_sub(FOOTER_LEN) else {
            return error(0, format!("{} bytes: too short for a table", data.len()));
        };
        let footer = &data[start..];
        let magic = u64::from(fixed32(footer, 40).unwrap_or(0))
            | u64::from(fixed32(footer, 44).unwrap_or(0)) << 32;
        if magic != MAGIC {
            return error(
                start as u64 + 40,
                format!("wrong magic number {magic:#018x}"),
            );
        }
        let (metaindex, used) = BlockHandle::decode(footer, start as u64)?;
        let (index, _) = BlockHandle::decode(&footer[used..], start as u64)?;
        Ok(Self {
            data,
            metaindex,
            index,
        })
    }

    /// A block's contents: checksum verified, decompressed.
    pub fn block(&self, handle: BlockHandle) -> Result<Cow<'a, [u8]>, TableError> {
        let at = handle.offset;
        let range = usize::try_from(handle.offset)
            .ok()
            .zip(usize::try_from(handle.size).ok())
            .and_then(|(start, size)| Some(start..start.checked_add(size)?))
            .filter(|range| range.end.saturating_add(TRAILER_LEN) <= self.data.len());
        let Some(range) = range else {
            return error(
                at,
                format!("block of {} bytes runs past the end", handle.size),
            );
        };
        let contents = &self.data[range.clone()];
        let trailer = &self.data[range.end..range.end + TRAILER_LEN];
        let stored = unmask(fixed32(trailer, 1).expect("5-byte trailer"));
        let actual = unmask(masked_crc(contents, trailer[0]));
        if stored != actual {
            return error(
                at,
                format!("checksum mismatch (stored {stored:#010x}, computed {actual:#010x})"),
            );
        }
        match trailer[0] {
            0 => Ok(Cow::Borrowed(contents)),
            1 => snap::raw::Decoder::new()
                .decompress_vec(contents)
                .map(Cow::Owned)
                .or_else(|e| error(at, format!("snappy: {e}"))),
            2 => zstd::stream::decode_all(contents)
                .map(Cow::Owned)
                .or_else(|e| error(at, format!("zstd: {e}"))),
            other => error(at, format!("unknown compression type {other}")),
        }
    }
}

/// The checksum LevelDB stores after a block: the crc32c of its contents and its
/// type byte, masked.
pub fn masked_crc(contents: &[u8], block_type: u8) -> u32 {
    mask(crc32c::crc32c_append(
        crc32c::crc32c(contents),
        &[block_type],
    ))
}

/// LevelDB stores crc32c values masked, so that checksums of data holding
/// checksums stay well distributed.
fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

const MASK_DELTA: u32 = 0xa282_ead8;

/// The bytes of the internal-key tag (sequence number and type) after a user key.
pub const INTERNAL_KEY_TAG_LEN: usize = 8;

impl<'a> Table<'a> {
    /// The handle of the filter block stored under `filter.` + `policy_name`, if any.
    pub fn filter_block_handle(
        &self,
        policy_name: &str,
    ) -> Result<Option<BlockHandle>, TableError> {
        let metaindex = self.block(self.metaindex)?;
        let key = format!("filter.{policy_name}");
        entries(&metaindex, self.metaindex.offset)?
            .into_iter()
            .find(|(name, _)| *name == key.as_bytes())
            .map(|(_, value)| handle_value(value, self.metaindex.offset))
            .transpose()
    }

    /// The user keys (internal keys without their tag) of the data blocks each filter
    /// of `filters` covers, in order, duplicates kept: what the table builder gave
    /// the policy for each filter.
    pub fn keys_by_filter(
        &self,
        filters: &FilterBlock<'_>,
    ) -> Result<Vec<Vec<Vec<u8>>>, TableError> {
        let mut keys = vec![Vec::new(); filters.count()];
        let index = self.block(self.index)?;
        for (_, value) in entries(&index, self.index.offset)? {
            let handle = handle_value(value, self.index.offset)?;
            let block = self.block(handle)?;
            let Some(covering) = keys.get_mut(filters.index_of(handle.offset)) else {
                continue;
            };
            for (key, _) in entries(&block, handle.offset)? {
                let Some(user_key_len) = key.len().checked_sub(INTERNAL_KEY_TAG_LEN) else {
                    return error(handle.offset, "a key shorter than its 8-byte tag");
                };
                covering.push(key[..user_key_len].to_vec());
            }
        }
        Ok(keys)
    }
}

/// A block entry: its whole key and its value.
pub type Entry<'a> = (Vec<u8>, &'a [u8]);

/// The entries of a block (`offset` is the block's, for errors): prefix-compressed
/// keys and their values, in order.
pub fn entries(block: &[u8], offset: u64) -> Result<Vec<Entry<'_>>, TableError> {
    let restarts = block
        .len()
        .checked_sub(4)
        .and_then(|at| fixed32(block, at))
        .map(|n| n as usize);
    let end = restarts
        .and_then(|n| n.checked_mul(4)?.checked_add(4))
        .and_then(|trailer| block.len().checked_sub(trailer));
    let Some(end) = end else {
        return error(offset, "block too short for its restart array");
    };
    let mut entries = Vec::new();
    let mut key: Vec<u8> = Vec::new();
    let mut pos = 0;
    while pos < end {
        let header = (
            varint(block, &mut pos),
            varint(block, &mut pos),
            varint(block, &mut pos),
        );
        let (Some(shared), Some(unshared), Some(value_len)) = header else {
            return error(offset, format!("bad entry header at {pos} in the block"));
        };
        let (shared, unshared, value_len) =
            (shared as usize, unshared as usize, value_len as usize);
        let fits = shared <= key.len()
            && unshared
                .checked_add(value_len)
                .and_then(|n| n.checked_add(pos))
                .is_some_and(|n| n <= end);
        if !fits {
            return error(offset, format!("entry at {pos} in the block runs past it"));
        }
        key.truncate(shared);
        key.extend_from_slice(&block[pos..pos + unshared]);
        pos += unshared;
        entries.push((key.clone(), &block[pos..pos + value_len]));
        pos += value_len;
    }
    Ok(entries)
}

/// Decodes an index or metaindex value: a block handle.
pub fn handle_value(value: &[u8], offset: u64) -> Result<BlockHandle, TableError> {
    BlockHandle::decode(value, offset).map(|(handle, _)| handle)
}

/// A filter block: one filter per `2^base_lg` bytes of data-block offsets.
pub struct FilterBlock<'a> {
    data: &'a [u8],
    offsets: &'a [u8],
    array_offset: usize,
    pub base_lg: u8,
}

impl<'a> FilterBlock<'a> {
    pub fn parse(data: &'a [u8], offset: u64) -> Result<Self, TableError> {
        let n = data.len();
        if n < 5 {
            return error(offset, "filter block shorter than 5 bytes");
        }
        let array_offset = fixed32(data, n - 5).expect("checked") as usize;
        if array_offset > n - 5 {
            return error(offset, "filter block's offset array starts past its end");
        }
        Ok(Self {
            data,
            offsets: &data[array_offset..n - 1],
            array_offset,
            base_lg: data[n - 1],
        })
    }

    /// How many filters the block holds.
    pub fn count(&self) -> usize {
        (self.offsets.len() - 4) / 4
    }

    /// Filter `i` as LevelDB's reader takes it: `None` where it would answer "may
    /// match" without a filter (no such filter, or bad offsets).
    pub fn filter(&self, i: usize) -> Option<&'a [u8]> {
        if i >= self.count() {
            return None;
        }
        let start = fixed32(self.offsets, 4 * i)? as usize;
        let limit = fixed32(self.offsets, 4 * i + 4)? as usize;
        (start <= limit && limit <= self.array_offset).then(|| &self.data[start..limit])
    }

    /// The filter that covers the data block starting at `offset`.
    pub fn index_of(&self, offset: u64) -> usize {
        usize::try_from(offset.checked_shr(u32::from(self.base_lg)).unwrap_or(0))
            .unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
mod tests;
