//! Reading LevelDB's files without LevelDB: a table's footer, blocks with their
//! checksums and compression, block entries, the index sought as a Get seeks it, the
//! filter block and the keys each filter covers; the log format ([`log`]) and the
//! MANIFEST it holds, which gives a database's live tables ([`manifest`]). The one
//! reader of the workspace: the tool and every test that reads LevelDB's files use
//! it. And its one writer, of what `leveldb-bloom refilter` commits: a table given a
//! new filter block ([`rewrite_with_filter`]), a log ([`log_writer`]) of version
//! edits ([`version_edit`]).
//!
//! Memory follows the blocks being read, never the file: a table is read through
//! [`ReadAt`] (a file read with `pread`, or bytes already in memory), and a block's
//! size is checked against the file and [`MAX_BLOCK_LEN`] before anything of that
//! size is allocated. Every failure is an [`Error`], whose [`ErrorKind`] says what
//! is wrong and whose offset says where.

mod block;
mod checksum;
mod coding;
mod compression;
mod error;
mod excerpt;
mod filter_block;
mod filter_block_builder;
mod format;
pub mod internal_key;
mod limits;
pub mod log;
pub mod log_writer;
pub mod manifest;
mod rewrite;
mod source;
mod table;
pub mod version_edit;
pub mod write_batch;

pub use block::{each_entry, each_user_key, each_user_key_of};
pub use checksum::masked_crc;
pub use coding::{put_length_prefixed, put_varint};
pub use compression::{Codec, Family};
pub use error::{Error, ErrorKind, Result, KNOWN_IDS};
pub use excerpt::{excerpt, EXCERPT_LEN};
pub use filter_block::{FilterBlock, Lookup};
pub use filter_block_builder::{FilterBlockBuilder, FILTER_BASE_LG};
pub use format::{block_trailer, handle_value, BlockHandle};
pub use internal_key::INTERNAL_KEY_TAG_LEN;
pub use limits::{MAX_BLOCK_LEN, MAX_RECORD_LEN};
pub use rewrite::{new_tail, rewrite_with_filter, NewTail, Rewritten};
pub use source::{open_regular_file, ReadAt};
pub use table::{Table, BASHO_STATS};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod write_tests;
