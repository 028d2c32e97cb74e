//! Which files to audit: a database directory as LevelDB sees it (the live tables of
//! the current version, from `CURRENT` and its MANIFEST, each with its level), or,
//! without a readable MANIFEST, the files named like tables; a path that is a file
//! is audited as a table.

use anyhow::Result;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The comparator of every database whose tables' filters this tool reads: the
/// tables' order, and what a filter's keys are, are its own.
pub const BYTEWISE: &str = "leveldb.BytewiseComparator";

/// A table file to audit.
pub struct Job {
    pub path: PathBuf,
    /// Its level, when the current version lists it.
    pub level: Option<u32>,
    /// Its number, when the current version lists it (a missing file is then an
    /// error, unless a compaction deleted it meanwhile).
    pub live_number: Option<u64>,
}

/// What to audit in one path given on the command line.
pub struct Plan {
    pub jobs: Vec<Job>,
    pub notes: Vec<String>,
    /// `None` for a table file; for a database directory, whether its tables were
    /// taken from its current version.
    pub from_manifest: Option<bool>,
    /// Why the database's current version could not be read although it has a
    /// `CURRENT`: an error of the audit (its tables are still audited by name).
    pub error: Option<String>,
}

/// The tables of `path`: itself when it is not a directory.
pub fn plan(path: &Path) -> Result<Plan> {
    let metadata = std::fs::metadata(path)?;
    if !metadata.is_dir() {
        return Ok(Plan {
            jobs: vec![Job {
                path: path.to_path_buf(),
                level: None,
                live_number: None,
            }],
            notes: Vec::new(),
            from_manifest: None,
            error: None,
        });
    }
    let named = named_like_tables(path)?;
    let open_by = crate::lock::holder(path);
    let mut notes: Vec<String> = open_by
        .iter()
        .map(|holder| {
            format!(
                "{}: open by a running program ({holder}): its tables are read as its current version lists them now",
                path.display()
            )
        })
        .collect();
    match live_version(path) {
        Ok((live, comparator)) => {
            if let Some(name) = comparator {
                notes.push(format!(
                    "{}: comparator {name}, not {BYTEWISE:?}: its tables are audited all the same (the filters hold user keys whatever their order; the MANIFEST lists the live tables)",
                    path.display()
                ));
            }
            let numbers: BTreeSet<u64> = live.iter().map(|&(_, number)| number).collect();
            let why = match open_by {
                Some(_) => "the current version does not list it yet, or no longer; the database is open, so it is probably a table being written by a flush or compaction, or one about to be deleted",
                None => "the current version does not list it; LevelDB deletes such files when it opens the database",
            };
            for (number, file) in &named {
                if !numbers.contains(number) {
                    notes.push(format!("{}: not live ({why})", file.display()));
                }
            }
            if live.is_empty() {
                notes.push(format!(
                    "{}: the current version lists no table yet (what was written is in the log only): no filter to audit",
                    path.display()
                ));
            }
            let jobs = live
                .into_iter()
                .map(|(level, number)| Job {
                    path: leveldb_table::db::manifest::table_file_at_level(
                        path,
                        level as usize,
                        number,
                    ),
                    level: Some(level),
                    live_number: Some(number),
                })
                .collect();
            Ok(Plan {
                jobs,
                notes,
                from_manifest: Some(true),
                error: None,
            })
        }
        Err(why) => {
            // No CURRENT at all is a directory of tables, audited by name; a CURRENT
            // (or the MANIFEST it names) that cannot be read is an error.
            let has_current = std::fs::symlink_metadata(path.join("CURRENT")).is_ok();
            let error = has_current.then(|| {
                format!("the current version could not be read ({why}): every file named like a table was audited instead")
            });
            if !has_current {
                notes.push(format!(
                    "{}: no readable MANIFEST ({why}): audited every file named like a table, live or not",
                    path.display()
                ));
            }
            if named.is_empty() {
                notes.push(format!("{}: no table files (*.ldb, *.sst)", path.display()));
            }
            let jobs = named
                .into_iter()
                .map(|(_, path)| Job {
                    path,
                    level: None,
                    live_number: None,
                })
                .collect();
            Ok(Plan {
                jobs,
                notes,
                from_manifest: Some(false),
                error,
            })
        }
    }
}

/// The live tables of the database in `dir`, by level and number, whatever its
/// comparator: which files are live is the MANIFEST's list, not a key order.
pub fn live_tables(dir: &Path) -> Result<LiveTables> {
    Ok(live_version(dir)?.0)
}

/// The live tables of a database, by level and number.
type LiveTables = Vec<(u32, u64)>;

/// The live tables of the database in `dir`, and its comparator when it is not
/// [`BYTEWISE`] (excerpted for display).
fn live_version(dir: &Path) -> Result<(LiveTables, Option<String>)> {
    let version = leveldb_table::db::manifest::live_version(dir)?;
    let comparator = version
        .comparator
        .as_deref()
        .filter(|&name| name != BYTEWISE.as_bytes())
        .map(leveldb_table::excerpt);
    let mut live = Vec::new();
    for level in 0..version.levels.len() {
        for table in version.files(level) {
            live.push((level as u32, table.number));
        }
    }
    Ok((live, comparator))
}

/// The files of `dir` named as LevelDB names tables (`NNNNNN.ldb`, or `.sst` as
/// before 1.14), and those of Basho's level directories (`sst_N/NNNNNN.sst`), by
/// number; any file type.
fn named_like_tables(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let basho_level = path
            .file_name()
            .and_then(|name| name.to_str()?.strip_prefix("sst_")?.parse::<u32>().ok());
        if basho_level.is_some() && path.is_dir() {
            for entry in std::fs::read_dir(&path)? {
                add_if_named_like_table(entry?.path(), &mut files);
            }
        } else {
            add_if_named_like_table(path, &mut files);
        }
    }
    files.sort();
    Ok(files)
}

/// Adds `path` to `files` with its number if it is named like a table (`u64::MAX`
/// for a name whose number does not parse).
fn add_if_named_like_table(path: PathBuf, files: &mut Vec<(u64, PathBuf)>) {
    if !path.extension().is_some_and(|e| e == "ldb" || e == "sst") {
        return;
    }
    let number = path
        .file_stem()
        .and_then(|stem| stem.to_str()?.parse::<u64>().ok());
    files.push((number.unwrap_or(u64::MAX), path));
}
