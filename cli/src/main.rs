//! `leveldb-bloom`: tools for LevelDB databases and their bloom filters.
//!
//! `leveldb-bloom audit PATH...` reads the live tables of the given databases (or
//! the given table files) without LevelDB, and proves for each filter that no key of
//! the table can disappear behind it: which writer's bits it holds, and every key a
//! reader of its name would answer "absent" for. Exit status: 0 when no key is
//! missed, every table was read and something was audited; 1 otherwise (or when
//! the report could not be written); 2 on a usage error.
//!
//! `leveldb-bloom explain PATH KEY...` follows each key through the database as a
//! Get does: the tables consulted, each filter's answer, the blocks read.
//! `leveldb-bloom show` writes a page that draws a table's (or a playground's)
//! filters bit by bit. `leveldb-bloom refilter` gives a closed database new filters.
//! `leveldb-bloom reach FILE...` tells whether `LD_PRELOAD` reaches the LevelDB in
//! programs and libraries. `leveldb-bloom run -- COMMAND` runs a command with the
//! library installed beside the tool preloaded.
//!
//! This file only parses the command line and dispatches; each subcommand is a
//! module of the library, and a failed run's error is printed in one place
//! ([`exit::report_failure`]).

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Subcommand};

use leveldb_bloom_cli::audit::command as audit_command;
use leveldb_bloom_cli::command_line::{Cli, Command};
use leveldb_bloom_cli::docs::Generate;
use leveldb_bloom_cli::exit;
use leveldb_bloom_cli::explain::command as explain_command;
use leveldb_bloom_cli::reach::command as reach_command;
use leveldb_bloom_cli::refilter::command as refilter_command;
use leveldb_bloom_cli::run::command as run_command;
use leveldb_bloom_cli::show::command as show_command;

fn main() -> ExitCode {
    run().unwrap_or_else(|error| exit::report_failure(&error))
}

/// Parses the command line (clap's errors, `--help` and `--version` are returned
/// for [`exit::report_failure`] to print) and runs the subcommand.
fn run() -> anyhow::Result<ExitCode> {
    let command = Cli::command().long_version(long_version());
    let matches = Generate::augment_subcommands(command).try_get_matches()?;
    if matches
        .subcommand_name()
        .is_some_and(Generate::has_subcommand)
    {
        return Generate::from_arg_matches(&matches)?.run();
    }
    match Cli::from_arg_matches(&matches)?.command {
        Command::Audit {
            paths,
            json,
            quiet,
            max_missed,
            reader,
        } => audit_command::run(&paths, json, quiet, max_missed, &reader),
        Command::Explain {
            path,
            keys,
            keys_file,
            hex,
            json,
            log,
            policy,
        } => explain_command::run(&path, &keys, keys_file.as_deref(), hex, json, log, policy),
        Command::Show(args) => show_command::run(&args),
        Command::Refilter {
            path,
            bits_per_key,
            policy,
            dry_run,
            json,
        } => refilter_command::run(&path, &bits_per_key, policy, dry_run, json),
        Command::Reach { files, json } => reach_command::run(&files, json),
        Command::Run(args) => run_command::run(&args),
    }
}

/// What `--version` prints after the name: this tool's version, the version of the
/// library it was built with, and the SIMD level the library uses on this CPU.
fn long_version() -> String {
    format!(
        "{}\nlibrary: leveldb-bloom {}\nSIMD level: {}",
        env!("CARGO_PKG_VERSION"),
        leveldb_bloom::VERSION,
        leveldb_bloom::SimdLevel::best().name()
    )
}
