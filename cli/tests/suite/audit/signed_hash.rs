//! The audit of filters built with the signed hash (LevelDB before 1.18 on x86,
//! HyperLevelDB, RocksDB's block-based filter, read under its own name too): unsigned
//! readers' misses named.

use std::path::Path;
use std::process::Command;

use super::goleveldb_database;
use crate::common::*;
use leveldb_bloom::hash::{hash_with, tail_is_ambiguous, TailBytes};
use leveldb_bloom::{BloomFilterPolicy, Filter};

/// Rewrites each filter of `table` (each but the first with `keep_first`) as a
/// writer with the signed hash builds it at 10 bits per key (LevelDB before 1.18 on
/// x86, HyperLevelDB, RocksDB's block-based filter), then calls `each` with its keys
/// and the new filter.
fn rewrite_with_signed_hash(
    table: &Path,
    keep_first: bool,
    mut each: impl FnMut(&[Vec<u8>], &[u8]),
) {
    let policy = BloomFilterPolicy::new(10);
    rewrite_filters(table, |i, keys, filter| {
        if keep_first && i == 0 {
            assert!(keys.iter().any(|key| tail_is_ambiguous(key)));
            return;
        }
        let hashes = keys
            .iter()
            .map(|key| hash_with(key, 0xbc9f1d34, TailBytes::Signed));
        policy.write_filter_of_hashes(hashes, filter).unwrap();
        each(keys, filter);
    });
}

/// The keys of `table`'s rewritten filters an unsigned reader (goleveldb) misses, in hex.
fn signed_rewrite_unsigned_misses(tables: &[std::path::PathBuf], keep_first: bool) -> Vec<String> {
    let mut missed = Vec::new();
    for table in tables {
        rewrite_with_signed_hash(table, keep_first, |keys, filter| {
            let written = Filter::new(filter);
            for key in keys {
                if !written.may_contain(key) {
                    missed.push(key.iter().map(|b| format!("{b:02x}")).collect::<String>());
                }
            }
        });
    }
    assert!(!missed.is_empty(), "no key an unsigned reader misses");
    missed.sort();
    missed
}

/// Filters built with the signed hash under `leveldb.BuiltinBloomFilter`, every one
/// of a table, as LevelDB before 1.18 on x86 and HyperLevelDB write them:
/// `legacy-signed`. goleveldb, which reads the name with the unsigned hash, would
/// miss keys: the audit fails (exit 1), unless the user names the readers
/// (`--reader hyperleveldb`), when those keys are a note.
#[test]
fn signed_filters_fail_for_unsigned_readers_unless_the_reader_is_named() {
    let (db, _keys) = goleveldb_database();
    // The live tables: those the audit reads (goleveldb leaves replaced ones behind
    // until it next opens the database).
    let tables = live_table_files(&db.0);
    let expected = signed_rewrite_unsigned_misses(&tables, false);
    let (code, json) = audit_json(&db.0);
    assert_eq!(
        (code, &json["verdict"]),
        (1, &"keys-missed".into()),
        "{json}"
    );
    let missed = |json: &serde_json::Value, field: &str| -> u64 {
        let tables = json["tables"].as_array().unwrap();
        tables.iter().map(|t| t[field].as_u64().unwrap()).sum()
    };
    for table in json["tables"].as_array().unwrap() {
        assert_eq!(table["dialect"], "legacy-signed", "{table}");
        assert_eq!(table["missed_by_signed_readers"], 0, "{table}");
    }
    assert_eq!(missed(&json, "missed"), expected.len() as u64);
    assert_eq!(
        missed(&json, "missed_by_unsigned_readers"),
        expected.len() as u64
    );
    let (code, json) = audit_json_with(&db.0, &["--reader", "hyperleveldb"]);
    assert_eq!((code, &json["verdict"]), (0, &"ok".into()), "{json}");
    assert_eq!(missed(&json, "missed"), 0);
    assert_eq!(
        missed(&json, "missed_by_unsigned_readers"),
        expected.len() as u64
    );
    let notes = json["notes"].to_string();
    assert!(
        notes.contains("with the unsigned hash (--reader goleveldb, old-leveldb-arm) would miss")
            && notes.contains("not counted"),
        "{notes}"
    );
}

