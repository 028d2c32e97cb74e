//! What LevelDB's write-ahead logs hold for given keys: the logs a reopened database
//! replays into memory (numbered from the current version's log number on, and its
//! previous log), where a Get looks before any table.

use anyhow::{anyhow, Result};
use std::collections::BTreeMap;
use std::path::Path;

use leveldb_table::db::log::open_log;
use leveldb_table::db::manifest::Version;
use leveldb_table::db::write_batch::for_each_batch_entry;
use leveldb_table::internal_key::EntryKind;

use crate::explain::Found;

/// The logs of `dir` that LevelDB replays, read for `keys`: a description of what
/// was read, and each key's newest entry there.
pub fn newest_in_logs(
    dir: &Path,
    version: &Version,
    keys: &[Vec<u8>],
) -> Result<(String, BTreeMap<Vec<u8>, Found>)> {
    let mut logs = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| anyhow!("{}: {e}", dir.display()))? {
        let path = entry?.path();
        let number = path
            .extension()
            .filter(|ext| *ext == "log")
            .and(path.file_stem())
            .and_then(|stem| stem.to_str()?.parse::<u64>().ok());
        if let Some(number) = number {
            if number >= version.log_number || number == version.prev_log_number {
                logs.push((number, path));
            }
        }
    }
    logs.sort();
    let mut found: BTreeMap<Vec<u8>, Found> = BTreeMap::new();
    for (_, path) in &logs {
        let mut log = open_log(path).map_err(|e| anyhow!("{}: {e}", path.display()))?;
        // Records after a damaged one are not read here; LevelDB (without
        // paranoid_checks) skips the damage and replays what follows. A batch's
        // entries before its own damage stay, as in LevelDB's memtable.
        while let Ok(Some((_, record))) = log.next_record() {
            let _ = for_each_batch_entry(&record, |entry| {
                if keys.iter().any(|k| k == entry.key) {
                    found.insert(
                        entry.key.to_vec(),
                        Found {
                            kind: match entry.kind {
                                EntryKind::Value => "value",
                                EntryKind::Deletion => "deletion",
                            },
                            sequence: entry.sequence,
                            place: "log",
                            table: None,
                            level: None,
                        },
                    );
                }
            });
        }
    }
    let read = if logs.is_empty() {
        "read: no log to replay".to_string()
    } else {
        let names: Vec<String> = logs
            .iter()
            .map(|(_, p)| {
                p.file_name()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        format!("read: {}", names.join(", "))
    };
    Ok((read, found))
}
