//! The `audit` subcommand: the tables of each path given (a database's live ones,
//! or a table file), audited in parallel with a progress bar, the report on stdout
//! (text or JSON) and each table's error the run's failures
//! ([`exit::Failures`](crate::exit::Failures)).

use std::collections::{BTreeSet, HashMap};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::audit;
use crate::audit::report::{Database, Outcome, Report};
use crate::command_line::Reader;
use crate::database::{self, Job};
use crate::exit::conclude;
use crate::output::{json_safe, terminal_safe, write_stdout};

/// Audits the tables of `paths` for `readers` (every known reader when empty),
/// listing at most `max_missed` missed keys per table; exit status 1 unless the
/// report is clean. `quiet` hides the progress bar.
pub fn run(
    paths: &[PathBuf],
    json: bool,
    quiet: bool,
    max_missed: usize,
    readers: &[Reader],
) -> Result<ExitCode> {
    let report = audit_paths(paths, quiet, max_missed, readers);
    let written = write_stdout(&if json {
        json_safe(&report.json()) + "\n"
    } else {
        terminal_safe(&report.text())
    });
    let failures = report.errors.iter().map(|error| error.line()).collect();
    let status = if report.clean() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    };
    conclude(written, failures, status)
}

/// The report of the tables of `paths`.
fn audit_paths(paths: &[PathBuf], quiet: bool, max_missed: usize, readers: &[Reader]) -> Report {
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
            Err(e) => report.error(path, None, e.to_string()),
        }
    }
    let progress = progress_bar(&jobs, quiet);
    let outcomes: Vec<(&Job, Option<Outcome>)> = jobs
        .par_iter()
        .map(|job| {
            let read = |n| progress.inc(n);
            (job, audit_file(job, max_missed, readers, &read))
        })
        .collect();
    progress.finish_and_clear();
    // The current version of a database with a live table found missing is read
    // again, once however many are missing: LevelDB may have compacted them away.
    let mut live_now = HashMap::new();
    for (job, outcome) in outcomes {
        let outcome = outcome.unwrap_or_else(|| still_listed(job, &mut live_now));
        report.add(&job.path, outcome);
    }
    report.finish();
    report
}

/// A bar of the bytes of `jobs` read, on stderr when it is a terminal and not `quiet`.
fn progress_bar(jobs: &[Job], quiet: bool) -> ProgressBar {
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
    progress
}

/// Reads and audits one table, opened only if it is a regular file. A table deleted
/// since it was listed (LevelDB compacts while it runs) is skipped, not an error;
/// `None` for a live table found missing, which [`still_listed`] settles.
fn audit_file(
    job: &Job,
    max_missed: usize,
    readers: &[Reader],
    read: &dyn Fn(u64),
) -> Option<Outcome> {
    let file = match leveldb_table::open_regular_file(&job.path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return missing(job),
        Err(e) => return Some(Outcome::Unreadable(None, e.to_string())),
    };
    Some(
        match audit::audit(
            job.path.display().to_string(),
            &file,
            max_missed,
            readers,
            read,
        ) {
            Ok(mut table) => {
                table.level = job.level;
                Outcome::Audited(Box::new(table))
            }
            Err(e) => Outcome::Unreadable(e.offset(), e.kind().to_string()),
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

/// A live table found missing: an error if its database's current version, read
/// again (once per database: `live_now` keeps what was read), still lists it;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn job(path: PathBuf, live_number: Option<u64>) -> Job {
        Job {
            path,
            level: None,
            live_number,
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("audit-command-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_missing_table_no_version_lists_is_skipped_and_a_dangling_symlink_is_an_error() {
        let dir = temp_dir("missing");
        assert!(matches!(
            missing(&job(dir.join("000005.ldb"), None)),
            Some(Outcome::Skipped)
        ));
        // A live table is settled by reading the current version again.
        assert!(missing(&job(dir.join("000005.ldb"), Some(5))).is_none());
        let link = dir.join("000006.ldb");
        std::os::unix::fs::symlink(dir.join("gone"), &link).unwrap();
        match missing(&job(link, None)) {
            Some(Outcome::Unreadable(None, why)) => {
                assert!(why.contains("does not exist"), "{why}")
            }
            _ => panic!("a dangling symlink is an error"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_live_table_missing_from_an_unreadable_database_is_skipped_and_read_once() {
        let dir = temp_dir("still-listed");
        let mut live_now = HashMap::new();
        for number in [5, 6] {
            let outcome = still_listed(
                &job(dir.join(format!("{number:06}.ldb")), Some(number)),
                &mut live_now,
            );
            assert!(matches!(outcome, Outcome::Skipped));
        }
        // One reading of the (absent) current version for both tables.
        assert_eq!(live_now.len(), 1);
        assert!(live_now[&dir].is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_table_that_is_not_a_table_is_unreadable_at_its_offset() {
        let dir = temp_dir("unreadable");
        let path = dir.join("000007.ldb");
        std::fs::write(&path, [0u8; 100]).unwrap();
        match audit_file(&job(path, None), 10, &[], &|_| {}) {
            Some(Outcome::Unreadable(Some(92), why)) => {
                assert!(why.starts_with("wrong magic number"), "{why}")
            }
            _ => panic!("a file of zeros is no table"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
