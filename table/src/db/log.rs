//! LevelDB's log format, which holds the MANIFEST and the
//! write-ahead log: 32 KiB blocks of records, each with a masked crc32c of its type
//! and payload, its length and its type; a record longer than the rest of a block
//! is split into FIRST, MIDDLE and LAST fragments; a block tail shorter than a header
//! is zeros. Read in memory bounded by a block and the record being assembled.

use std::io::{self, Read};

use crate::checksum::unmask;
use crate::coding::decode_fixed32;
use crate::error::{corrupt, Error, ErrorKind, Result};
use crate::limits::MAX_RECORD_LEN;
use crate::source::open_regular_file;

pub(crate) const BLOCK_LEN: usize = 32 * 1024;
pub(crate) const HEADER_LEN: usize = 7;
const ZERO: u8 = 0;
pub(crate) const FULL: u8 = 1;
pub(crate) const FIRST: u8 = 2;
pub(crate) const MIDDLE: u8 = 3;
pub(crate) const LAST: u8 = 4;

/// A record's fragment: its offset in the file, its type and its payload.
type Fragment<'a> = (u64, u8, &'a [u8]);

/// The records of a log, read from any byte stream.
pub struct LogReader<R> {
    source: R,
    block: Vec<u8>,
    /// Where the unread part of `block` starts, and the file offset of `block`.
    pos: usize,
    block_offset: u64,
    eof: bool,
}

impl<R: Read> LogReader<R> {
    /// A reader of the log `source` holds, from its start.
    pub fn new(source: R) -> Self {
        Self {
            source,
            block: Vec::with_capacity(BLOCK_LEN),
            pos: 0,
            block_offset: 0,
            eof: false,
        }
    }

    /// The next record and its offset, `None` at the end of the log. As LevelDB's
    /// reader, a header or fragment cut short by the end of the file ends the log
    /// without error (a writer that died mid-record); anything else that does not
    /// check out (a checksum, a length past its block, fragments out of order, an
    /// unknown type) is an error, as it is when LevelDB recovers a MANIFEST.
    pub fn next_record(&mut self) -> Result<Option<(u64, Vec<u8>)>> {
        let mut record: Option<(u64, Vec<u8>)> = None;
        loop {
            let Some((offset, kind, fragment)) = self.next_fragment()? else {
                return Ok(None);
            };
            match (kind, record.as_mut()) {
                (FULL, None) => return Ok(Some((offset, fragment.to_vec()))),
                (FIRST, None) => record = Some((offset, fragment.to_vec())),
                (MIDDLE | LAST, Some((_, assembled))) => {
                    if assembled.len() + fragment.len() > MAX_RECORD_LEN {
                        return corrupt(offset, ErrorKind::RecordTooLong);
                    }
                    assembled.extend_from_slice(fragment);
                    if kind == LAST {
                        return Ok(record);
                    }
                }
                (FULL | FIRST, Some(_)) => return corrupt(offset, ErrorKind::PartialRecord),
                (MIDDLE | LAST, None) => return corrupt(offset, ErrorKind::MissingRecordStart),
                (other, _) => return corrupt(offset, ErrorKind::UnknownRecordType(other)),
            }
        }
    }

    /// The next fragment: its offset, type and payload; `None` at the end.
    fn next_fragment(&mut self) -> Result<Option<Fragment<'_>>> {
        loop {
            if self.block.len() - self.pos < HEADER_LEN {
                if self.eof || !self.read_block()? {
                    return Ok(None);
                }
                continue;
            }
            let offset = self.block_offset + self.pos as u64;
            let header = &self.block[self.pos..self.pos + HEADER_LEN];
            let stored = unmask(decode_fixed32(header, 0).expect("7-byte header"));
            let len = usize::from(u16::from_le_bytes([header[4], header[5]]));
            let kind = header[6];
            let start = self.pos + HEADER_LEN;
            if start + len > self.block.len() {
                if self.eof {
                    // The writer died in the middle of this record.
                    return Ok(None);
                }
                return corrupt(offset, ErrorKind::BadRecordLength);
            }
            self.pos = start + len;
            if kind == ZERO && len == 0 {
                // Preallocated space the mmap writer of old versions left.
                continue;
            }
            let payload = &self.block[start..start + len];
            let actual = crc32c::crc32c_append(crc32c::crc32c(&[kind]), payload);
            if actual != stored {
                return corrupt(offset, ErrorKind::RecordChecksum);
            }
            return Ok(Some((offset, kind, payload)));
        }
    }

    /// Reads the next block; `false` at the end of the file.
    fn read_block(&mut self) -> Result<bool> {
        self.block_offset += self.block.len() as u64;
        self.block.clear();
        self.pos = 0;
        let read = (&mut self.source)
            .take(BLOCK_LEN as u64)
            .read_to_end(&mut self.block)
            .map_err(|e| Error::at(self.block_offset, ErrorKind::Read(e)))?;
        if read < BLOCK_LEN {
            self.eof = true;
        }
        Ok(read > 0)
    }
}

/// A log read from a file that may be anything: see [`open_regular_file`].
pub fn open_log(path: &std::path::Path) -> io::Result<LogReader<io::BufReader<std::fs::File>>> {
    open_regular_file(path).map(read_log)
}

/// A log read from `file`, opened by the caller, a block at a time.
pub fn read_log(file: std::fs::File) -> LogReader<io::BufReader<std::fs::File>> {
    LogReader::new(io::BufReader::with_capacity(BLOCK_LEN, file))
}
