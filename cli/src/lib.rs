//! The library behind the `leveldb-bloom` command: reading LevelDB tables without
//! LevelDB ([`table`]), auditing their filters ([`audit`]) and reporting
//! ([`report`]).

pub mod args;
pub mod audit;
pub mod report;
pub mod table;
