//! The write-ahead log's records: write batches (db/write_batch.cc), a sequence
//! number and a count, then each put (a key and a value) or deletion (a key), the
//! i-th numbered sequence + i.

use crate::internal_key::EntryKind;
use crate::{fixed32, varint};

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
) -> Result<(), String> {
    if record.len() < HEADER_LEN {
        return Err("write batch shorter than its header".into());
    }
    let sequence = u64::from(fixed32(record, 0).expect("header"))
        | u64::from(fixed32(record, 4).expect("header")) << 32;
    let count = fixed32(record, 8).expect("header");
    let mut pos = HEADER_LEN;
    let slice = |pos: &mut usize| -> Option<&'a [u8]> {
        let len = usize::try_from(varint(record, pos)?).ok()?;
        let bytes = record.get(*pos..pos.checked_add(len)?)?;
        *pos += len;
        Some(bytes)
    };
    let mut found = 0u64;
    while pos < record.len() {
        let tag = record[pos];
        pos += 1;
        let (kind, key, value) = match tag {
            1 => {
                let key = slice(&mut pos).ok_or("bad put")?;
                (EntryKind::Value, key, slice(&mut pos).ok_or("bad put")?)
            }
            0 => (
                EntryKind::Deletion,
                slice(&mut pos).ok_or("bad deletion")?,
                &[][..],
            ),
            other => return Err(format!("unknown write batch tag {other}")),
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
        return Err(format!("write batch counts {count} entries, holds {found}"));
    }
    Ok(())
}
