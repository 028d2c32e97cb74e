//! Databases written by LevelDB's relatives that cannot be built at test time,
//! committed as fixtures with the program that drove them
//! (cli/tests/fixtures/write_family.cc; each directory's README names the commit
//! built and the commands): upstream LevelDB after 1.23 with zstd blocks (its id 2),
//! and HyperLevelDB (`.sst` tables, the signed hash under `leveldb.BuiltinBloomFilter`).
//! audit, explain, show and refilter on each.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use leveldb_table::Table;

/// A copy of the fixture database `name` (`upstream_zstd/none`, ...): refilter
/// writes, and a copy in the tree would be changed.
fn fixture_copy(name: &str) -> Scratch {
    let copy = Scratch::new();
    std::fs::create_dir_all(&copy.0).unwrap();
    let from = Path::new(REPO).join("cli/tests/fixtures").join(name);
    for file in std::fs::read_dir(&from).unwrap() {
        let file = file.unwrap().path();
        std::fs::copy(&file, copy.0.join(file.file_name().unwrap())).unwrap();
    }
    copy
}

/// The one live table of `db`, its path and bytes.
fn only_table(db: &Path) -> (PathBuf, Vec<u8>) {
    let tables = live_table_files(db);
    assert_eq!(tables.len(), 1, "{tables:?}");
    let bytes = std::fs::read(&tables[0]).unwrap();
    (tables[0].clone(), bytes)
}

/// The key `write_family` puts `i`-th: every third ends in 0xE9, in hex.
fn key_hex(i: u32) -> String {
    let key = format!("family/{:05}", 7 * i);
    let tail = if i % 3 == 0 { "e9" } else { "" };
    key.bytes().map(|b| format!("{b:02x}")).collect::<String>() + tail
}

/// explain's answer, as JSON, for `key_hex` in `db` read with `policy`.
fn explain(db: &Path, policy: &str, key_hex: &str) -> serde_json::Value {
    let output = succeed(
        Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
            .args(["explain", "--hex", "--json", "--policy", policy])
            .arg(db)
            .arg(key_hex),
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

/// show draws `table`'s filter LevelDB consults for `key_hex`.
fn show(table: &Path, key_hex: &str) {
    let page = table.with_extension("html");
    succeed(
        Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
            .args(["show", "--hex", "--key", key_hex, "-o"])
            .arg(&page)
            .arg(table),
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<html"), "{}", page.display());
}

#[test]
fn upstream_zstd_tables_are_read_and_refiltered_into_upstreams_own() {
    let (plain, bloom) = (
        fixture_copy("upstream_zstd/none"),
        fixture_copy("upstream_zstd/bloom"),
    );
    let (table, theirs) = only_table(&bloom.0);
    let index = Table::open(&theirs[..]).unwrap().index;
    assert_eq!(
        theirs[(index.offset + index.size) as usize],
        2,
        "upstream's zstd id"
    );
    let (code, json) = audit_json(&bloom.0);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["tables"][0]["dialect"], "leveldb", "{json}");
    assert_eq!(
        (
            json["tables"][0]["entries"].as_u64(),
            json["missed"].as_u64()
        ),
        (Some(1000), Some(0))
    );
    let explained = explain(&bloom.0, "leveldb", &key_hex(3));
    assert_eq!(explained[0]["found"]["kind"], "value", "{explained}");
    show(&table, &key_hex(3));

    // Refiltered, the database written without a policy holds upstream's table.
    let (code, json, stderr) = refilter_json(&plain.0, &["--bits-per-key", "10"]);
    assert_eq!(
        (code, &json["committed"]),
        (0, &serde_json::json!(true)),
        "{stderr}"
    );
    let (_, ours) = only_table(&plain.0);
    assert!(
        ours == theirs,
        "the refiltered table is upstream's, byte for byte"
    );
    let (code, json) = audit_json(&plain.0);
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["tables"][0]["dialect"], "leveldb", "{json}");
}

#[test]
fn hyperleveldb_tables_are_checked_with_the_signed_hash_they_hold() {
    let bloom = fixture_copy("hyperleveldb/bloom");
    let (table, _) = only_table(&bloom.0);
    assert_eq!(table.extension().unwrap(), "sst");
    let (code, json) = audit_json(&bloom.0);
    assert_eq!(code, 0, "{json}");
    let report = &json["tables"][0];
    assert_eq!(report["dialect"], "legacy-signed", "{json}");
    assert_eq!(report["filter_name"], "leveldb.BuiltinBloomFilter");
    assert_eq!(
        (report["entries"].as_u64(), report["missed"].as_u64()),
        (Some(1000), Some(0))
    );
    // goleveldb, the unsigned reader of the name, would miss keys ending in 0xE9:
    // a note, since HyperLevelDB reads its filters with the hash it wrote them with.
    assert!(
        report["missed_by_unsigned_readers"].as_u64().unwrap() > 0,
        "{json}"
    );
    assert_eq!(json["verdict"], "ok");

    // explain follows each reader: HyperLevelDB's (signed), goleveldb's (unsigned),
    // LevelDB 1.23's (which ignores the old name).
    let (signed, unsigned, leveldb) = (
        explain(&bloom.0, "legacy-signed", &key_hex(0)),
        explain(&bloom.0, "legacy", &key_hex(0)),
        explain(&bloom.0, "leveldb", &key_hex(0)),
    );
    assert_eq!(signed[0]["found"]["kind"], "value", "{signed}");
    assert_eq!(signed[0]["steps"][0]["filter"]["answer"], "may-match");
    assert_eq!(
        unsigned[0]["steps"][0]["filter"]["answer"], "absent",
        "{unsigned}"
    );
    assert!(leveldb[0]["steps"][0]["no_filter"].is_string(), "{leveldb}");
    show(&table, &key_hex(0));
}

#[test]
fn a_hyperleveldb_database_refiltered_with_the_legacy_policy_keeps_every_key() {
    // The legacy policy sets both readings' bits under the old name: HyperLevelDB
    // (signed) and goleveldb (unsigned) find every key. Not HyperLevelDB's table
    // byte for byte (keys ending in 0xE9 set more bits); LevelDB's name would be
    // ignored by HyperLevelDB's reader.
    let plain = fixture_copy("hyperleveldb/none");
    let (code, json, stderr) =
        refilter_json(&plain.0, &["--bits-per-key", "10", "--policy", "legacy"]);
    assert_eq!(
        (code, &json["committed"]),
        (0, &serde_json::json!(true)),
        "{stderr}"
    );
    let (code, json) = audit_json(&plain.0);
    assert_eq!(code, 0, "{json}");
    let report = &json["tables"][0];
    assert_eq!(report["dialect"], "legacy-both", "{json}");
    assert_eq!(report["missed"], 0);
    assert_eq!(report["missed_by_old_x86_leveldb"], 0);
    let explained = explain(&plain.0, "legacy-signed", &key_hex(0));
    assert_eq!(explained[0]["found"]["kind"], "value", "{explained}");
}
