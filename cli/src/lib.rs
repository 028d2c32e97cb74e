//! The library behind the `leveldb-bloom` command: a folder per subcommand. Each
//! command's front (its `command` module, or [`docs`]) takes the parsed arguments,
//! writes its report through [`output`] and prints no error: a failure goes back to
//! `main`, which prints it once ([`exit`]).
//!
//! - `audit PATH...`: proves for each live table of a database (or each table file)
//!   that no key can disappear behind its filter ([`audit`]: [`audit::command`],
//!   [`audit::dialect`], [`audit::bloom2`], reported by [`audit::report`]; which
//!   tables: [`database`]);
//! - `explain DB KEY...`: follows each key through the database as a Get does, each
//!   filter's answer and the blocks read ([`explain`]: [`explain::command`],
//!   [`explain::text`], the write-ahead logs: [`explain::log_keys`]; a program
//!   holding the database open: [`lock`]);
//! - `show`: a page drawing a table's (or a playground's) filters bit by bit
//!   ([`show`], [`show::command`]);
//! - `refilter DB`: gives the live tables of a closed database new filters and
//!   commits the new version as LevelDB does ([`refilter`]: [`refilter::command`],
//!   [`refilter::table`], [`refilter::commit`], [`refilter::db_dir`]), or, with
//!   `--dry-run`, predicts what each choice of bits per key would give
//!   ([`refilter::dry_run`]);
//! - `reach FILE...`: whether `LD_PRELOAD` reaches the LevelDB of programs and
//!   libraries ([`reach`], [`reach::command`]);
//! - `run -- COMMAND`: the command run with the library installed beside the tool
//!   preloaded, or `--print-env` ([`run`]: [`run::locate`], [`run::variables`],
//!   [`run::command`]);
//! - `completion SHELL` and `man-pages DIR`: the shell completions and man pages
//!   ([`docs`], [`docs::man`]).
//!
//! Shared: the command line ([`command_line`], [`key_input`], [`hex`]), hints on
//! wrong turns ([`hints`]), how a run ends ([`exit`]), writing safely to terminals
//! and files ([`output`]). Tables, logs and MANIFESTs are read and written by the
//! crate `leveldb-bloom-table`.

pub mod audit;
pub mod command_line;
pub mod database;
pub mod docs;
pub mod exit;
pub mod explain;
pub mod hex;
pub mod hints;
pub mod key_input;
pub mod lock;
pub mod output;
pub mod reach;
pub mod refilter;
pub mod run;
pub mod show;
