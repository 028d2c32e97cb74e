//! The crate's one error: what is wrong ([`ErrorKind`]), where in the file (a byte
//! offset, when one is known) and, for a database's `CURRENT` and MANIFEST, which
//! file. Its text is self-contained (`source` gives nothing), so that a chain of
//! contexts printed with `{:#}` says each cause once.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::excerpt::excerpt;
use crate::limits::{MAX_BLOCK_LEN, MAX_RECORD_LEN};

/// Why a table, log, MANIFEST or write batch could not be read (or a table written).
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    offset: Option<u64>,
    file: Option<PathBuf>,
}

/// What the LevelDB family means by each compression id, for the error of an id
/// this reader does not know.
pub const KNOWN_IDS: &str = "0 none, 1 snappy, 2 zstd (upstream LevelDB after 1.23, Mojang's later fork), \
zlib (Mojang's first fork) or LZ4 (Basho's), 3 zstd (Mojang's), 4 raw deflate (Mojang's: Minecraft Bedrock)";

/// The crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong. The text of each kind is the message the tool prints.
#[derive(Debug)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A file could not be opened or read whole (`CURRENT`, a MANIFEST).
    Open(io::Error),
    /// Bytes could not be read at the error's offset.
    Read(io::Error),
    /// A table's footer could not be read.
    ReadFooter(io::Error),
    /// A new table or log could not be written.
    Write(io::Error),
    /// A file shorter than a table's footer.
    TooShortForTable { len: u64 },
    /// The footer ends with something other than LevelDB's table magic number.
    BadMagic(u64),
    /// A block handle (two varints) cut short or overlong.
    BadBlockHandle,
    /// An index entry naming a block that overlaps another block the index names.
    OverlappingBlock { size: u64 },
    /// A block larger than [`MAX_BLOCK_LEN`].
    BlockTooLarge { size: u64 },
    /// A block, with its trailer, past the end of the file.
    BlockPastEnd { size: u64, file_len: u64 },
    /// The checksum in a block's trailer is not that of the block.
    BlockChecksum { stored: u32, computed: u32 },
    /// A block's compression type byte names no compression any of the LevelDB
    /// family writes ([`KNOWN_IDS`] says what they mean).
    UnknownCompression(u8),
    /// A block of compression type 2 starting with neither a zstd frame's magic
    /// number nor a zlib header, in a table that is not Basho's.
    CompressionTwoUnrecognised,
    /// Snappy could not decompress the block.
    Snappy(snap::Error),
    /// Snappy's header claims more bytes than the block can expand to.
    SnappyTooLarge { len: usize },
    /// zstd, zlib or raw deflate (the codec's name) could not decompress the block.
    Decompress {
        codec: &'static str,
        error: io::Error,
    },
    /// The block decompresses past [`MAX_BLOCK_LEN`].
    DecompressTooLarge { codec: &'static str },
    /// Basho's LZ4 block: its length prefix is missing, larger than its bytes can
    /// expand to, or not what the block decompresses to.
    Lz4Length,
    /// A table of Basho's LevelDB given to refilter: its filter name means Basho's
    /// bloom2 to Basho's readers, which another filter under it would mislead.
    BashoTable,
    /// A block shorter than its restart array says.
    NoRestartArray,
    /// An entry's three varints (shared, unshared, value length) cut short; `at`
    /// is the entry's position in the block.
    BadEntryHeader { at: usize },
    /// An entry whose key or value runs past the block's entries.
    EntryPastBlock { at: usize },
    /// A data block's key shorter than the internal key's tag.
    KeyWithoutTag,
    /// A filter block shorter than its offset array's offset and base.
    FilterBlockTooShort,
    /// A filter block whose offset array would start past its end.
    FilterArrayPastEnd,
    /// A data block not where the one before it ends: not a table LevelDB laid out.
    DataBlockMisplaced { expected: u64 },
    /// A log record assembled past [`MAX_RECORD_LEN`].
    RecordTooLong,
    /// A log record's first fragment followed by another first or full one.
    PartialRecord,
    /// A log record's middle or last fragment with no first before it.
    MissingRecordStart,
    /// A log fragment type byte that is none of LevelDB's.
    UnknownRecordType(u8),
    /// A log fragment longer than what is left of its block.
    BadRecordLength,
    /// A log fragment's checksum is not that of its type and payload.
    RecordChecksum,
    /// `CURRENT` does not end with a newline, or names nothing.
    CurrentWithoutNewline,
    /// `CURRENT` is a symlink whose contents (shown only by length, for they may
    /// be another file's) name no MANIFEST.
    CurrentSymlinkNotManifest { len: usize },
    /// `CURRENT` names something other than a MANIFEST of its directory.
    CurrentNamesNoManifest(Vec<u8>),
    /// A version edit's field cut short or malformed.
    BadEditField(&'static str),
    /// A version edit's level at or past LevelDB's number of levels.
    EditLevelOutOfRange { field: &'static str, level: u64 },
    /// A version edit's tag that is none of LevelDB's.
    UnknownEditTag(u64),
    /// A MANIFEST with no edit giving this number ("next-file", "log-number",
    /// "last-sequence"), which LevelDB requires.
    MissingManifestEntry(&'static str),
    /// A write batch shorter than its 12-byte header.
    BatchTooShort,
    /// A write batch's put or deletion cut short.
    BadBatchEntry { deletion: bool },
    /// A write batch entry's tag that is neither a put nor a deletion.
    UnknownBatchTag(u8),
    /// A write batch holding another number of entries than its header counts.
    BatchCountMismatch { count: u32, found: u64 },
}

impl Error {
    /// An error of `kind` at no particular place.
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Self {
            kind,
            offset: None,
            file: None,
        }
    }

    /// An error of `kind` at byte `offset` of its file.
    pub(crate) fn at(offset: u64, kind: ErrorKind) -> Self {
        Self::new(kind).with_offset(offset)
    }

    pub(crate) fn with_offset(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }

    pub(crate) fn in_file(mut self, file: &Path) -> Self {
        self.file = Some(file.to_path_buf());
        self
    }

    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The byte offset in the file of what could not be read, when known.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }

    /// The file at fault, for the errors of a database's `CURRENT` and MANIFEST.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }
}

/// `Err` of an error of `kind` at `offset`.
pub(crate) fn corrupt<T>(offset: u64, kind: ErrorKind) -> Result<T> {
    Err(Error::at(offset, kind))
}

/// Writes `bytes` to `out`; an error is of kind [`ErrorKind::Write`].
pub(crate) fn write_all(out: &mut impl io::Write, bytes: &[u8]) -> Result<()> {
    out.write_all(bytes)
        .map_err(|e| Error::new(ErrorKind::Write(e)))
}

/// `FILE at offset N: what`, each part when known.
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut place = self
            .file
            .as_ref()
            .map(|file| file.display().to_string())
            .unwrap_or_default();
        if let Some(offset) = self.offset {
            let space = if place.is_empty() { "" } else { " " };
            place = format!("{place}{space}at offset {offset}");
        }
        if !place.is_empty() {
            write!(f, "{place}: ")?;
        }
        write!(f, "{}", self.kind)
    }
}

