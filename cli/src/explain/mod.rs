//! Following one key through a database as LevelDB 1.23's `Version::Get` does:
//! level-0 tables whose range holds the key, newest first, then
//! at most one table per deeper level, until the key is found as a value or a
//! deletion; in each table, the index entry whose block may hold the key, the filter
//! LevelDB asks about that block and its answer, and, when the block is read, what
//! it holds. With `--log`, the write-ahead log that LevelDB replays into memory, where
//! a Get looks first.

pub mod command;
pub mod log_keys;
pub mod text;

use std::path::Path;

use anyhow::{anyhow, Result};
use leveldb_bloom::hash::{bloom_hash_with, TailBytes};
use leveldb_bloom::Filter;
use leveldb_table::db::manifest::{table_file_at_level, LiveTable, Version};
use leveldb_table::internal_key::{
    compare_internal_keys, lookup_key, parse_internal_key, EntryKind,
};
use leveldb_table::{excerpt, FilterBlock, FilterPolicy, FilterSeen, Lookup, ReadAt, Table};
use serde::Serialize;

use crate::hex::hex;

/// The filter policy of the reader whose Gets are explained.
#[derive(Clone, Copy, Debug)]
pub struct Reader {
    /// The policy's name: LevelDB reads only the filter block `filter.` + name.
    pub policy_name: Option<&'static str>,
    /// How the policy's hash reads a key's 1–3 tail bytes.
    pub tail_bytes: TailBytes,
}

/// What the filter LevelDB consults for the key's block answered.
#[derive(Debug, Serialize)]
pub struct FilterStep {
    /// Which filter of the table's filter block (`data block offset >> base_lg`).
    pub index: usize,
    /// Whether LevelDB asks the filter policy (`KeyMayMatch`) about this filter: it
    /// does for every filter the filter block's offsets give, empty ones included.
    pub policy_asked: bool,
    /// `absent` (no block read) or `may-match`.
    pub answer: &'static str,
    /// Why the answer came without the filter's bits, when it did.
    pub rule: Option<&'static str>,
    pub k: Option<u8>,
    pub bits: Option<u64>,
    /// The key's probe bit positions, in LevelDB's order, and those found clear.
    pub probes: Vec<u64>,
    pub clear_probes: Vec<u64>,
}

/// One table LevelDB looks at for the key.
#[derive(Debug, Serialize)]
pub struct Step {
    pub level: usize,
    pub table: u64,
    pub file: String,
    /// Whether the table's key range holds the key (LevelDB looks in it only then).
    pub range_holds_key: bool,
    /// The filter's answer, when LevelDB consults one.
    pub filter: Option<FilterStep>,
    /// Why no filter was consulted, when none was.
    pub no_filter: Option<String>,
    /// The offset of the data block LevelDB reads, when it reads one.
    pub data_block_read: Option<u64>,
    /// `value`, `deletion`, `not in table` or, after a filter answered `may-match`
    /// for a key the table does not hold, `false positive`.
    pub outcome: Option<&'static str>,
    pub sequence: Option<u64>,
}

/// Where the key was found, if it was.
#[derive(Debug, Serialize)]
pub struct Found {
    /// `value` or `deletion` (a Get then answers "not found").
    pub kind: &'static str,
    pub sequence: u64,
    /// `table`, or `log` (a write not yet in any table).
    pub place: &'static str,
    pub table: Option<u64>,
    pub level: Option<usize>,
}

/// A Get of one key, explained.
#[derive(Debug, Serialize)]
pub struct KeyExplained {
    pub key_hex: String,
    /// The key as text, when it is printable UTF-8.
    pub key_text: Option<String>,
    /// `not read` (without `--log`), or the log files read.
    pub log: String,
    pub steps: Vec<Step>,
    pub tables_consulted: usize,
    pub filters_saved_block_reads: usize,
    pub false_positives: usize,
    pub data_blocks_read: usize,
    pub found: Option<Found>,
}

