//! `leveldb-bloom refilter`: gives the live tables of a closed database new filters
//! without rewriting their data ([`crate::refilter::table`], tables in parallel),
//! checks each new table as it reads it back, and commits the new version as
//! LevelDB commits one ([`crate::refilter::commit`]). The directory is opened once and every
//! file reached through that handle ([`DbDir`]). The old tables stay until LevelDB
//! next opens the database and deletes the files no version names.

pub mod command;
pub mod commit;
pub mod db_dir;
pub mod dry_run;
pub mod table;

use anyhow::{anyhow, bail, Result};
use rayon::prelude::*;
use std::io::BufWriter;
use std::path::Path;

use leveldb_bloom::BloomFilterPolicy;
use leveldb_table::db::log_writer::LogWriter;
use leveldb_table::db::manifest::{live_version_in, LiveTable, Version};
use serde::Serialize;

use crate::hints::{reader_needs, KEYS_IN_LOG};
use crate::output::print_warning;
use crate::refilter::commit::{check_room, Commit, DbLock};
use crate::refilter::db_dir::{ownership, DbDir, Ownership};
use crate::refilter::table::{Job, TableRefiltered};

/// What `refilter` did.
#[derive(Debug, Serialize)]
pub struct RefilterReport {
    pub database: String,
    pub policy: &'static str,
    pub bits_per_key: u32,
    /// Whether a new version was committed (`CURRENT` names the new MANIFEST).
    pub committed: bool,
    pub manifest: Option<String>,
    pub tables: Vec<TableRefiltered>,
    /// Why nothing was committed, when nothing was: the error with its context chain.
    pub error: Option<String>,
    /// What becomes of the old files, once committed; or, with no live table, how
    /// to get the log's keys into tables.
    pub note: Option<&'static str>,
    /// What a program needs for LevelDB to use the new filters, once committed.
    pub reader: Option<&'static str>,
}

impl RefilterReport {
    pub fn text(&self) -> String {
        let mut out = String::new();
        for t in &self.tables {
            out += &format!(
                "level {}: {} -> {}: {} entries, filter block {} bytes, {:.2} bits per key, {} false positives\n",
                t.level,
                t.old,
                t.new,
                t.entries,
                t.filter_block_bytes,
                t.measured_bits_per_key,
                t.false_positive_percent
                    .map_or("no".into(), |p| format!("{p:.2}%")),
            );
        }
        match (&self.manifest, &self.error) {
            (Some(manifest), None) => out += &format!(
                "{}: {} tables refiltered with {} at {} bits per key; CURRENT names {manifest}.\n{OLD_FILES}\n{}\n",
                self.database,
                self.tables.len(),
                self.policy,
                self.bits_per_key,
                self.reader.unwrap_or_default(),
            ),
            (None, None) => out += &format!(
                "{}: no live tables: nothing to do. {} Then run refilter again.\n",
                self.database,
                self.note.unwrap_or_default()
            ),
            // The error itself is printed once, on stderr, as every failure is.
            (_, Some(_)) => out += &format!("{}: nothing changed (the error is on stderr).\n", self.database),
        }
        out
    }
}

const OLD_FILES: &str = "The old tables and MANIFEST are no longer live: LevelDB deletes them when it next opens the database. \
To undo, run refilter again with another policy or bits per key.";

/// Refilters the database in `dir` with `policy`: the report, and the error that left
/// the database unchanged (also the report's `error`, for its text and JSON).
pub fn refilter(dir: &Path, policy: BloomFilterPolicy) -> (RefilterReport, Result<()>) {
    let mut report = RefilterReport {
        database: dir.display().to_string(),
        policy: policy.name(),
        bits_per_key: policy.bits_per_key(),
        committed: false,
        manifest: None,
        tables: Vec::new(),
        error: None,
        note: None,
        reader: None,
    };
    let outcome = match commit_refiltered(dir, policy, &mut report) {
        Ok(committed) => {
            report.committed = committed;
            report.note = Some(if committed { OLD_FILES } else { KEYS_IN_LOG });
            report.reader = committed.then(|| reader_needs(policy));
            Ok(())
        }
        Err(error) => {
            // Whatever was written is removed again: the report lists nothing done.
            report.manifest = None;
            report.tables.clear();
            report.error = Some(format!("{error:#}"));
            Err(error)
        }
    };
    (report, outcome)
}

