//! The reader's bounds: what it allocates for one block or one log record, however
//! large a corrupt or crafted file claims either to be.

/// The largest block this reader reads, stored or decompressed. LevelDB cuts data
/// blocks at `block_size` (4 KiB by default) and a block exceeds it only by its last
/// entry, so only values of hundreds of megabytes could make one this large; a
/// handle claiming more is reported before anything of its size is allocated.
pub const MAX_BLOCK_LEN: u64 = 256 << 20;

/// The largest log record assembled: a MANIFEST's first record lists every table of
/// the database and a write-ahead log record is one write batch, both far smaller in
/// any database this reader is meant for.
pub const MAX_RECORD_LEN: usize = 256 << 20;
