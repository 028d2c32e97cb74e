//! The audit's report: as text for people, or as one JSON document whose field names
//! are stable (documented in the README).

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

use serde::Serialize;

use crate::audit::TableReport;

/// What became of one table file.
pub enum Outcome {
    Audited(Box<TableReport>),
    /// Not read: the offset where it broke (if it was read at all), and why.
    Unreadable(Option<u64>, String),
    /// Deleted between listing and reading (a compaction).
    Skipped,
}

#[derive(Serialize)]
pub struct ErrorReport {
    pub file: String,
    pub offset: Option<u64>,
    pub message: String,
}

impl ErrorReport {
    /// `FILE at offset N: message`.
    pub fn line(&self) -> String {
        let at = self
            .offset
            .map_or(String::new(), |o| format!(" at offset {o}"));
        format!("{}{}: {}", self.file, at, self.message)
    }
}

/// Where a directory's tables were taken from.
#[derive(Serialize)]
pub struct Database {
    pub path: String,
    /// `"manifest"`: the live tables of the current version; `"file names"`: no
    /// MANIFEST could be read, every file named like a table was audited.
    pub tables_from: &'static str,
}

/// The whole audit's outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Every table read, no key missed.
    Ok,
    /// Keys that a reader of their filter's name would not find.
    KeysMissed,
    /// No key missed in what was read, but something could not be read.
    Unreadable,
    /// Nothing to audit: no table, and no database whose current version was read
    /// (a directory with neither `CURRENT` nor table files: a wrong path).
    NothingAudited,
    /// Databases read whole, whose current versions list no table (a fresh
    /// database: what was written is in the log only), or whose tables a compaction
    /// deleted while the audit ran: no filter was checked, nothing can be missed.
    NoTables,
}

#[derive(Default, Serialize)]
pub struct Report {
    pub verdict: Option<Verdict>,
    pub databases: Vec<Database>,
    pub tables: Vec<TableReport>,
    /// Entries of all tables audited (every value and deletion, in every table).
    pub entries: usize,
    /// Each table's distinct user keys, summed: a key held by several tables
    /// counts once per table.
    pub distinct_user_keys_per_table: usize,
    pub missed: usize,
    /// The tables' measured false-positive rates, weighted by their keys.
    pub false_positive_percent: Option<f64>,
    pub errors: Vec<ErrorReport>,
    pub skipped: Vec<String>,
    pub notes: Vec<String>,
}

/// Who reads `leveldb.BuiltinBloomFilter` with each hash.
const UNSIGNED_READERS: &str =
    "readers of leveldb.BuiltinBloomFilter with the unsigned hash (--reader goleveldb, old-leveldb-arm)";
const SIGNED_READERS: &str =
    "readers of leveldb.BuiltinBloomFilter with the signed hash (--reader hyperleveldb, old-leveldb-x86)";

const GUIDANCE: &str = "\
what to do: Gets of the missed keys can answer \"not found\" while the keys are there.
  1. Until the filters are rewritten, read the database with no filter policy
     (options.filter_policy = NULL; plyvel: no bloom_filter_bits): LevelDB then
     reads every table it would consult, and finds every key.
  2. Rewrite every filter: open the database with the policy you mean to keep (the
     name LevelDB stores is its Name(); a filter block of another name is ignored)
     and compact the whole range (DB::CompactRange(nullptr, nullptr);
     leveldb_compact_range(db, NULL, 0, NULL, 0); plyvel: db.compact_range()).
     Compaction reads keys without filters and writes new ones for every table.
     Or, with the database closed, `leveldb-bloom refilter DB --bits-per-key 10`
     writes new filters without rewriting the data.
  3. Audit again.";

impl Report {
    pub fn error(&mut self, file: &Path, offset: Option<u64>, message: String) {
        self.errors.push(ErrorReport {
            file: file.display().to_string(),
            offset,
            message,
        });
    }

