//! `leveldb-bloom`: tools for LevelDB databases and their bloom filters.
//!
//! `leveldb-bloom audit PATH...` reads the live tables of the given databases (or
//! the given table files) without LevelDB, and proves for each filter that no key of
//! the table can disappear behind it: which writer's bits it holds, and every key a
//! reader of its name would answer "absent" for. Exit status: 0 when no key is
//! missed and every table was read, 1 otherwise, 2 on a usage error.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use leveldb_bloom_cli::args::{Cli, Command};
use leveldb_bloom_cli::audit;
use leveldb_bloom_cli::database::{self, Job};
use leveldb_bloom_cli::docs::Generate;
use leveldb_bloom_cli::report::{Database, Outcome, Report};

fn main() -> ExitCode {
    let command = Cli::command().long_version(long_version());
    let matches = Generate::augment_subcommands(command).get_matches();
    if matches
        .subcommand_name()
        .is_some_and(Generate::has_subcommand)
    {
        return Generate::from_arg_matches(&matches).map_or_else(|e| e.exit(), Generate::run);
    }
    let Command::Audit {
        paths,
        json,
        quiet,
        max_missed,
    } = Cli::from_arg_matches(&matches)
        .unwrap_or_else(|e| e.exit())
        .command;
    audit_paths(&paths, json, quiet, max_missed)
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

/// Audits the tables of `paths` and prints the report; errors also on stderr.
fn audit_paths(paths: &[PathBuf], json: bool, quiet: bool, max_missed: usize) -> ExitCode {
    let mut report = Report::default();
    let mut jobs = Vec::new();
    for path in paths {
        match database::plan(path) {
            Ok(plan) => {
                if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
                    report.databases.push(Database {
                        path: path.display().to_string(),
                        tables_from: if plan.from_manifest {
                            "manifest"
                        } else {
                            "file names"
                        },
                    });
                }
                report.notes.extend(plan.notes);
                jobs.extend(plan.jobs);
            }
            Err(message) => report.error(path, None, message),
        }
    }
    let bytes = jobs
        .iter()
        .map(|job| std::fs::metadata(&job.path).map_or(0, |m| m.len()))
        .sum();
    let progress = ProgressBar::with_draw_target(Some(bytes), ProgressDrawTarget::stderr());
    if quiet || !std::io::stderr().is_terminal() {
        progress.set_draw_target(ProgressDrawTarget::hidden());
    }
    progress.set_style(
        ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {bytes_per_sec} {msg}")
            .expect("a valid template"),
    );
    let outcomes: Vec<(&Job, Outcome)> = jobs
        .par_iter()
        .map(|job| (job, audit_file(job, max_missed, &|n| progress.inc(n))))
        .collect();
    progress.finish_and_clear();
    for (job, outcome) in outcomes {
        report.add(&job.path, outcome);
    }
    report.finish();
    for error in &report.errors {
        eprintln!("leveldb-bloom: ERROR {}", error.line());
    }
    let out = if json {
        report.json() + "\n"
    } else {
        report.text()
    };
    // A reader that stops early (`| head`) has what it wanted: no panic, no message.
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    if report.clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Reads and audits one table, opened only if it is a regular file. A table deleted
/// since it was listed (LevelDB compacts while it runs) is skipped, not an error;
/// a live table is skipped only if the current version no longer lists it.
fn audit_file(job: &Job, max_missed: usize, read: &dyn Fn(u64)) -> Outcome {
    let file = match leveldb_table::open_regular_file(&job.path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return missing(job),
        Err(e) => return Outcome::Unreadable(None, e.to_string()),
    };
    match audit::audit(job.path.display().to_string(), &file, max_missed, read) {
        Ok(mut table) => {
            table.level = job.level;
            Outcome::Audited(Box::new(table))
        }
        Err(e) => Outcome::Unreadable(Some(e.offset), e.message),
    }
}

/// What a table that could not be found is: a dangling symlink (an error), a live
/// table still listed by the current version (an error), or a table a compaction
/// deleted (skipped).
fn missing(job: &Job) -> Outcome {
    if let Ok(link) = std::fs::read_link(&job.path) {
        return Outcome::Unreadable(
            None,
            format!("a symlink to {}, which does not exist", link.display()),
        );
    }
    let Some(number) = job.live_number else {
        return Outcome::Skipped;
    };
    let dir = job.path.parent().unwrap_or(Path::new("."));
    match database::live_tables(dir) {
        Ok(live) if live.iter().any(|&(_, n)| n == number) => Outcome::Unreadable(
            None,
            "missing: the database's current version lists this table".to_string(),
        ),
        _ => Outcome::Skipped,
    }
}
