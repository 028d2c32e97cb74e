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

#[derive(Default, Serialize)]
pub struct Report {
    pub tables: Vec<TableReport>,
    pub keys: usize,
    pub missed: usize,
    pub errors: Vec<ErrorReport>,
    pub skipped: Vec<String>,
    pub notes: Vec<String>,
}

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
                self.keys += table.keys;
                self.missed += table.missed;
                self.tables.push(*table);
            }
            Outcome::Unreadable(offset, message) => self.error(file, offset, message),
            Outcome::Skipped => self.skipped.push(file.display().to_string()),
        }
    }

    /// No key missed, every table read.
    pub fn clean(&self) -> bool {
        self.missed == 0 && self.errors.is_empty()
    }

    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data")
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        for t in &self.tables {
            let fp = match (t.fp_measured, t.fp_theory) {
                (Some(measured), Some(theory)) => {
                    format!(
                        "fp {:.2}% (theory {:.2}%)",
                        100.0 * measured,
                        100.0 * theory
                    )
                }
                _ => "fp -".to_string(),
            };
            let _ = writeln!(
                out,
                "{}  {}  {}  filters {}  keys {}  missed {}  {:.1} bits/key  k={}  {} filter bytes  {}",
                t.file,
                t.dialect.name(),
                t.filter_name.as_deref().unwrap_or("(no filter)"),
                t.filters,
                t.keys,
                t.missed,
                t.bits_per_key,
                t.k.map_or("-".to_string(), |k| k.to_string()),
                t.filter_bytes,
                fp
            );
            for key in &t.missed_keys {
                let _ = writeln!(out, "  MISSED {key}");
            }
            if t.missed_by_old_x86_leveldb > 0 {
                let _ = writeln!(
                    out,
                    "  warning: LevelDB before 1.18 on x86 (signed hash) would miss {} keys",
                    t.missed_by_old_x86_leveldb
                );
            }
        }
        for e in &self.errors {
            let at = e
                .offset
                .map_or(String::new(), |o| format!(" at offset {o}"));
            let _ = writeln!(out, "ERROR {}{}: {}", e.file, at, e.message);
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
        let (weighted, weight) =
            self.tables
                .iter()
                .fold((0.0, 0usize), |(sum, n), t| match t.fp_theory {
                    Some(fp) => (sum + fp * t.keys as f64, n + t.keys),
                    None => (sum, n),
                });
        let _ = writeln!(
            out,
            "\ntables: {} ({}); keys: {}; missed: {}; filter memory: {} bytes; expected false positives: {}; errors: {}; skipped: {}",
            self.tables.len(),
            if dialects.is_empty() { "none".to_string() } else { dialects.join(", ") },
            self.keys,
            self.missed,
            filter_bytes,
            if weight == 0 { "-".to_string() } else { format!("{:.2}%", 100.0 * weighted / weight as f64) },
            self.errors.len(),
            self.skipped.len()
        );
        let _ = writeln!(
            out,
            "{}",
            if self.clean() {
                "OK: no key can disappear behind these filters"
            } else if self.missed > 0 {
                "FAILED: keys would be missed (listed above)"
            } else {
                "FAILED: some tables could not be read (listed above)"
            }
        );
        out
    }
}
