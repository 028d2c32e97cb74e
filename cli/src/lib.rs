//! The library behind the `leveldb-bloom` command: reading LevelDB tables without
//! LevelDB ([`table`]), auditing their filters ([`audit`]) and reporting
//! ([`report`]); the command line ([`args`]) and its man pages and completions
//! ([`docs`]).

pub mod args;
pub mod audit;
pub mod docs;
pub mod report;
pub mod table;
