//! The library behind the `leveldb-bloom` command: a few modules per subcommand.
//! Each command's front (`*_command`, or [`docs`]) takes the parsed arguments, writes
//! its report through [`output`] and prints no error: a failure goes back to `main`,
//! which prints it once ([`exit`]).
//!
//! - `audit PATH...`: proves for each live table of a database (or each table file)
//!   that no key can disappear behind its filter ([`audit_command`], [`audit`],
//!   [`dialect`], [`bloom2`], which tables: [`database`], reported by [`report`]);
//! - `explain DB KEY...`: follows each key through the database as a Get does, each
//!   filter's answer and the blocks read ([`explain_command`], [`explain`],
//!   [`explain_text`], the write-ahead logs: [`log_keys`]; a program holding the
//!   database open: [`lock`]);
//! - `show`: a page drawing a table's (or a playground's) filters bit by bit
//!   ([`show_command`], [`show`]);
//! - `refilter DB`: gives the live tables of a closed database new filters and
//!   commits the new version as LevelDB does ([`refilter_command`], [`refilter`],
//!   [`refilter_table`], [`commit`], [`db_dir`]), or, with `--dry-run`, predicts
//!   what each choice of bits per key would give ([`dry_run`]);
//! - `reach FILE...`: whether `LD_PRELOAD` reaches the LevelDB of programs and
//!   libraries ([`reach_command`], [`reach`]);
//! - `completion SHELL` and `man-pages DIR`: the shell completions and man pages
//!   ([`docs`], [`man`]).
//!
//! Shared: the command line ([`command_line`], [`key_input`], [`hex`]), hints on wrong turns
//! ([`hints`]), how a run ends ([`exit`]), writing safely to terminals and files
//! ([`output`]). Tables, logs and MANIFESTs are read and written by the crate
//! `leveldb-bloom-table`.

pub mod audit;
pub mod audit_command;
pub mod bloom2;
pub mod command_line;
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
