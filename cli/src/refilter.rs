//! `leveldb-bloom refilter`: gives the live tables of a closed database new filters
//! without rewriting their data (see `leveldb_table::rewrite_with_filter`), checks
//! each new table with the audit, and commits the new version as LevelDB commits
//! one ([`crate::commit`]). The old tables stay until LevelDB next opens the
//! database and deletes the files no version names.

use anyhow::{anyhow, bail, Result};
use std::io::BufWriter;
use std::path::Path;

use leveldb_bloom::BloomFilterPolicy;
use leveldb_table::log_writer::LogWriter;
use leveldb_table::manifest::{live_version, table_file, LiveTable, Version};
use leveldb_table::ErrorKind;
use serde::Serialize;

use crate::commit::{free_bytes, Commit, DbLock};
use crate::database::BYTEWISE;
use crate::hints::{reader_needs, KEYS_IN_LOG};

/// One table given new filters.
#[derive(Debug, Serialize)]
pub struct TableRefiltered {
    pub level: usize,
    /// The old table's file, and the new one's.
    pub old: String,
    pub new: String,
    pub entries: u64,
    pub old_size: u64,
    pub new_size: u64,
    pub filter_block_bytes: u64,
    /// The new filters' bits per key, offset array and empty filters left out, as
    /// the audit measures them.
    pub bits_per_key: f64,
    pub false_positive_percent: Option<f64>,
}

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
    /// Why nothing was committed, when nothing was.
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
                t.bits_per_key,
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
            (_, Some(error)) => out += &format!(
                "{}: nothing changed: {error}\n",
                self.database
            ),
        }
        out
    }
}

const OLD_FILES: &str = "The old tables and MANIFEST are no longer live: LevelDB deletes them when it next opens the database. \
To undo, run refilter again with another policy or bits per key.";

/// Refilters the database in `dir` with `policy`; the report's `error` says why
/// nothing changed when it did not.
pub fn refilter(dir: &Path, policy: BloomFilterPolicy) -> RefilterReport {
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
    match commit_refiltered(dir, policy, &mut report) {
        Ok(committed) => {
            report.committed = committed;
            report.note = Some(if committed { OLD_FILES } else { KEYS_IN_LOG });
            report.reader = committed.then(|| reader_needs(policy));
        }
        Err(error) => {
            // Whatever was written is removed again: the report lists nothing done.
            report.manifest = None;
            report.tables.clear();
            report.error = Some(error.to_string());
        }
    }
    report
}

/// Extra room asked of the file system besides the estimated tables: the MANIFEST,
/// `CURRENT`'s temporary file, and slack for the file system's own blocks.
const HEADROOM: u64 = 1 << 20;

fn commit_refiltered(
    dir: &Path,
    policy: BloomFilterPolicy,
    report: &mut RefilterReport,
) -> Result<bool> {
    // Not a database: no LOCK is made in it (in a database, LevelDB makes one too).
    let current = dir.join("CURRENT");
    if let Err(e) = std::fs::symlink_metadata(&current) {
        bail!("{}: {e}: not a LevelDB database", current.display());
    }
    let _lock = DbLock::acquire(dir)?;
    let version = live_version(dir)?;
    if version.comparator.as_deref() != Some(BYTEWISE) {
        bail!(
            "{}: comparator {:?}: only databases ordered by {BYTEWISE:?} are refiltered",
            version.manifest.display(),
            version.comparator.as_deref().unwrap_or("(none recorded)")
        );
    }
    let live: Vec<&LiveTable> = version.levels.iter().flatten().collect();
    if live.is_empty() {
        return Ok(false);
    }
    check_free_space(dir, &live, policy)?;
    let mut next = next_free_number(dir, &version)?;
    let mut commit = Commit::new(dir);
    let mut tables = Vec::new();
    for table in live {
        let (new, done) = refilter_table(dir, table, next, policy, &mut commit)?;
        tables.push(new);
        report.tables.push(done);
        next += 1;
    }
    let manifest_number = next;
    let manifest = format!("MANIFEST-{manifest_number:06}");
    let (path, file) = commit.create(&manifest)?;
    let snapshot = version.snapshot(tables, manifest_number + 1).encode();
    let mut log = LogWriter::new(BufWriter::new(file));
    log.add_record(&snapshot)
        .and_then(|()| log.into_inner().into_inner().map_err(|e| e.into_error()))
        .map_err(|e| anyhow!("{}: {e}", path.display()))
        .and_then(|file| commit.sync(&path, &file))?;
    report.manifest = Some(manifest.clone());
    if let Some(warning) = commit.replace_current(&manifest, manifest_number)? {
        eprintln!("leveldb-bloom: WARNING {warning}");
    }
    Ok(true)
}

