//! `leveldb-bloom`: tools for LevelDB databases and their bloom filters.
//!
//! `leveldb-bloom audit PATH...` reads the live tables of the given databases (or
//! the given table files) without LevelDB, and proves for each filter that no key of
//! the table can disappear behind it: which writer's bits it holds, and every key a
//! reader of its name would answer "absent" for. Exit status: 0 when no key is
//! missed and every table was read, 1 otherwise, 2 on a usage error.
//!
//! `leveldb-bloom explain PATH KEY...` follows each key through the database as a
//! Get does: the tables consulted, each filter's answer, the blocks read.
//! `leveldb-bloom show` writes a page that draws a table's (or a playground's)
//! filters bit by bit.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use leveldb_bloom_cli::args::{Cli, Command, Policy, ShowArgs};
use leveldb_bloom_cli::database::{self, Job};
use leveldb_bloom_cli::docs::Generate;
use leveldb_bloom_cli::report::{Database, Outcome, Report};
use leveldb_bloom_cli::{audit, explain, explain_text, log_keys, refilter_command, show};

fn main() -> ExitCode {
    let command = Cli::command().long_version(long_version());
    let matches = Generate::augment_subcommands(command).get_matches();
    if matches
        .subcommand_name()
        .is_some_and(Generate::has_subcommand)
    {
        return Generate::from_arg_matches(&matches).map_or_else(|e| e.exit(), Generate::run);
    }
    match Cli::from_arg_matches(&matches)
        .unwrap_or_else(|e| e.exit())
        .command
    {
        Command::Audit {
            paths,
            json,
            quiet,
            max_missed,
        } => audit_paths(&paths, json, quiet, max_missed),
        Command::Explain {
            path,
            keys,
            hex,
            json,
            log,
            policy,
        } => explain_keys(&path, &keys, hex, json, log, policy),
        Command::Show(args) => write_page(show_page(&args), &args.output),
        Command::Refilter {
            path,
            bits_per_key,
            policy,
            dry_run,
            json,
        } => refilter_command::run(&path, &bits_per_key, policy, dry_run, json),
    }
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
                if let Some(from_manifest) = plan.from_manifest {
                    report.databases.push(Database {
                        path: path.display().to_string(),
                        tables_from: if from_manifest {
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

/// Explains a Get of each key in the database at `path`; errors on stderr, exit 1.
fn explain_keys(
    path: &Path,
    keys: &[String],
    hex: bool,
    json: bool,
    log: bool,
    policy: Policy,
) -> ExitCode {
    match explain_all(path, keys, hex, log, policy) {
        Ok(explained) => {
            let out = if json {
                serde_json::to_string_pretty(&explained).expect("plain data") + "\n"
            } else {
                explain_text::text(&explained)
            };
            let _ = std::io::stdout().lock().write_all(out.as_bytes());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("leveldb-bloom: ERROR {message}");
            ExitCode::from(1)
        }
    }
}

fn explain_all(
    path: &Path,
    keys: &[String],
    hex: bool,
    log: bool,
    policy: Policy,
) -> Result<Vec<explain::KeyExplained>, String> {
    let keys: Vec<Vec<u8>> = keys
        .iter()
        .map(|key| {
            if hex {
                parse_hex(key)
            } else {
                Ok(key.as_bytes().to_vec())
            }
        })
        .collect::<Result<_, _>>()?;
    let version = leveldb_table::manifest::live_version(path).map_err(|e| e.to_string())?;
    if let Some(name) = version
        .comparator
        .as_deref()
        .filter(|&n| n != database::BYTEWISE)
    {
        return Err(format!(
            "{}: comparator {name:?}: only databases ordered by {:?} can be explained",
            version.manifest.display(),
            database::BYTEWISE
        ));
    }
    let reader = explain::Reader {
        policy_name: match policy {
            Policy::Leveldb => Some(leveldb_bloom::POLICY_NAME),
            Policy::Legacy => Some(leveldb_bloom::LEGACY_POLICY_NAME),
            Policy::None => None,
        },
    };
    let mut in_log = if log {
        Some(log_keys::newest_in_logs(path, &version, &keys)?)
    } else {
        None
    };
    keys.iter()
        .map(|key| {
            let logged = in_log
                .as_mut()
                .map(|(read, found)| (read.clone(), found.remove(key)));
            explain::explain(path, &version, reader, key, logged)
        })
        .collect()
}

/// Writes `page` to `output`; errors on stderr, exit 1.
fn write_page(page: Result<String, String>, output: &Path) -> ExitCode {
    let written = page.and_then(|page| {
        std::fs::write(output, page).map_err(|e| format!("{}: {e}", output.display()))
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("leveldb-bloom: ERROR {message}");
            ExitCode::from(1)
        }
    }
}

/// The page `show` writes.
fn show_page(args: &ShowArgs) -> Result<String, String> {
    let bytes = |text: &str| {
        if args.hex {
            parse_hex(text)
        } else {
            Ok(text.as_bytes().to_vec())
        }
    };
    let key = args.key.as_deref().map(bytes).transpose()?;
    let data = match &args.table {
        Some(table) => show::from_table(table, args.filter, key.as_deref())?,
        None => {
            let text = match &args.keys_file {
                Some(file) => {
                    std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?
                }
                None => String::new(),
            };
            let keys: Vec<Vec<u8>> = (args.keys.iter().map(String::as_str))
                .chain(text.lines())
                .map(bytes)
                .collect::<Result<_, _>>()?;
            show::playground(args.bits_per_key, &keys, key.as_deref())
        }
    };
    Ok(show::page(&data))
}

fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    let digits = text.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("{text:?}: an odd number of hex digits"));
    }
    digits
        .chunks(2)
        .map(|pair| {
            std::str::from_utf8(pair)
                .ok()
                .and_then(|p| u8::from_str_radix(p, 16).ok())
                .ok_or_else(|| format!("{text:?}: not hex"))
        })
        .collect()
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