/// Extra room asked of the file system besides the estimated tables: the MANIFEST,
/// `CURRENT`'s temporary file, and slack for the file system's own blocks.
const HEADROOM: u64 = 1 << 20;

fn commit_refiltered(
    path: &Path,
    policy: BloomFilterPolicy,
    report: &mut RefilterReport,
) -> Result<bool> {
    // The one lookup by path: everything after is relative to this handle.
    let dir = DbDir::open(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
    // Not a database: no LOCK is made in it (in a database, LevelDB makes one too).
    if !dir.exists("CURRENT").unwrap_or(false) {
        let missing = std::io::Error::from_raw_os_error(libc::ENOENT);
        bail!(
            "{}: {missing}: not a LevelDB database",
            dir.display("CURRENT")
        );
    }
    // Held until the end; LOCK stays, as LevelDB leaves it, whatever happens.
    let _lock = DbLock::acquire(&dir)?;
    refilter_locked(&dir, policy, report)
}

/// [`commit_refiltered`] once the database's `LOCK` is held.
fn refilter_locked(
    dir: &DbDir,
    policy: BloomFilterPolicy,
    report: &mut RefilterReport,
) -> Result<bool> {
    let version = live_version_in(dir)?;
    // Any key order: a filter holds its data block's user keys whatever their order,
    // and the new MANIFEST repeats the comparator's name, byte for byte, for LevelDB
    // to check when it opens the database. A MANIFEST that names none is no
    // LevelDB's (it writes the name first, always): left alone.
    if version.comparator.is_none() {
        bail!(
            "{}: records no comparator: not a MANIFEST LevelDB wrote",
            version.manifest.display()
        );
    }
    let live: Vec<&LiveTable> = version.levels.iter().flatten().collect();
    if live.is_empty() {
        return Ok(false);
    }
    check_room(dir, room_needed(&live, policy))?;
    let first = next_free_number(dir, &version)?;
    let numbers = FileNumbers::after(first, live.len())?;
    let mut commit = Commit::new(dir);
    let mut done = Vec::with_capacity(live.len());
    // A few tables per thread at a time, so that the open files stay few: opened and
    // created one after the other, in the MANIFEST's order; written in parallel,
    // each by one thread (memory: a table's filter block and index, and one data
    // block, per thread).
    let batch = 2 * rayon::current_num_threads().max(1);
    for (tables, numbers) in live.chunks(batch).zip((first..).step_by(batch)) {
        let jobs = tables
            .iter()
            .zip(numbers..)
            .map(|(table, number)| Job::open(dir, table, number, &mut commit))
            .collect::<Result<Vec<Job>>>()?;
        done.extend(
            jobs.par_iter()
                .map(|job| job.run(dir, policy))
                .collect::<Result<Vec<_>>>()?,
        );
    }
    let (tables, refiltered): (Vec<LiveTable>, Vec<TableRefiltered>) = done.into_iter().unzip();
    report.tables = refiltered;
    let manifest = format!("MANIFEST-{:06}", numbers.manifest);
    let manifest_like = like_file(dir, &manifest_name(&version))?;
    let file = commit.create(&manifest, manifest_like)?;
    let snapshot = version.snapshot(tables, numbers.next_file).encode();
    let mut log = LogWriter::new(BufWriter::new(file));
    log.add_record(&snapshot)
        .map_err(anyhow::Error::from)
        .and_then(|()| Ok(log.into_inner().into_inner().map_err(|e| e.into_error())?))
        .map_err(|e| anyhow!("{}: {e}", dir.display(&manifest)))
        .and_then(|file| commit.sync(&manifest, &file))?;
    report.manifest = Some(manifest.clone());
    let current_like = like_file(dir, "CURRENT")?;
    if let Some(warning) = commit.replace_current(&manifest, numbers.manifest, current_like)? {
        print_warning(&format!("{warning:#}"));
    }
    Ok(true)
}

/// The permissions and owner of the file `name` of `dir`, which a new file
/// replacing it takes.
fn like_file(dir: &DbDir, name: &str) -> Result<Ownership> {
    dir.open_regular(name)
        .and_then(|file| ownership(&file))
        .map_err(|e| anyhow!("{}: {e}", dir.display(name)))
}

/// The file name of the MANIFEST `version` was read from.
fn manifest_name(version: &Version) -> String {
    version
        .manifest
        .file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned())
}