impl std::error::Error for Error {}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use ErrorKind::*;
        match self {
            Open(e) | Write(e) => write!(f, "{e}"),
            Read(e) => write!(f, "cannot read: {e}"),
            ReadFooter(e) => write!(f, "cannot read the footer: {e}"),
            TooShortForTable { len } => write!(f, "{len} bytes: too short for a table"),
            BadMagic(magic) => write!(f, "wrong magic number {magic:#018x}"),
            BadBlockHandle => write!(f, "bad block handle"),
            OverlappingBlock { size } => write!(
                f,
                "the index lists a block of {size} bytes here that overlaps another block it lists"
            ),
            BlockTooLarge { size } => write!(
                f,
                "block of {size} bytes: larger than any this tool reads ({MAX_BLOCK_LEN})"
            ),
            BlockPastEnd { size, file_len } => write!(
                f,
                "block of {size} bytes runs past the end of the file ({file_len} bytes)"
            ),
            BlockChecksum { stored, computed } => write!(
                f,
                "checksum mismatch (stored {stored:#010x}, computed {computed:#010x})"
            ),
            UnknownCompression(kind) => write!(
                f,
                "unknown compression type {kind} (the LevelDB family writes {KNOWN_IDS})"
            ),
            CompressionTwoUnrecognised => write!(
                f,
                "compression type 2, but the block starts with neither a zstd frame nor a zlib header \
                 (type 2 is zstd in upstream LevelDB and Mojang's later fork, zlib in Mojang's first, \
                 LZ4 in Basho's, whose tables have a stats.sst1 block: this one has none)"
            ),
            Snappy(e) => write!(f, "snappy: {e}"),
            SnappyTooLarge { len } => write!(f, "snappy: claims {len} bytes decompressed"),
            Decompress { codec, error } => write!(f, "{codec}: {error}"),
            DecompressTooLarge { codec } => {
                write!(f, "{codec}: decompresses past the largest block")
            }
            Lz4Length => write!(f, "LZ4: the block's length prefix does not match its contents"),
            BashoTable => write!(
                f,
                "a table of Basho's LevelDB (stats.sst1 block): its readers take \
                 leveldb.BuiltinBloomFilter2 for Basho's bloom2, so it is not refiltered"
            ),
            NoRestartArray => write!(f, "block too short for its restart array"),
            BadEntryHeader { at } => write!(f, "bad entry header at {at} in the block"),
            EntryPastBlock { at } => write!(f, "entry at {at} in the block runs past it"),
            KeyWithoutTag => write!(f, "a key shorter than its 8-byte tag"),
            FilterBlockTooShort => write!(f, "filter block shorter than 5 bytes"),
            FilterArrayPastEnd => write!(f, "filter block's offset array starts past its end"),
            DataBlockMisplaced { expected } => write!(
                f,
                "data block not where the one before it ends ({expected}): not a table LevelDB laid out"
            ),
            RecordTooLong => write!(f, "record longer than {MAX_RECORD_LEN} bytes"),
            PartialRecord => write!(f, "partial record without end"),
            MissingRecordStart => write!(f, "missing start of fragmented record"),
            UnknownRecordType(kind) => write!(f, "unknown record type {kind}"),
            BadRecordLength => write!(f, "bad record length"),
            RecordChecksum => write!(f, "checksum mismatch"),
            CurrentWithoutNewline => write!(f, "does not end with a newline (or names no file)"),
            CurrentSymlinkNotManifest { len } => {
                write!(f, "a symlink holding {len} bytes, not a MANIFEST")
            }
            CurrentNamesNoManifest(name) => write!(f, "names {}, not a MANIFEST", excerpt(name)),
            BadEditField(field) => write!(f, "version edit: bad {field}"),
            EditLevelOutOfRange { field, level } => {
                write!(f, "version edit: {field}: level {level} out of range")
            }
            UnknownEditTag(tag) => write!(f, "version edit: unknown tag {tag}"),
            MissingManifestEntry(what) => write!(f, "no {what} entry"),
            BatchTooShort => write!(f, "write batch shorter than its header"),
            BadBatchEntry { deletion: false } => write!(f, "bad put"),
            BadBatchEntry { deletion: true } => write!(f, "bad deletion"),
            UnknownBatchTag(tag) => write!(f, "unknown write batch tag {tag}"),
            BatchCountMismatch { count, found } => {
                write!(f, "write batch counts {count} entries, holds {found}")
            }
        }
    }
}