impl KeyExplained {
    /// `key` before its Get: nothing consulted, the log not read.
    fn before_the_get(key: &[u8]) -> Self {
        KeyExplained {
            key_hex: hex(key),
            key_text: std::str::from_utf8(key)
                .ok()
                .filter(|s| s.chars().all(|c| !c.is_control()))
                .map(str::to_string),
            log: "not read (keys written since the last flush are not shown; --log reads it)"
                .into(),
            steps: Vec::new(),
            tables_consulted: 0,
            filters_saved_block_reads: 0,
            false_positives: 0,
            data_blocks_read: 0,
            found: None,
        }
    }
}

/// Explains a Get of `key` in the database at `dir` whose current version is
/// `version`; `log` is what the write-ahead log holds for the key, when it was read.
pub fn explain(
    dir: &Path,
    version: &Version,
    reader: Reader,
    key: &[u8],
    log: Option<(String, Option<Found>)>,
) -> Result<KeyExplained> {
    let mut explained = KeyExplained::before_the_get(key);
    if let Some((files, found)) = log {
        explained.log = files;
        if let Some(found) = found {
            // A Get finds it in memory first: no table is consulted.
            explained.found = Some(found);
            return Ok(explained);
        }
    }
    let lookup = lookup_key(key, version.last_sequence);
    for table in version.files(0) {
        let holds = key >= table.smallest.user_key() && key <= table.largest.user_key();
        let step = if holds {
            consult(dir, table, reader, key, &lookup)?
        } else {
            skipped(dir, table)
        };
        if record(&mut explained, step) {
            return Ok(explained);
        }
    }
    for level in 1..version.levels.len() {
        let files = version.files(level);
        // The first table whose largest key is at or after the lookup key.
        let at = files.partition_point(|t| compare_internal_keys(&t.largest.0, &lookup).is_lt());
        let Some(table) = files.get(at) else {
            continue;
        };
        let step = if key >= table.smallest.user_key() {
            consult(dir, table, reader, key, &lookup)?
        } else {
            skipped(dir, table)
        };
        if record(&mut explained, step) {
            return Ok(explained);
        }
    }
    Ok(explained)
}

/// Adds `step` to the explanation; `true` when the key was found there (LevelDB
/// stops).
fn record(explained: &mut KeyExplained, step: Step) -> bool {
    if step.range_holds_key {
        explained.tables_consulted += 1;
    }
    if step.filter.as_ref().is_some_and(|f| f.answer == "absent") {
        explained.filters_saved_block_reads += 1;
    }
    if step.outcome == Some("false positive") {
        explained.false_positives += 1;
    }
    if step.data_block_read.is_some() {
        explained.data_blocks_read += 1;
    }
    let found = match step.outcome {
        Some(kind @ ("value" | "deletion")) => Some(Found {
            kind,
            sequence: step.sequence.unwrap_or(0),
            place: "table",
            table: Some(step.table),
            level: Some(step.level),
        }),
        _ => None,
    };
    explained.steps.push(step);
    explained.found = found;
    explained.found.is_some()
}

/// The step of a table LevelDB does not look in (its range excludes the key).
pub fn skipped(dir: &Path, table: &LiveTable) -> Step {
    Step {
        level: table.level,
        table: table.number,
        file: table_file_at_level(dir, table.level, table.number)
            .display()
            .to_string(),
        range_holds_key: false,
        filter: None,
        no_filter: None,
        data_block_read: None,
        outcome: None,
        sequence: None,
    }
}

/// LevelDB's `Table::InternalGet` for the key in `table`.
fn consult(
    dir: &Path,
    table: &LiveTable,
    reader: Reader,
    key: &[u8],
    lookup: &[u8],
) -> Result<Step> {
    let path = table_file_at_level(dir, table.level, table.number);
    let mut step = skipped(dir, table);
    step.range_holds_key = true;
    let named = |e: &dyn std::fmt::Display| anyhow!("{}: {e}", path.display());
    let file = leveldb_table::open_regular_file(&path).map_err(|e| named(&e))?;
    get_in_table(&file, reader, key, lookup, &mut step).map_err(|e| named(&e))?;
    Ok(step)
}

