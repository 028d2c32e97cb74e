//! Version edits, written as LevelDB's `VersionEdit::EncodeTo` writes them, and the snapshot of a whole version that starts a new
//! MANIFEST (`VersionSet::WriteSnapshot`, with the numbers `LogAndApply` adds).

use crate::coding::{put_length_prefixed, put_varint};
use crate::db::manifest::{LiveTable, Version, VersionEdit};

impl VersionEdit {
    /// The record's bytes: each field present, tagged, in LevelDB's order.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(name) = &self.comparator {
            put_varint(&mut out, 1);
            put_length_prefixed(&mut out, name);
        }
        for (tag, number) in [
            (2, self.log_number),
            (9, self.prev_log_number),
            (3, self.next_file),
            (4, self.last_sequence),
        ] {
            if let Some(number) = number {
                put_varint(&mut out, tag);
                put_varint(&mut out, number);
            }
        }
        for (level, key) in &self.compact_pointers {
            put_varint(&mut out, 5);
            put_varint(&mut out, *level as u64);
            put_length_prefixed(&mut out, &key.0);
        }
        for &(level, number) in &self.deleted {
            put_varint(&mut out, 6);
            put_varint(&mut out, level as u64);
            put_varint(&mut out, number);
        }
        for table in &self.added {
            put_varint(&mut out, 7);
            put_varint(&mut out, table.level as u64);
            put_varint(&mut out, table.number);
            put_varint(&mut out, table.size);
            put_length_prefixed(&mut out, &table.smallest.0);
            put_length_prefixed(&mut out, &table.largest.0);
        }
        out
    }
}

impl Version {
    /// The one edit a new MANIFEST starts with to hold this version, with `tables`
    /// for its live tables (each at its level) and `next_file` for the next file
    /// number: comparator, log numbers, last sequence, compaction pointers, files.
    pub fn snapshot(&self, tables: Vec<LiveTable>, next_file: u64) -> VersionEdit {
        VersionEdit {
            comparator: self.comparator.clone(),
            log_number: Some(self.log_number),
            prev_log_number: Some(self.prev_log_number),
            next_file: Some(next_file),
            last_sequence: Some(self.last_sequence),
            compact_pointers: (self.compact_pointers.iter().enumerate())
                .filter_map(|(level, key)| Some((level, key.clone()?)))
                .collect(),
            deleted: Vec::new(),
            added: tables,
        }
    }
}