/// Writes table `table` of `dir` again under number `number` with `policy`'s
/// filters, synced, and audits it; its new MANIFEST entry and what was done.
fn refilter_table(
    dir: &Path,
    table: &LiveTable,
    number: u64,
    policy: BloomFilterPolicy,
    commit: &mut Commit,
) -> Result<(LiveTable, TableRefiltered)> {
    let old_path = table_file(dir, table.number);
    let old = leveldb_table::open_regular_file(&old_path)
        .map_err(|e| anyhow!("{}: {e}", old_path.display()))?;
    let old_size = old
        .metadata()
        .map_err(|e| anyhow!("{}: {e}", old_path.display()))?
        .len();
    if old_size != table.size {
        // LevelDB reads the footer where the MANIFEST's size puts it.
        bail!(
            "{}: {old_size} bytes, but the MANIFEST says {}",
            old_path.display(),
            table.size
        );
    }
    let (new_path, file) = commit.create(&format!("{number:06}.ldb"))?;
    let mut out = BufWriter::new(file);
    let written = leveldb_table::rewrite_with_filter(&old, &mut out, policy.name(), |keys, dst| {
        policy.append_filter(keys.iter(), dst)
    })
    .map_err(|e| {
        // A write error is the new table's; any other, the old table's.
        let file = match e.kind() {
            ErrorKind::Write(_) => &new_path,
            _ => &old_path,
        };
        anyhow!("{}: {e}", file.display())
    })?;
    let file = out
        .into_inner()
        .map_err(|e| anyhow!("{}: {}", new_path.display(), e.error()))?;
    commit.sync(&new_path, &file)?;
    let audit = check_new_table(&new_path, policy, written.entries)?;
    let done = TableRefiltered {
        level: table.level,
        old: old_path.display().to_string(),
        new: new_path.display().to_string(),
        entries: written.entries,
        old_size,
        new_size: written.size,
        filter_block_bytes: written.filter_block_len,
        bits_per_key: audit.bits_per_key,
        false_positive_percent: audit.false_positive_percent,
    };
    let new = LiveTable {
        number,
        size: written.size,
        ..table.clone()
    };
    Ok((new, done))
}

/// Reads the new table back as the audit reads a table: every block's checksum, the
/// filter under `policy`'s name, no key missed, every entry there.
fn check_new_table(
    path: &Path,
    policy: BloomFilterPolicy,
    entries: u64,
) -> Result<crate::audit::TableReport> {
    let failed = |why: &dyn std::fmt::Display| {
        anyhow!("{}: the new table fails its check: {why}", path.display())
    };
    let file = leveldb_table::open_regular_file(path).map_err(|e| failed(&e))?;
    let audit = crate::audit::audit(path.display().to_string(), &file, 0, &|_| {})
        .map_err(|e| failed(&e))?;
    if audit.filter_name.as_deref() != Some(policy.name()) || audit.filter_block_ignored.is_some() {
        return Err(failed(&format!("its filter is not {}", policy.name())));
    }
    if audit.missed > 0 || audit.entries as u64 != entries {
        return Err(failed(&format!(
            "{} keys missed, {} entries of {entries}",
            audit.missed, audit.entries
        )));
    }
    Ok(audit)
}

/// Refuses unless the file system has room for the new tables (an estimate: the old
/// tables' sizes, plus their filters at `bits_per_key` for entries of 16 bytes on
/// disk, which few tables have fewer of) and a MANIFEST. Running out of space anyway
/// fails the run like any error: nothing changes.
fn check_free_space(dir: &Path, live: &[&LiveTable], policy: BloomFilterPolicy) -> Result<()> {
    let tables: u64 = live.iter().map(|t| t.size).sum();
    let filters = tables / 16 * u64::from(policy.bits_per_key()) / 8;
    let needed = tables + filters + HEADROOM;
    let free = free_bytes(dir)?;
    if free < needed {
        bail!(
            "{}: {free} bytes free, about {needed} needed for the new tables: nothing written",
            dir.display()
        );
    }
    Ok(())
}

/// The first number no file of the database has: the MANIFEST's next file number,
/// or above, should a file of a higher number be there.
fn next_free_number(dir: &Path, version: &Version) -> Result<u64> {
    let mut next = version.next_file;
    for entry in std::fs::read_dir(dir).map_err(|e| anyhow!("{}: {e}", dir.display()))? {
        let name = entry
            .map_err(|e| anyhow!("{}: {e}", dir.display()))?
            .file_name();
        let name = name.to_string_lossy();
        let digits = name
            .strip_prefix("MANIFEST-")
            .unwrap_or(&name)
            .split('.')
            .next()
            .unwrap_or("");
        if let Ok(number) = digits.parse::<u64>() {
            next = next.max(number.saturating_add(1));
        }
    }
    Ok(next)
}