    pub fn add(&mut self, file: &Path, outcome: Outcome) {
        match outcome {
            Outcome::Audited(table) => {
                self.entries += table.entries;
                self.distinct_user_keys_per_table += table.distinct_user_keys;
                self.missed += table.missed;
                self.tables.push(*table);
            }
            Outcome::Unreadable(offset, message) => self.error(file, offset, message),
            Outcome::Skipped => self.skipped.push(file.display().to_string()),
        }
    }

    /// Settles the verdict and the summary figures once every table is in.
    pub fn finish(&mut self) {
        self.verdict = Some(if self.missed > 0 {
            Verdict::KeysMissed
        } else if !self.errors.is_empty() {
            Verdict::Unreadable
        } else if self.tables.is_empty()
            && !self.databases.iter().any(|d| d.tables_from == "manifest")
        {
            Verdict::NothingAudited
        } else if self.tables.is_empty() {
            Verdict::NoTables
        } else {
            Verdict::Ok
        });
        let (weighted, weight) = self.tables.iter().fold((0.0, 0usize), |(sum, n), t| {
            match t.false_positive_percent {
                Some(fp) => (
                    sum + fp * t.distinct_user_keys as f64,
                    n + t.distinct_user_keys,
                ),
                None => (sum, n),
            }
        });
        self.false_positive_percent = (weight > 0).then(|| weighted / weight as f64);
        for t in &self.tables {
            if let Some(why) = &t.filter_block_ignored {
                self.notes.push(format!(
                    "{}: LevelDB ignores its filter block ({why}): every key may match there",
                    t.file
                ));
            }
            let readers = [
                (
                    t.missed_by_unsigned_readers,
                    t.readings.unsigned,
                    UNSIGNED_READERS,
                ),
                (
                    t.missed_by_signed_readers,
                    t.readings.signed,
                    SIGNED_READERS,
                ),
            ];
            for (missed, counted, who) in readers.into_iter().filter(|(n, ..)| *n > 0) {
                let counted = if counted {
                    "counted as missed: if no such program reads this database, name its readers with --reader"
                } else {
                    "not counted: no --reader named reads it so"
                };
                self.notes.push(format!(
                    "{}: {who} would miss {missed} keys ({counted})",
                    t.file
                ));
            }
        }
    }