/// The bytes the new tables need (an estimate: the old tables' sizes, plus their
/// filters at `bits_per_key` for entries of 16 bytes on disk, which few tables have
/// fewer of) and a MANIFEST. Running out of space anyway fails the run like any
/// error: nothing changes.
fn room_needed(live: &[&LiveTable], policy: BloomFilterPolicy) -> u64 {
    let tables: u64 = live.iter().map(|t| t.size).fold(0, u64::saturating_add);
    let filters = tables / 16 * u64::from(policy.bits_per_key()) / 8;
    tables.saturating_add(filters).saturating_add(HEADROOM)
}

/// The numbers of a refilter's new files: the tables' from the first free number
/// up, then the MANIFEST's, then the next-file number it records.
#[derive(Debug, PartialEq, Eq)]
struct FileNumbers {
    manifest: u64,
    next_file: u64,
}

impl FileNumbers {
    /// The numbers after `tables` new tables numbered from `first`; an error when
    /// they would pass the largest number a file can have.
    fn after(first: u64, tables: usize) -> Result<Self> {
        let manifest = u64::try_from(tables)
            .ok()
            .and_then(|n| first.checked_add(n));
        match manifest.and_then(|m| Some((m, m.checked_add(1)?))) {
            Some((manifest, next_file)) => Ok(Self {
                manifest,
                next_file,
            }),
            None => bail!(
                "file number {first} leaves no room for {tables} new tables and a MANIFEST                  below {}: nothing written",
                u64::MAX
            ),
        }
    }
}

/// The first number above the MANIFEST's next file number and above every number
/// LevelDB parses in a file name of the directory (LevelDB's `ParseFileName`:
/// `MANIFEST-N`, `N.log`, `N.ldb`, `N.sst`, `N.dbtmp`; other names are not
/// LevelDB's). A number with no number after it is refused.
fn next_free_number(dir: &DbDir, version: &Version) -> Result<u64> {
    let names = dir
        .names()
        .map_err(|e| anyhow!("{}: {e}", dir.path().display()))?;
    let mut highest = version.next_file.checked_sub(1);
    let mut highest_name = None;
    for name in &names {
        let Some(number) = name.to_str().and_then(leveldb_file_number) else {
            continue;
        };
        if highest.is_none_or(|h| number > h) {
            (highest, highest_name) = (Some(number), Some(name));
        }
    }
    let Some(highest) = highest else {
        return Ok(0);
    };
    highest.checked_add(1).ok_or_else(|| {
        let what = highest_name.map_or_else(
            || format!("{}: next file number", version.manifest.display()),
            |name| dir.display(&name.to_string_lossy()),
        );
        anyhow!("{what}: file number {highest} leaves no number for new files: nothing written")
    })
}

/// The number LevelDB 1.23's `ParseFileName` reads from `name`, for the files that
/// carry one: decimal digits without sign, a number past `u64::MAX` not parsed.
fn leveldb_file_number(name: &str) -> Option<u64> {
    let decimal = |digits: &str| {
        (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
            .then(|| digits.parse::<u64>().ok())
            .flatten()
    };
    if let Some(rest) = name.strip_prefix("MANIFEST-") {
        return decimal(rest);
    }
    let (digits, suffix) = name.split_once('.')?;
    matches!(suffix, "log" | "sst" | "ldb" | "dbtmp")
        .then(|| decimal(digits))
        .flatten()
}

#[cfg(test)]
mod tests;
