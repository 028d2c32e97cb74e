//! `leveldb-bloom`: tools for LevelDB databases and their bloom filters.
//!
//! `leveldb-bloom audit PATH...` reads every table of the given databases (or the
//! given table files) without LevelDB, and proves for each filter that no key of the
//! table can disappear behind it: which writer's bits it holds, and every key a
//! reader of its name would answer "absent" for. Exit status: 0 when no key is
//! missed and every table was read, 1 otherwise, 2 on a usage error.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use leveldb_bloom_cli::args::{Cli, Command};
use leveldb_bloom_cli::audit;
use leveldb_bloom_cli::docs::Generate;
use leveldb_bloom_cli::report::{Outcome, Report};

fn main() -> ExitCode {
    let command = Cli::command().long_version(long_version());
    let matches = Generate::augment_subcommands(command).get_matches();
    if matches
        .subcommand_name()
        .is_some_and(Generate::has_subcommand)
    {
        return Generate::from_arg_matches(&matches).map_or_else(|e| e.exit(), Generate::run);
    }
    let Command::Audit { paths, json, quiet } = Cli::from_arg_matches(&matches)
        .unwrap_or_else(|e| e.exit())
        .command;
    audit_paths(&paths, json, quiet)
}

/// What `--version` prints after the name: this tool's version, the version of the
/// library it was built with, and the SIMD level the library uses on this CPU.
fn long_version() -> String {
    format!(
        "{}\nlibrary: leveldb-bloom {}\nSIMD level: {}",
        env!("CARGO_PKG_VERSION"),
        leveldb_bloom::VERSION,
        leveldb_bloom::simd_level().to_string_lossy()
    )
}

/// Audits the tables of `paths` and prints the report.
fn audit_paths(paths: &[PathBuf], json: bool, quiet: bool) -> ExitCode {
    let mut report = Report::default();
    let mut tables = Vec::new();
    for path in paths {
        match table_files(path) {
            Ok(files) if files.is_empty() => report
                .notes
                .push(format!("{}: no table files (*.ldb, *.sst)", path.display())),
            Ok(files) => tables.extend(files),
            Err(message) => report.error(path, None, message),
        }
    }
    let bytes = tables.iter().map(|(_, size)| size).sum();
    let progress = ProgressBar::with_draw_target(Some(bytes), ProgressDrawTarget::stderr());
    if quiet || !std::io::stderr().is_terminal() {
        progress.set_draw_target(ProgressDrawTarget::hidden());
    }
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} {msg}")
            .expect("a valid template"),
    );
    let outcomes: Vec<(PathBuf, Outcome)> = tables
        .par_iter()
        .map(|(file, size)| {
            let outcome = audit_file(file);
            progress.inc(*size);
            (file.clone(), outcome)
        })
        .collect();
    progress.finish_and_clear();
    for (file, outcome) in outcomes {
        report.add(&file, outcome);
    }
    if json {
        println!("{}", report.json());
    } else {
        print!("{}", report.text());
    }
    if report.clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The table files of `path` with their sizes: itself, or those in the directory.
fn table_files(path: &Path) -> Result<Vec<(PathBuf, u64)>, String> {
    let metadata = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !metadata.is_dir() {
        return Ok(vec![(path.to_path_buf(), metadata.len())]);
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.path();
        let is_table = name
            .extension()
            .is_some_and(|ext| ext == "ldb" || ext == "sst");
        if is_table {
            // Gone already (a compaction): the audit reports it as skipped.
            let size = entry.metadata().map_or(0, |m| m.len());
            files.push((name, size));
        }
    }
    files.sort();
    Ok(files)
}

/// Reads and audits one table. A table deleted since it was listed (LevelDB
/// compacts while it runs) is skipped, not an error.
fn audit_file(file: &Path) -> Outcome {
    match std::fs::read(file) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Skipped,
        Err(e) => Outcome::Unreadable(None, e.to_string()),
        Ok(data) => match audit::audit(file.display().to_string(), &data) {
            Ok(table) => Outcome::Audited(Box::new(table)),
            Err(e) => Outcome::Unreadable(Some(e.offset), e.message),
        },
    }
}
