//! Blocks: where one lies in its file (a handle), and its entries: prefix-compressed
//! keys and their values, before the restart array.

use crate::{error, fixed32, varint, TableError};

/// Type byte and masked crc32c after every block.
pub(crate) const TRAILER_LEN: usize = 5;

/// A block's place in the file (its trailer follows it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHandle {
    pub offset: u64,
    pub size: u64,
}

impl BlockHandle {
    /// Decodes a handle (two varint64s) at the start of `data`.
    pub(crate) fn decode(data: &[u8], at: u64) -> Result<(Self, usize), TableError> {
        let mut pos = 0;
        match (varint(data, &mut pos), varint(data, &mut pos)) {
            (Some(offset), Some(size)) => Ok((Self { offset, size }, pos)),
            _ => error(at, "bad block handle"),
        }
    }

    /// The offset just past this block's trailer, if it has one.
    pub fn end(self) -> Option<u64> {
        self.offset
            .checked_add(self.size)?
            .checked_add(TRAILER_LEN as u64)
    }
}

/// The bytes of the internal-key tag (sequence number and type) after a user key.
pub const INTERNAL_KEY_TAG_LEN: usize = 8;

/// A block entry: its whole key and its value.
pub type Entry<'a> = (Vec<u8>, &'a [u8]);

/// Calls `visit` with each entry of `block` in order (`offset` is the block's, for
/// errors), its whole key rebuilt in one buffer reused from entry to entry.
pub fn each_entry<'b>(
    block: &'b [u8],
    offset: u64,
    mut visit: impl FnMut(&[u8], &'b [u8]) -> Result<(), TableError>,
) -> Result<(), TableError> {
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
        let fits = shared <= key.len() as u64
            && unshared
                .checked_add(value_len)
                .and_then(|n| n.checked_add(pos as u64))
                .is_some_and(|n| n <= end as u64);
        if !fits {
            return error(offset, format!("entry at {pos} in the block runs past it"));
        }
        let (shared, unshared, value_len) =
            (shared as usize, unshared as usize, value_len as usize);
        key.truncate(shared);
        key.extend_from_slice(&block[pos..pos + unshared]);
        pos += unshared;
        visit(&key, &block[pos..pos + value_len])?;
        pos += value_len;
    }
    Ok(())
}

/// The entries of a block (`offset` is the block's, for errors), in order.
pub fn entries(block: &[u8], offset: u64) -> Result<Vec<Entry<'_>>, TableError> {
    let mut found = Vec::new();
    each_entry(block, offset, |key, value| {
        found.push((key.to_vec(), value));
        Ok(())
    })?;
    Ok(found)
}

/// Decodes an index or metaindex value: a block handle.
pub fn handle_value(value: &[u8], offset: u64) -> Result<BlockHandle, TableError> {
    BlockHandle::decode(value, offset).map(|(handle, _)| handle)
}
