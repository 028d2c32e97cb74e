//! The library behind the `leveldb-bloom` command: auditing the filters of LevelDB
//! tables (read by the crate `leveldb-bloom-table`) ([`audit`], [`dialect`]), which
//! tables of a database to audit ([`database`]), whether a program has it open
//! ([`lock`]) and reporting ([`report`]);
//! following keys through a database's tables and filters ([`explain`],
//! [`explain_text`], [`log_keys`]); drawing filters on a page ([`show`]); the
//! command line ([`args`], [`key_input`]), its hints on wrong turns ([`hints`]), its
//! man pages ([`man`]) and completions ([`docs`]); whether `LD_PRELOAD` reaches the
//! LevelDB of an ELF file ([`reach`], [`reach_command`]); writing safely to terminals and
//! files ([`output`]).

pub mod args;
pub mod audit;
pub mod audit_command;
pub mod bloom2;
pub mod commit;
pub mod database;
pub mod db_dir;
pub mod dialect;
pub mod docs;
pub mod dry_run;
pub mod exit;
pub mod explain;
pub mod explain_command;
pub mod explain_text;
pub mod hex;
pub mod hints;
pub mod key_input;
pub mod lock;
pub mod log_keys;
pub mod man;
pub mod output;
pub mod reach;
pub mod reach_command;
pub mod refilter;
pub mod refilter_command;
pub mod refilter_table;
pub mod report;
#[cfg(test)]
mod scratch;
pub mod show;
pub mod show_command;
