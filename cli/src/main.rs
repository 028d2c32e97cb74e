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
//! filters bit by bit.

use std::collections::{BTreeSet, HashMap};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use leveldb_bloom_cli::args::{Cli, Command, Policy, ShowArgs};
use leveldb_bloom_cli::database::{self, Job};
use leveldb_bloom_cli::docs::Generate;
use leveldb_bloom_cli::key_input::{key_bytes, read_keys_file};
use leveldb_bloom_cli::output::{json_safe, print_error, terminal_safe, write_file, write_stdout};
use leveldb_bloom_cli::report::{Database, Outcome, Report};
use leveldb_bloom_cli::{audit, explain, explain_text, hints, log_keys, refilter_command, show};

fn main() -> ExitCode {
    let command = Cli::command().long_version(long_version());
    let matches = Generate::augment_subcommands(command)
        .try_get_matches()
        .unwrap_or_else(|e| hints::exit_on_parse_error(e));
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
        } => match hints::database_expected(&path) {
            Some(hint) => usage_error(&hint),
            None => explain_keys(&path, &keys, hex, json, log, policy),
        },
        Command::Show(args) => match args.table.as_deref().and_then(hints::table_expected) {
            Some(hint) => usage_error(&hint),
            None => write_page(show_page(&args), &args.output),
        },
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
        leveldb_bloom::simd_level()
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
                if let Some(message) = plan.error {
                    report.error(path, None, message);
                }
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
    let outcomes: Vec<(&Job, Option<Outcome>)> = jobs
        .par_iter()
        .map(|job| (job, audit_file(job, max_missed, &|n| progress.inc(n))))
        .collect();
    progress.finish_and_clear();
    // Each database's current version read again once, only if a table it listed
    // is missing: LevelDB may have compacted it away meanwhile.
    let mut live_now = HashMap::new();
    for (job, outcome) in outcomes {
        let outcome = outcome.unwrap_or_else(|| still_listed(job, &mut live_now));
        report.add(&job.path, outcome);
    }
    report.finish();
    for error in &report.errors {
        print_error(&error.line());
    }
    let out = if json {
        json_safe(&report.json()) + "\n"
    } else {
        terminal_safe(&report.text())
    };
    match write_stdout(&out) {
        Err(message) => {
            print_error(&message);
            ExitCode::from(1)
        }
        Ok(()) if report.clean() => ExitCode::SUCCESS,
        Ok(()) => ExitCode::from(1),
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
    if let Some(holder) = leveldb_bloom_cli::lock::holder(path) {
        // On stderr: stdout keeps the documented text and JSON.
        let note = format!(
            "leveldb-bloom: note: {}: open by a running program ({holder}): keys it wrote since \
             its last flush are in its memory and its log, not in tables (--log reads the log)\n",
            path.display()
        );
        let _ = std::io::stderr()
            .lock()
            .write_all(terminal_safe(&note).as_bytes());
    }
    let written = explain_all(path, keys, hex, log, policy).and_then(|explained| {
        write_stdout(&if json {
            json_safe(&serde_json::to_string_pretty(&explained).expect("plain data")) + "\n"
        } else {
            terminal_safe(&explain_text::text(&explained))
        })
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            print_error(&message);
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
        .map(|key| key_bytes(key, hex))
        .collect::<Result<_, _>>()?;
    let version = leveldb_table::manifest::live_version(path).map_err(|e| e.to_string())?;
    if let Some(name) = version
        .comparator
        .as_deref()
        .filter(|&n| n != database::BYTEWISE)
    {
        return Err(format!(
            "{}: comparator {}: only databases ordered by {:?} can be explained",
            version.manifest.display(),
            leveldb_table::manifest::excerpt(name.as_bytes()),
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

/// A usage error: the message on stderr, exit 2.
fn usage_error(message: &str) -> ExitCode {
    eprintln!("leveldb-bloom: ERROR {message}");
    ExitCode::from(2)
}

/// Writes `page` to `output` (`-`: stdout); errors on stderr, exit 1.
fn write_page(page: Result<String, String>, output: &Path) -> ExitCode {
    let written = page.and_then(|page| {
        if output == Path::new("-") {
            write_stdout(&page)
        } else {
            write_file(output, page.as_bytes())
        }
    });
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            print_error(&message);
            ExitCode::from(1)
        }
    }
}

/// The page `show` writes.
fn show_page(args: &ShowArgs) -> Result<String, String> {
    let key = args
        .key
        .as_deref()
        .map(|key| key_bytes(key, args.hex))
        .transpose()?;
    let data = match &args.table {
        Some(table) => show::from_table(table, args.filter, key.as_deref())?,
        None => {
            let mut keys: Vec<Vec<u8>> = args
                .keys
                .iter()
                .map(|key| key_bytes(key, args.hex))
                .collect::<Result<_, _>>()?;
            if let Some(file) = &args.keys_file {
                let text = read_keys_file(file)?;
                let hex = |line: &str| key_bytes(line, true);
                keys.extend(hints::keys_of_file(file, &text, args.hex, hex)?);
            }
            show::playground(args.bits_per_key, &keys, key.as_deref())?
        }
    };
    Ok(show::page(&data))
}

/// Reads and audits one table, opened only if it is a regular file. A table deleted
/// since it was listed (LevelDB compacts while it runs) is skipped, not an error;
/// `None` for a live table found missing, which [`still_listed`] settles.
fn audit_file(job: &Job, max_missed: usize, read: &dyn Fn(u64)) -> Option<Outcome> {
    let file = match leveldb_table::open_regular_file(&job.path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return missing(job),
        Err(e) => return Some(Outcome::Unreadable(None, e.to_string())),
    };
    Some(
        match audit::audit(job.path.display().to_string(), &file, max_missed, read) {
            Ok(mut table) => {
                table.level = job.level;
                Outcome::Audited(Box::new(table))
            }
            Err(e) => Outcome::Unreadable(Some(e.offset), e.message),
        },
    )
}

/// What a table that could not be found is: a dangling symlink (an error), a table
/// not listed by a current version (skipped: a compaction deleted it), or `None`
/// for a live table, to be checked against the current version once more.
fn missing(job: &Job) -> Option<Outcome> {
    if let Ok(link) = std::fs::read_link(&job.path) {
        return Some(Outcome::Unreadable(
            None,
            format!("a symlink to {}, which does not exist", link.display()),
        ));
    }
    job.live_number.is_none().then_some(Outcome::Skipped)
}

/// A live table found missing: an error if the database's current version, read
/// again (once per database, however many tables are missing), still lists it;
/// skipped if a compaction has deleted it meanwhile.
fn still_listed(job: &Job, live_now: &mut HashMap<PathBuf, BTreeSet<u64>>) -> Outcome {
    let dir = job.path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let live = live_now.entry(dir).or_insert_with_key(|dir| {
        database::live_tables(dir)
            .map(|live| live.into_iter().map(|(_, number)| number).collect())
            .unwrap_or_default()
    });
    if job.live_number.is_some_and(|number| live.contains(&number)) {
        Outcome::Unreadable(
            None,
            "missing: the database's current version lists this table".to_string(),
        )
    } else {
        Outcome::Skipped
    }
}
