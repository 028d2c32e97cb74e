//! The write-ahead log's records: write batches as LevelDB's `WriteBatch` encodes
//! them, a sequence number and a count, then each put (a key and a value) or
//! deletion (a key), the i-th numbered sequence + i.

use crate::coding::{decode_fixed32, decode_fixed64, get_length_prefixed};
use crate::error::{Error, ErrorKind, Result};
use crate::internal_key::EntryKind;

const HEADER_LEN: usize = 12;

/// One put or deletion of a batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchEntry<'a> {
    pub sequence: u64,
    pub kind: EntryKind,
    pub key: &'a [u8],
    pub value: &'a [u8],
}

/// Calls `visit` with each entry of the write batch `record`, in order, as LevelDB's
/// `WriteBatch::Iterate` hands them to the memtable while it parses: entries before
/// a malformed one, or before a count found wrong at the end, have been visited
/// (and stay in LevelDB's memtable) when the error is returned. Holds one entry at
/// a time, however many the record has.
pub fn for_each_batch_entry<'a>(
    record: &'a [u8],
    mut visit: impl FnMut(BatchEntry<'a>),
) -> Result<()> {
    if record.len() < HEADER_LEN {
        return Err(Error::new(ErrorKind::BatchTooShort));
    }
    let sequence = decode_fixed64(record, 0).expect("header");
    let count = decode_fixed32(record, 8).expect("header");
    let mut pos = HEADER_LEN;
    let slice = |pos: &mut usize, deletion| {
        get_length_prefixed(record, pos)
            .ok_or_else(|| Error::new(ErrorKind::BadBatchEntry { deletion }))
    };
    let mut found = 0u64;
    while pos < record.len() {
        let tag = record[pos];
        pos += 1;
        let (kind, key, value) = match tag {
            1 => {
                let key = slice(&mut pos, false)?;
                (EntryKind::Value, key, slice(&mut pos, false)?)
            }
            0 => (EntryKind::Deletion, slice(&mut pos, true)?, &[][..]),
            other => return Err(Error::new(ErrorKind::UnknownBatchTag(other))),
        };
        visit(BatchEntry {
            sequence: sequence.wrapping_add(found),
            kind,
            key,
            value,
        });
        found += 1;
    }
    if found != u64::from(count) {
        return Err(Error::new(ErrorKind::BatchCountMismatch { count, found }));
    }
    Ok(())
}
