//! What LevelDB keeps beside its tables (its `db/`): the log format ([`log`]) and its
//! writer ([`log_writer`]), the write batches a write-ahead log holds
//! ([`write_batch`]), and the MANIFEST, a log of version edits ([`version_edit`])
//! giving a database's live tables ([`manifest`]).

pub mod log;
pub mod log_writer;
pub mod manifest;
pub mod version_edit;
pub mod write_batch;