/// LevelDB's `Table::InternalGet` for `key` (`lookup`: its lookup key) in the table
/// read from `source`, told in `step`: the filter's answer, the block read and
/// what it holds for the key.
pub fn get_in_table<R: ReadAt + ?Sized>(
    source: &R,
    reader: Reader,
    key: &[u8],
    lookup: &[u8],
    step: &mut Step,
) -> leveldb_table::Result<()> {
    let table = Table::open(source)?;
    let key_may_match = |key: &[u8], filter: &[u8]| {
        Filter::new(filter).may_contain_hash(bloom_hash_with(key, reader.tail_bytes))
    };
    let policy = reader.policy_name.map(|name| FilterPolicy {
        name,
        key_may_match: &key_may_match,
    });
    let got = table.get(lookup, policy)?;
    let Some(handle) = got.data_block else {
        step.no_filter = Some("the key sorts after the table's last block".into());
        step.outcome = Some("not in table");
        return Ok(());
    };
    match (&got.filter, reader.policy_name) {
        (
            FilterSeen::Asked {
                filters,
                index,
                may_match,
            },
            _,
        ) => match filters.ignored() {
            Some(e) => {
                step.no_filter = Some(format!("LevelDB ignores the filter block: {}", e.kind()))
            }
            None => {
                step.filter = Some(filter_step(
                    filters,
                    *index,
                    *may_match,
                    key,
                    reader.tail_bytes,
                ))
            }
        },
        (_, Some(name)) => step.no_filter = Some(missing_filter_reason(&table, name)?),
        (_, None) => step.no_filter = Some("the reader has no filter policy".into()),
    }
    if !got.block_read {
        return Ok(());
    }
    step.data_block_read = Some(handle.offset);
    let entry = (got.entry.as_ref()).and_then(|(entry, _)| parse_internal_key(entry));
    match entry {
        Some(entry) if entry.user_key == key => {
            step.outcome = Some(match entry.kind {
                EntryKind::Value => "value",
                EntryKind::Deletion => "deletion",
            });
            step.sequence = Some(entry.sequence);
        }
        _ if step.filter.as_ref().is_some_and(|f| f.rule.is_none()) => {
            step.outcome = Some("false positive")
        }
        _ => step.outcome = Some("not in table"),
    }
    Ok(())
}

/// Why a table has no filter block under the reader's policy name: the names it
/// has instead, each a short escaped excerpt.
fn missing_filter_reason<R: ReadAt + ?Sized>(
    table: &Table<'_, R>,
    name: &str,
) -> leveldb_table::Result<String> {
    let others: Vec<String> = (table.filter_block_names()?.iter())
        .map(|name| excerpt(name))
        .collect();
    Ok(if others.is_empty() {
        "the table has no filter block".into()
    } else {
        format!(
            "the table's filter block is named {}; a reader whose policy is {name} ignores it",
            others.join(", ")
        )
    })
}

/// LevelDB's `FilterBlockReader::KeyMayMatch` with filter `index` of `filters`,
/// which answered `may_match`: the rule or the probes that gave the answer, the key
/// hashed as `tail_bytes` says.
fn filter_step(
    filters: &FilterBlock,
    index: usize,
    may_match: bool,
    key: &[u8],
    tail_bytes: TailBytes,
) -> FilterStep {
    let mut step = FilterStep {
        index,
        policy_asked: false,
        answer: if may_match { "may-match" } else { "absent" },
        rule: None,
        k: None,
        bits: None,
        probes: Vec::new(),
        clear_probes: Vec::new(),
    };
    match filters.lookup(index) {
        Lookup::MayMatch => step.rule = Some("no filter of this index, or bad offsets: may match"),
        Lookup::Absent => {
            step.rule = Some("offsets start = limit past the offset array: absent for every key");
        }
        Lookup::Filter(bytes) => {
            step.policy_asked = true;
            let filter = Filter::new(bytes);
            let h = bloom_hash_with(key, tail_bytes);
            step.k = bytes.last().copied();
            step.bits = Some(8 * bytes.len().saturating_sub(1) as u64);
            let probed = filter.probe_bits(h);
            if probed.is_empty() {
                step.rule = Some(if bytes.len() < 2 {
                    "a filter shorter than 2 bytes: absent"
                } else {
                    "k = 0 or above 30: may match"
                });
            }
            step.probes = probed.iter().map(|&(bit, _)| bit).collect();
            step.clear_probes = probed
                .iter()
                .filter(|(_, set)| !set)
                .map(|&(bit, _)| bit)
                .collect();
        }
    }
    step
}

#[cfg(test)]
mod tests;
