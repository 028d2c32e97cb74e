//! `leveldb-bloom refilter` on the databases it is for: goleveldb's (filters under the
//! name LevelDB ignores) given LevelDB's filters, or given the legacy name again and
//! still read by goleveldb; a database whose filters lose keys, repaired; and
//! bits per key changed 10 → 16 → 6, the audit reporting each.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;
use serde_json::Value;

/// A goleveldb database of 20,000 keys, the directory of its key files, and the key
/// files: written keys and absent ones.
fn goleveldb_database() -> (Scratch, Scratch) {
    let (db, scratch) = (Scratch::new(), Scratch::new());
    let (keys, _) = keys_file(&scratch.0, 20_000);
    goleveldb_write(&db.0, &keys);
    let mut absent = Vec::new();
    for i in 0..5_000u32 {
        let key = format!("go key {i:05} absent");
        absent.extend_from_slice(&(key.len() as u32).to_le_bytes());
        absent.extend_from_slice(key.as_bytes());
    }
    std::fs::write(scratch.0.join("absent"), absent).unwrap();
    (db, scratch)
}

fn refiltered(db: &Path, args: &[&str]) -> Value {
    let (code, json, stderr) = refilter_json(db, args);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json["committed"], true, "{json}");
    json
}

/// The audit of `db`: OK, every table's filter under `name`.
fn audited_ok(db: &Path, name: &str) -> Value {
    let (code, audit) = audit_json(db);
    assert_eq!(code, 0, "{audit}");
    for table in audit["tables"].as_array().unwrap() {
        assert_eq!(table["filter_name"], name, "{table}");
        assert_eq!(table["missed"], 0, "{table}");
    }
    audit
}

#[test]
fn goleveldb_databases_get_filters_leveldb_reads_or_goleveldb_reads() {
    let (db, keys) = goleveldb_database();
    let legacy = Scratch::new();
    std::fs::create_dir_all(&legacy.0).unwrap();
    for entry in std::fs::read_dir(&db.0).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, legacy.0.join(path.file_name().unwrap())).unwrap();
    }
    // LevelDB 1.23 ignores goleveldb's filters: no filter is asked.
    let harness = harness();
    let absent: Vec<String> = (0..40)
        .map(|i| {
            format!("go key {i:05} absent")
                .bytes()
                .map(|b| format!("{b:02x}"))
                .collect()
        })
        .collect();
    let before = leveldb_gets(&harness, &db.0, &absent);
    assert!(before.iter().all(|(calls, _)| calls.is_empty()));
    // The dry run says so too: every table's filter under a name LevelDB ignores, each
    // level's absent Gets paying a block read.
    let dry_run = succeed(
        Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
            .args(["refilter", "--dry-run", "--json", "--bits-per-key", "10"])
            .arg(&db.0),
    );
    let total = &serde_json::from_slice::<Value>(&dry_run.stdout).unwrap()["total"];
    assert_eq!(
        total["current"]["tables_with_ignored_filter"],
        total["tables"]
    );
    assert_eq!(total["current"]["tables_with_filter"], 0);
    assert_eq!(
        total["candidates"][0]["tables_with_filter"],
        total["tables"]
    );
    refiltered(&db.0, &["--bits-per-key", "10", "--policy", "leveldb"]);
    audited_ok(&db.0, "leveldb.BuiltinBloomFilter2");
    let after = leveldb_gets(&harness, &db.0, &absent);
    let asked = after.iter().filter(|(calls, _)| !calls.is_empty()).count();
    let saved = after
        .iter()
        .filter(|(calls, found)| !found && calls.iter().all(|&(_, may)| !may))
        .count();
    assert!(
        asked == absent.len() && saved >= 35,
        "{asked} asked, {saved} saved"
    );
    // Every key, by LevelDB itself.
    let written: Vec<String> = keys_file(&keys.0, 20_000)
        .1
        .iter()
        .step_by(97)
        .map(|k| k.iter().map(|b| format!("{b:02x}")).collect())
        .collect();
    assert!(leveldb_gets(&harness, &db.0, &written)
        .iter()
        .all(|(_, found)| *found));

    // The legacy name at 16 bits per key: goleveldb still reads it, with its filter.
    refiltered(&legacy.0, &["--bits-per-key", "16", "--policy", "legacy"]);
    let audit = audited_ok(&legacy.0, "leveldb.BuiltinBloomFilter");
    assert!(audit["tables"][0]["bits_per_key"].as_f64().unwrap() >= 16.0);
    let read = goleveldb_read(&legacy.0, &keys.0.join("keys"), &keys.0.join("absent"));
    assert!(
        read.contains("found 20000 of 20000, absent 5000 of 5000"),
        "{read}"
    );
    let said_absent: u64 = read
        .rsplit("filter said absent ")
        .next()
        .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
        .unwrap();
    assert!(said_absent >= 4_900, "{read}");
}

