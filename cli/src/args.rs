//! The command line's definition: what `main` parses, and what the man pages and
//! shell completions are generated from, so that they cannot drift from `--help`.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// `leveldb-bloom`: its options and subcommand.
#[derive(Parser)]
#[command(
    name = "leveldb-bloom",
    version,
    about = "Tools for LevelDB's bloom filters"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Subcommand)]
pub enum Command {
    /// Proves that no key of a LevelDB database can disappear behind its filters.
    ///
    /// Reads the live tables of each database directory (the current version, from
    /// CURRENT and its MANIFEST; without one, every *.ldb and *.sst file), or each
    /// table file given, read-only, a block at a time, and checks every filter
    /// against the keys it covers. Errors are also printed on stderr. Exit status: 0
    /// when no key is missed and every table was read; 1 when a key is missed or a
    /// table could not be read; 2 on a usage error.
    Audit {
        /// Database directories or table files.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// One JSON document on stdout instead of the text report.
        #[arg(long)]
        json: bool,
        /// No progress bar.
        #[arg(long, short)]
        quiet: bool,
        /// List at most N missed keys per table (all are counted).
        #[arg(long, value_name = "N", default_value_t = 1000)]
        max_missed: usize,
    },
}
