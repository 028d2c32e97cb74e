//! LevelDB's log format, written as its `log::Writer` writes it: records cut into fragments that
//! fit the 32 KiB blocks, each behind a 7-byte header (masked crc32c of its type and
//! payload, length, type); a block tail too short for a header is zero-filled.

use std::io::Write;

use crate::checksum::mask;
use crate::db::log::{BLOCK_LEN, FIRST, FULL, HEADER_LEN, LAST, MIDDLE};
use crate::error::{write_all, Result};

/// Writes records to `dest`, a log starting empty.
pub struct LogWriter<W> {
    dest: W,
    /// Where in its block the next header goes.
    block_offset: usize,
}

impl<W: Write> LogWriter<W> {
    pub fn new(dest: W) -> Self {
        Self {
            dest,
            block_offset: 0,
        }
    }

    /// Appends one record (LevelDB's `AddRecord`): an empty one still gets a header.
    /// An error is of kind [`ErrorKind::Write`](crate::ErrorKind::Write).
    pub fn add_record(&mut self, record: &[u8]) -> Result<()> {
        let mut rest = record;
        let mut begin = true;
        loop {
            let leftover = BLOCK_LEN - self.block_offset;
            if leftover < HEADER_LEN {
                write_all(&mut self.dest, &[0; HEADER_LEN][..leftover])?;
                self.block_offset = 0;
            }
            let available = BLOCK_LEN - self.block_offset - HEADER_LEN;
            let (fragment, after) = rest.split_at(rest.len().min(available));
            let end = after.is_empty();
            let kind = match (begin, end) {
                (true, true) => FULL,
                (true, false) => FIRST,
                (false, true) => LAST,
                (false, false) => MIDDLE,
            };
            self.emit(kind, fragment)?;
            (rest, begin) = (after, false);
            if end {
                return Ok(());
            }
        }
    }

    /// The destination, to flush and sync.
    pub fn into_inner(self) -> W {
        self.dest
    }

    fn emit(&mut self, kind: u8, fragment: &[u8]) -> Result<()> {
        let crc = mask(crc32c::crc32c_append(crc32c::crc32c(&[kind]), fragment));
        let mut header = [0; HEADER_LEN];
        header[..4].copy_from_slice(&crc.to_le_bytes());
        header[4..6].copy_from_slice(&(fragment.len() as u16).to_le_bytes());
        header[6] = kind;
        write_all(&mut self.dest, &header)?;
        write_all(&mut self.dest, fragment)?;
        self.block_offset += HEADER_LEN + fragment.len();
        Ok(())
    }
}
