//! A block's entries: prefix-compressed keys and their values, before the restart
//! array, read without ever indexing past the block.

use crate::coding::{decode_fixed32, get_varint};
use crate::compression::Family;
use crate::error::{corrupt, ErrorKind, Result};
use crate::internal_key::{compare_internal_keys, INTERNAL_KEY_TAG_LEN};

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

/// The first entry of `block` (at `offset`) whose key is at or after `target` in
/// LevelDB's internal-key order (user keys ascending, then sequence numbers
/// descending): what LevelDB's block iterator's `Seek` lands on, its key and value.
/// `None` when every key sorts before `target`. The whole block is decoded, so that
/// a malformed entry after the one found is still an error.
pub(crate) fn seek<'b>(
    block: &'b [u8],
    offset: u64,
    target: &[u8],
) -> Result<Option<(Vec<u8>, &'b [u8])>> {
    let mut found = None;
    each_entry(block, offset, |key, value| {
        if found.is_none() && compare_internal_keys(key, target).is_ge() {
            found = Some((key.to_vec(), value));
        }
        Ok(())
    })?;
    Ok(found)
}

/// Calls `visit` with the user key of each entry of the data block `block` (at
/// `offset`), in order, duplicates kept: what LevelDB's table builder gives the
/// filter policy. A key shorter than its tag is an error.
pub fn each_user_key(block: &[u8], offset: u64, visit: impl FnMut(&[u8])) -> Result<()> {
    each_user_key_of(block, offset, Family::Leveldb, visit)
}

/// [`each_user_key`] for a table of `family`: in Basho's, an entry of value type 2 or
/// 3 (Riak's expiry) has an 8-byte expiry time before its tag, which is no part of
/// its user key (Basho's `KeySuffixSize`).
pub fn each_user_key_of(
    block: &[u8],
    offset: u64,
    family: Family,
    mut visit: impl FnMut(&[u8]),
) -> Result<()> {
    each_entry(block, offset, |key, _| {
        let Some(tag_at) = key.len().checked_sub(INTERNAL_KEY_TAG_LEN) else {
            return corrupt(offset, ErrorKind::KeyWithoutTag);
        };
        let user_key_len = match (family, key[tag_at]) {
            (Family::Basho, BASHO_WRITE_TIME | BASHO_EXPLICIT_EXPIRY) => tag_at
                .checked_sub(BASHO_EXPIRY_LEN)
                .map_or_else(|| corrupt(offset, ErrorKind::KeyWithoutTag), Ok)?,
            _ => tag_at,
        };
        visit(&key[..user_key_len]);
        Ok(())
    })
}

/// Basho's value types whose internal keys carry an expiry time.
const BASHO_WRITE_TIME: u8 = 2;
const BASHO_EXPLICIT_EXPIRY: u8 = 3;
/// The expiry time's length (Basho's `ExpiryTimeMicros`).
const BASHO_EXPIRY_LEN: usize = 8;
