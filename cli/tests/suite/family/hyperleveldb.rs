//! HyperLevelDB's databases (committed fixtures): `.sst` tables whose filters hold
//! the signed hash under `leveldb.BuiltinBloomFilter`.

use super::{explain, fixture_copy, key_hex, only_table, show};
use crate::common::*;

#[test]
fn hyperleveldb_tables_are_checked_with_the_signed_hash_they_hold() {
    let bloom = fixture_copy("hyperleveldb/bloom");
    let (table, _) = only_table(&bloom.0);
    assert_eq!(table.extension().unwrap(), "sst");
    // goleveldb, the unsigned reader of the name, would miss keys ending in 0xE9:
    // a failure, unless HyperLevelDB is named the reader (then a note).
    let (code, json) = audit_json(&bloom.0);
    assert_eq!(code, 1, "{json}");
    let report = &json["tables"][0];
    let unsigned_misses = report["missed_by_unsigned_readers"].as_u64().unwrap();
    assert!(unsigned_misses > 0, "{json}");
    assert_eq!(report["missed"].as_u64(), Some(unsigned_misses));
    let (code, json) = audit_json_with(&bloom.0, &["--reader", "hyperleveldb"]);
    assert_eq!(code, 0, "{json}");
    let report = &json["tables"][0];
    assert_eq!(report["dialect"], "legacy-signed", "{json}");
    assert_eq!(report["filter_name"], "leveldb.BuiltinBloomFilter");
    assert_eq!(
        (report["entries"].as_u64(), report["missed"].as_u64()),
        (Some(1000), Some(0))
    );
    assert_eq!(
        report["missed_by_unsigned_readers"].as_u64(),
        Some(unsigned_misses)
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
    assert_eq!(report["missed_by_signed_readers"], 0);
    assert_eq!(report["missed_by_unsigned_readers"], 0);
    let explained = explain(&plain.0, "legacy-signed", &key_hex(0));
    assert_eq!(explained[0]["found"]["kind"], "value", "{explained}");
}
