//! `leveldb-bloom explain` as text: one line per table LevelDB looks at, and a
//! summary per key.

use std::fmt::Write;

use crate::command_line::ReaderPolicy;
use crate::explain::{KeyExplained, Step};

/// Which reader the explanation assumes, and how to ask for the other: a program
/// that opens the database with no filter policy (LevelDB's default) reads no
/// filter at all.
pub fn reader_line(policy: ReaderPolicy) -> String {
    match policy {
        ReaderPolicy::Leveldb | ReaderPolicy::Legacy | ReaderPolicy::LegacySigned => format!(
            "reader: a program that opens the database with a bloom filter policy \
             (--policy {}); one with none (LevelDB's default options, plyvel's \
             bloom_filter_bits=0) reads no filter: --policy none\n",
            match policy {
                ReaderPolicy::Leveldb => "leveldb",
                ReaderPolicy::Legacy => "legacy",
                _ => "legacy-signed",
            }
        ),
        ReaderPolicy::None => "reader: a program that opens the database with no filter policy \
            (--policy none): every table consulted costs a data-block read; with a bloom \
            filter policy: --policy leveldb\n"
            .to_string(),
    }
}

pub fn text(keys: &[KeyExplained]) -> String {
    let mut out = String::new();
    for key in keys {
        let shown = key
            .key_text
            .as_ref()
            .map_or_else(|| format!("hex {}", key.key_hex), |t| format!("{t:?}"));
        let _ = writeln!(out, "key {shown}");
        for step in &key.steps {
            let _ = writeln!(out, "  {}", step_line(step));
        }
        let found = match &key.found {
            None => "absent: no table holds it".to_string(),
            Some(f) => match (f.place, f.table) {
                ("log", _) => format!(
                    "{} in the log (seq {}): LevelDB answers from memory",
                    f.kind, f.sequence
                ),
                (_, Some(table)) => format!(
                    "{} in {table:06} (L{}, seq {}){}",
                    f.kind,
                    f.level.unwrap_or(0),
                    f.sequence,
                    if f.kind == "deletion" {
                        ": a Get answers not found"
                    } else {
                        ""
                    }
                ),
                _ => f.kind.to_string(),
            },
        };
        let _ = writeln!(
            out,
            "  summary: tables consulted {}, filters that saved a block read {}, false positives {}, data blocks read {}; {found}; log {}",
            key.tables_consulted,
            key.filters_saved_block_reads,
            key.false_positives,
            key.data_blocks_read,
            key.log
        );
    }
    out
}

fn step_line(step: &Step) -> String {
    let table = format!("L{} {:06}", step.level, step.table);
    if !step.range_holds_key {
        return format!("{table}  range excludes the key: not consulted");
    }
    let filter = match (&step.filter, &step.no_filter) {
        (Some(f), _) => {
            let mut s = format!("filter {}: {}", f.index, f.answer);
            if let (Some(k), Some(bits)) = (f.k, f.bits) {
                let _ = write!(s, " (k={k}, {bits} bits; probes {:?}", f.probes);
                if !f.clear_probes.is_empty() {
                    let _ = write!(s, ", clear {:?}", f.clear_probes);
                }
                s.push(')');
            }
            if let Some(rule) = f.rule {
                let _ = write!(s, " [{rule}]");
            }
            s
        }
        (None, Some(why)) => format!("no filter: {why}"),
        (None, None) => "no filter".to_string(),
    };
    let block = match step.data_block_read {
        Some(offset) => format!("data block at {offset} read"),
        None if step.filter.as_ref().is_some_and(|f| f.answer == "absent") => {
            "no block read".to_string()
        }
        None => "no block".to_string(),
    };
    let outcome = match (step.outcome, step.sequence) {
        (Some(o), Some(seq)) => format!("{o} (seq {seq})"),
        (Some(o), None) => o.to_string(),
        (None, _) => String::new(),
    };
    format!("{table}  {filter}  {block}  {outcome}")
        .trim_end()
        .to_string()
}