    /// No key missed and every table read: tables, or databases that have none.
    pub fn clean(&self) -> bool {
        matches!(self.verdict, Some(Verdict::Ok | Verdict::NoTables))
    }

    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data")
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        for t in &self.tables {
            let fp = t
                .false_positive_percent
                .map_or("fp -".to_string(), |fp| format!("fp {fp:.2}% measured"));
            let level = t.level.map_or(String::new(), |l| format!("L{l}  "));
            let _ = writeln!(
                out,
                "{}  {}{}  {}  filters {}  entries {}  missed {}  {:.1} bits/key ({:.1} for the whole block)  k={}  {} filter bytes  {}",
                t.file,
                level,
                t.dialect.name(),
                t.filter_name.as_deref().unwrap_or("(no filter)"),
                t.filters,
                t.entries,
                t.missed,
                t.measured_bits_per_key,
                t.true_bits_per_key,
                t.k.map_or("-".to_string(), |k| k.to_string()),
                t.filter_bytes,
                fp
            );
            for key in &t.missed_keys {
                let _ = writeln!(out, "  MISSED {key}");
            }
            if t.missed > t.missed_keys.len() {
                let _ = writeln!(
                    out,
                    "  ... and {} more missed keys (--max-missed)",
                    t.missed - t.missed_keys.len()
                );
            }
        }
        for e in &self.errors {
            let _ = writeln!(out, "ERROR {}", e.line());
        }
        for file in &self.skipped {
            let _ = writeln!(out, "skipped {file}: deleted while auditing (a compaction)");
        }
        for note in &self.notes {
            let _ = writeln!(out, "note: {note}");
        }
        let mut dialects: BTreeMap<&str, usize> = BTreeMap::new();
        for t in &self.tables {
            *dialects.entry(t.dialect.name()).or_default() += 1;
        }
        let dialects: Vec<String> = dialects.iter().map(|(d, n)| format!("{d} {n}")).collect();
        let filter_bytes: usize = self.tables.iter().map(|t| t.filter_bytes).sum();
        let _ = writeln!(
            out,
            "\ntables: {} ({}); entries: {} ({} distinct user keys per table, summed); missed: {}; filter memory: {} bytes; false positives: {} (measured on random absent keys); errors: {}; skipped: {}",
            self.tables.len(),
            if dialects.is_empty() { "none".to_string() } else { dialects.join(", ") },
            self.entries,
            self.distinct_user_keys_per_table,
            self.missed,
            filter_bytes,
            self.false_positive_percent.map_or("-".to_string(), |fp| format!("{fp:.2}%")),
            self.errors.len(),
            self.skipped.len()
        );
        if self.missed > 0 {
            let _ = writeln!(out, "{GUIDANCE}");
        }
        let without_filters = self
            .tables
            .iter()
            .filter(|t| t.filter_name.is_none())
            .count();
        if without_filters > 0 {
            let database = match &self.databases[..] {
                [one] => one.path.as_str(),
                _ => "DB",
            };
            let _ = writeln!(
                out,
                "note: {without_filters} of {} tables have no filter: every absent Get that \
                 reaches one reads a data block. `leveldb-bloom refilter --dry-run {database}` shows \
                 what filters would cost and save; the program must then open the database \
                 with a bloom filter policy (see `leveldb-bloom refilter --help`), or LevelDB \
                 reads none.",
                self.tables.len()
            );
        }
        let _ = writeln!(
            out,
            "{}",
            match self.verdict {
                Some(Verdict::Ok) => "OK: no key can disappear behind these filters",
                Some(Verdict::KeysMissed) => "FAILED: keys would be missed (listed above)",
                Some(Verdict::NothingAudited) =>
                    "FAILED: nothing audited: no LevelDB database (CURRENT) and no table file (*.ldb, *.sst) here",
                Some(Verdict::NoTables) =>
                    "NOTHING TO AUDIT: no live table, so no filter was checked (exit status 0: nothing can be missed yet)",
                _ => "FAILED: some tables could not be read (listed above)",
            }
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_line_names_the_file_and_the_offset_when_known() {
        let mut report = Report::default();
        report.error(Path::new("db/000005.ldb"), Some(52), "wrong magic".into());
        report.error(Path::new("db"), None, "no CURRENT".into());
        assert_eq!(
            report.errors[0].line(),
            "db/000005.ldb at offset 52: wrong magic"
        );
        assert_eq!(report.errors[1].line(), "db: no CURRENT");
    }

    #[test]
    fn the_verdict_is_unreadable_on_an_error_and_nothing_audited_on_nothing() {
        let mut nothing = Report::default();
        nothing.finish();
        assert_eq!(nothing.verdict, Some(Verdict::NothingAudited));
        assert!(!nothing.clean());
        // A database whose current version lists no table: clean, but not OK.
        let mut empty_db = Report::default();
        empty_db.databases.push(Database {
            path: "db".into(),
            tables_from: "manifest",
        });
        empty_db.finish();
        assert_eq!(empty_db.verdict, Some(Verdict::NoTables));
        assert!(empty_db.clean());
        assert!(!empty_db.text().contains("OK"), "{}", empty_db.text());
        let mut unreadable = Report::default();
        unreadable.add(Path::new("t.ldb"), Outcome::Unreadable(None, "gone".into()));
        unreadable.add(Path::new("u.ldb"), Outcome::Skipped);
        unreadable.finish();
        assert_eq!(unreadable.verdict, Some(Verdict::Unreadable));
        assert_eq!(unreadable.skipped, ["u.ldb"]);
    }
}
