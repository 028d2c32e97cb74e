//! A block's entries: prefix-compressed keys and their values, before the restart
//! array, read without ever indexing past the block.

use crate::coding::{decode_fixed32, get_varint};
use crate::error::{corrupt, ErrorKind, Result};
use crate::internal_key::INTERNAL_KEY_TAG_LEN;

/// Calls `visit` with each entry of `block` in order (`offset` is the block's, for
/// errors), its whole key rebuilt in one buffer reused from entry to entry.
pub fn each_entry<'b>(
    block: &'b [u8],
    offset: u64,
    mut visit: impl FnMut(&[u8], &'b [u8]) -> Result<()>,
) -> Result<()> {
    let restarts = block
        .len()
        .checked_sub(4)
        .and_then(|at| decode_fixed32(block, at))
        .map(|n| n as usize);
    let end = restarts
        .and_then(|n| n.checked_mul(4)?.checked_add(4))
        .and_then(|trailer| block.len().checked_sub(trailer));
    let Some(end) = end else {
        return corrupt(offset, ErrorKind::NoRestartArray);
    };
    let mut key: Vec<u8> = Vec::new();
    let mut pos = 0;
    while pos < end {
        let header = (
            get_varint(block, &mut pos),
            get_varint(block, &mut pos),
            get_varint(block, &mut pos),
        );
        let (Some(shared), Some(unshared), Some(value_len)) = header else {
            return corrupt(offset, ErrorKind::BadEntryHeader { at: pos });
        };
        let fits = shared <= key.len() as u64
            && unshared
                .checked_add(value_len)
                .and_then(|n| n.checked_add(pos as u64))
                .is_some_and(|n| n <= end as u64);
        if !fits {
            return corrupt(offset, ErrorKind::EntryPastBlock { at: pos });
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

/// Calls `visit` with the user key of each entry of the data block `block` (at
/// `offset`), in order, duplicates kept: what LevelDB's table builder gives the
/// filter policy. A key shorter than its tag is an error.
pub fn each_user_key(block: &[u8], offset: u64, mut visit: impl FnMut(&[u8])) -> Result<()> {
    each_entry(block, offset, |key, _| {
        let Some(user_key_len) = key.len().checked_sub(INTERNAL_KEY_TAG_LEN) else {
            return corrupt(offset, ErrorKind::KeyWithoutTag);
        };
        visit(&key[..user_key_len]);
        Ok(())
    })
}