/// Tables whose filters no one writer built (goleveldb's first filter, the signed
/// hash's after it): checked for goleveldb, every key it misses listed; exit 1.
#[test]
fn filters_of_mixed_writers_list_the_keys_unsigned_readers_miss() {
    let (db, _keys) = goleveldb_database();
    let tables = live_table_files(&db.0);
    let expected_missed = signed_rewrite_unsigned_misses(&tables, true);
    let (code, json) = audit_json_with(&db.0, &["--reader", "goleveldb"]);
    assert_eq!(code, 1);
    let mut missed = Vec::new();
    for table in json["tables"].as_array().unwrap() {
        assert_eq!(table["dialect"], "foreign", "{table}");
        missed.extend(
            table["missed_keys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap().to_string()),
        );
    }
    missed.sort();
    assert_eq!(
        (missed.len(), missed.first(), missed.last()),
        (
            expected_missed.len(),
            expected_missed.first(),
            expected_missed.last()
        )
    );
    assert_eq!(missed, expected_missed);
    assert_eq!(json["missed"], expected_missed.len());
    assert_eq!(json["verdict"], "keys-missed");

    // --max-missed caps the keys listed, never the count; the text says what to do.
    let output = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .args(["audit", "--max-missed", "3", "--reader", "goleveldb"])
        .arg(&db.0)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        text.matches("  MISSED ").count(),
        3 * tables.len(),
        "{text}"
    );
    assert!(
        text.contains(&format!("missed: {};", expected_missed.len())),
        "{text}"
    );
    assert!(text.contains("more missed keys (--max-missed)"), "{text}");
    assert!(
        text.contains("what to do:") && text.contains("compact"),
        "{text}"
    );
}

/// One bit cleared that only one key of its filter set: that key, and only it, is
/// missed and named; exit 1.
#[test]
fn one_altered_bit_names_the_one_missed_key() {
    let db = plyvel_database(false);
    let table = &ldb_files(&db.0)[0];
    let victim = std::sync::Mutex::new(None);
    rewrite_filters(table, |i, keys, filter| {
        if i != 0 {
            return;
        }
        for bit in 0..8 * (filter.len() - 1) {
            let (byte, mask) = (bit / 8, 1u8 << (bit % 8));
            if filter[byte] & mask == 0 {
                continue;
            }
            filter[byte] &= !mask;
            let lost: Vec<&Vec<u8>> = keys
                .iter()
                .filter(|k| !Filter::new(filter).may_contain(k))
                .collect();
            if let [key] = lost[..] {
                *victim.lock().unwrap() = Some(key.clone());
                return;
            }
            filter[byte] |= mask;
        }
        panic!("no bit set by exactly one key");
    });
    let victim = victim.into_inner().unwrap().expect("a victim");
    let hex: String = victim.iter().take(64).map(|b| format!("{b:02x}")).collect();
    let (code, stdout, _) = audit(&[table]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains(&format!("MISSED {hex}")), "{stdout}");
    assert_eq!(stdout.matches("MISSED").count(), 1, "{stdout}");
    assert!(stdout.contains("missed 1 "), "{stdout}");
}

/// Renames a table's filter block from goleveldb's `leveldb.BuiltinBloomFilter` to
/// RocksDB's block-based `rocksdb.BuiltinBloomFilter`: the metaindex rewritten
/// uncompressed with the new name, the index block after it moved, the footer
/// pointing at both.
fn rename_to_rocksdb(table: &Path) {
    let data = std::fs::read(table).unwrap();
    let parsed = leveldb_table::Table::open(&data).unwrap();
    let (metaindex, index) = (parsed.metaindex(), parsed.index());
    let mut contents = parsed.block(metaindex).unwrap();
    let from = b"filter.leveldb.BuiltinBloomFilter";
    let at = contents
        .windows(from.len())
        .position(|w| w == from)
        .expect("goleveldb's filter name");
    contents[at..at + from.len()].copy_from_slice(b"filter.rocksdb.BuiltinBloomFilter");
    let mut out = data[..metaindex.offset as usize].to_vec();
    out.extend_from_slice(&contents);
    out.push(0);
    out.extend_from_slice(&leveldb_table::masked_crc(&contents, 0).to_le_bytes());
    let index_offset = out.len() as u64;
    let index_raw = &data[index.offset as usize..(index.offset + index.size + 5) as usize];
    out.extend_from_slice(index_raw);
    let footer = table_footer(
        (metaindex.offset, contents.len() as u64),
        (index_offset, index.size),
    );
    out.extend_from_slice(&footer);
    std::fs::write(table, out).unwrap();
}

/// `rocksdb.BuiltinBloomFilter`, RocksDB's retired block-based filter, is read with
/// its signed hash: filters built that way are `rocksdb-block-based` with no key
/// missed; goleveldb's unsigned bits under that name lose the keys whose tails the
/// readings disagree on.
#[test]
fn rocksdb_block_based_filters_are_read_with_the_signed_hash() {
    let (db, _keys) = goleveldb_database();
    let tables = live_table_files(&db.0);
    for table in &tables {
        rename_to_rocksdb(table);
    }
    let (code, json) = audit_json(&db.0);
    assert_eq!(code, 1, "unsigned bits under RocksDB's name");
    assert!(json["missed"].as_u64().unwrap() > 0);
    for table in &tables {
        rewrite_with_signed_hash(table, false, |_, _| {});
    }
    let (code, json) = audit_json(&db.0);
    assert_eq!(code, 0, "{json}");
    for table in json["tables"].as_array().unwrap() {
        assert_eq!(table["dialect"], "rocksdb-block-based", "{table}");
        assert_eq!(table["filter_name"], "rocksdb.BuiltinBloomFilter");
    }
}
