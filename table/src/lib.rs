//! Reading LevelDB's files without LevelDB, laid out as LevelDB's `table/` and
//! `db/`. At the top, a table ([`Table`]): its footer and block handles, blocks
//! with their checksums and compression, block entries, the filter block as LevelDB's
//! `FilterBlockReader` reads it ([`Table::filter`]), and a Get as LevelDB's
//! `Table::InternalGet` does it ([`Table::get`]: the index sought, the filter asked,
//! the data block sought). In [`db`], what LevelDB keeps beside its tables: the log
//! format, write batches, version edits and the MANIFEST, which gives a database's
//! live tables. The one reader of the workspace: the tool and every test that reads
//! LevelDB's files use it. And its one writer, of what `leveldb-bloom refilter`
//! commits: a table given a new filter block ([`rewrite_with_filter`]), a log
//! ([`db::log_writer`]) of version edits ([`db::version_edit`]).
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
pub mod db;
mod error;
mod excerpt;
mod filter_block;
mod filter_block_builder;
mod footer;
mod get;
pub mod internal_key;
mod limits;
mod rewrite;
mod source;
mod table;

pub use block::{each_entry, each_user_key, each_user_key_of};
pub use checksum::masked_crc;
pub use coding::{put_length_prefixed, put_varint};
pub use compression::{Codec, Family};
pub use error::{Error, ErrorKind, Result, KNOWN_IDS};
pub use excerpt::{excerpt, EXCERPT_LEN};
pub use filter_block::{FilterBlock, Lookup};
pub use filter_block_builder::{FilterBlockBuilder, FILTER_BASE_LG};
pub use footer::{block_trailer, handle_value, BlockHandle};
pub use get::{FilterPolicy, FilterSeen, Got};
pub use internal_key::INTERNAL_KEY_TAG_LEN;
pub use limits::{MAX_BLOCK_LEN, MAX_RECORD_LEN};
pub use rewrite::{new_tail, rewrite_with_filter, NewTail, Rewritten};
pub use source::{open_regular_file, ReadAt};
pub use table::{Table, BASHO_STATS};

#[cfg(test)]
mod get_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod write_tests;