#[test]
fn filters_that_lose_keys_are_replaced() {
    let db = plyvel_database(false);
    for table in live_table_files(&db.0) {
        rewrite_filters(&table, |_, _, filter| {
            let bits = filter.len().saturating_sub(1);
            filter[..bits].fill(0);
        });
    }
    let (code, audit) = audit_json(&db.0);
    assert_eq!(code, 1);
    assert!(
        audit["missed"].as_u64().unwrap() > 1000,
        "{}",
        audit["missed"]
    );
    refiltered(&db.0, &["--bits-per-key", "10"]);
    audited_ok(&db.0, "leveldb.BuiltinBloomFilter2");
    let read = succeed(
        Command::new(PYTHON)
            .arg(Path::new(REPO).join("tests/loaders/python_db.py"))
            .args(["plyvel", "read"])
            .arg(&db.0),
    );
    let text = String::from_utf8_lossy(&read.stdout);
    assert!(text.contains(" 0 wrong"), "{text}");
}

#[test]
fn bits_per_key_go_from_10_to_16_to_6() {
    let db = refilter_db("none");
    let mut last_fp = None;
    for (bits, k) in [(10, 6), (16, 11), (6, 4)] {
        let report = refiltered(&db.0, &["--bits-per-key", &bits.to_string()]);
        let audit = audited_ok(&db.0, "leveldb.BuiltinBloomFilter2");
        for (table, done) in audit["tables"]
            .as_array()
            .unwrap()
            .iter()
            .zip(report["tables"].as_array().unwrap())
        {
            let nominal = table["bits_per_key"].as_f64().unwrap();
            let true_bits = table["true_bits_per_key"].as_f64().unwrap();
            assert!(
                nominal >= f64::from(bits) && nominal < f64::from(bits) + 1.0,
                "{table}"
            );
            assert!(true_bits > nominal, "{table}");
            assert_eq!(table["k"], k);
            assert_eq!(table["file"], done["new"]);
        }
        let fp = audit["false_positive_percent"].as_f64().unwrap();
        match (last_fp, bits) {
            (Some(last), 16) => assert!(fp < last, "{fp} after {last}"),
            (Some(last), 6) => assert!(fp > last * 4.0, "{fp} after {last}"),
            _ => assert!((0.5..1.5).contains(&fp), "{fp}"),
        }
        last_fp = Some(fp);
    }
}

/// The dry run writes nothing, and its candidate at 10 bits per key is, to the
/// byte and the measured rate, what the refilter at 10 then writes.
#[test]
fn the_dry_run_predicts_the_refilter() {
    let db = refilter_db("none");
    let dry_run = |bits: &str| {
        let output = succeed(
            Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
                .args(["refilter", "--dry-run", "--json", "--bits-per-key", bits])
                .arg(&db.0),
        );
        serde_json::from_slice::<Value>(&output.stdout).unwrap()
    };
    let files = |dir: &Path| {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        names.sort();
        names
    };
    let before = files(&db.0);
    let predicted = dry_run("6,10,16");
    assert_eq!(files(&db.0), before, "the dry run wrote nothing");
    let total = &predicted["total"];
    assert_eq!(total["current"]["tables_without_filter"], 2);
    // The level-0 table holds only the late keys, after every key of level 2: an
    // absent Get consults one table, never both (as `explain` shows it).
    assert_eq!(total["current"]["expected_block_reads"], 1.0);
    let candidates = total["candidates"].as_array().unwrap();
    let bytes: Vec<u64> = candidates
        .iter()
        .map(|c| c["filter_bytes"].as_u64().unwrap())
        .collect();
    assert!(bytes[0] < bytes[1] && bytes[1] < bytes[2], "{bytes:?}");
    // The true bits per key: above the nominal, the offset array and k bytes counted.
    let true_bits = candidates[1]["true_bits_per_key"].as_f64().unwrap();
    assert!((10.5..12.0).contains(&true_bits), "{true_bits}");
    refiltered(&db.0, &["--bits-per-key", "10"]);
    let after = dry_run("10");
    for (level, predicted) in after["levels"]
        .as_array()
        .unwrap()
        .iter()
        .zip(predicted["levels"].as_array().unwrap())
    {
        let now = &level["current"];
        assert_eq!(
            now["filter_bytes"],
            predicted["candidates"][1]["filter_bytes"]
        );
        assert_eq!(
            now["false_positive_percent"],
            predicted["candidates"][1]["false_positive_percent"]
        );
    }
    // And the audit counts the same bytes.
    let (_, audit) = audit_json(&db.0);
    let audited: u64 = audit["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["filter_block_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(Value::from(audited), candidates[1]["filter_bytes"]);
}
