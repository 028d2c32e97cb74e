//! `leveldb-bloom explain` against LevelDB 1.23 itself: a database of several levels
//! written by LevelDB (plyvel), read back by LevelDB through a filter policy that
//! records every filter it is asked about (cli/tests/explain_harness.cc, made with
//! `leveldb_filterpolicy_create`). For every key, the filters `explain` says a Get
//! consults are the ones LevelDB consulted, in order, with the same answers, and
//! where it says the key is found LevelDB finds it. Then goleveldb's and filterless
//! databases, the log, and broken databases.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use common::*;
use leveldb_table::db::manifest::table_file;
use leveldb_table::{Lookup, Table};
use serde_json::Value;

/// Keys per LevelDB run: a Get that looks in two tables charges a seek to the
/// first, and after 100 such charges LevelDB compacts that table away; every run
/// opens the database afresh, with fresh charges.
const KEYS_PER_RUN: usize = 60;

/// Puts keys across the whole key range after the database's compactions, so that
/// level 0 holds tables spanning it; overwrites and deletes keys the deeper levels
/// hold; closes, and reopens once so that the log becomes a table too.
const NEWER_WRITES: &str = "\
import plyvel, sys
sys.path.insert(0, sys.argv[2])
import python_db
present, _ = python_db.keys()
kept = [k for i, k in enumerate(present) if i % 10 != 0]
db = plyvel.DB(sys.argv[1], bloom_filter_bits=10, write_buffer_size=96 << 10)
for i in range(1500):
    db.put(bytes([i * 7 % 256]) + b' late %06d' % i, b'v' * 100)
for k in kept[1:400:10]:
    db.put(k, b'overwritten')
for k in kept[5:400:10]:
    db.delete(k)
db.close()
plyvel.DB(sys.argv[1], bloom_filter_bits=10).close()
for k in kept[:400]:
    print(k.hex())
";

/// A database of levels 0 to 2 written by LevelDB, and the keys it was written with.
fn database() -> (Scratch, Vec<String>) {
    let db = plyvel_database(false);
    let written = succeed(
        Command::new(PYTHON)
            .arg("-c")
            .arg(NEWER_WRITES)
            .arg(&db.0)
            .arg(Path::new(REPO).join("tests/loaders")),
    );
    let keys = String::from_utf8(written.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    (db, keys)
}

fn explain_json(dir: &Path, args: &[&str], keys: &[String]) -> (i32, Value, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .arg("explain")
        .arg(dir)
        .args(args)
        .args(keys)
        .output()
        .unwrap();
    let json = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    (
        output.status.code().unwrap(),
        json,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The bytes of filter `index` of table `number`, in hex.
fn filter_hex(
    dir: &Path,
    number: u64,
    index: usize,
    cache: &mut BTreeMap<(u64, usize), String>,
) -> String {
    cache
        .entry((number, index))
        .or_insert_with(|| {
            let data = std::fs::read(table_file(dir, number)).unwrap();
            let table = Table::open(&data).unwrap();
            let filters = current_filter_block(&table);
            let Lookup::Filter(bytes) = filters.lookup(index) else {
                panic!("table {number} filter {index}: the policy is not asked");
            };
            bytes.iter().map(|b| format!("{b:02x}")).collect()
        })
        .clone()
}

#[test]
fn the_filters_explain_lists_are_the_ones_leveldb_consults() {
    let (db, old_keys) = database();
    let version = leveldb_table::db::manifest::live_version(&db.0).unwrap();
    let l0 = version.files(0).len();
    assert!(l0 >= 2, "{l0} tables at level 0");
    assert!((1..7).any(|level| !version.files(level).is_empty()));
    // Keys of every kind: written long ago (some since overwritten or deleted), written
    // late at level 0, never written.
    let mut keys = old_keys;
    keys.extend((0..1500).step_by(25).map(|i: usize| {
        let mut key = vec![(i * 7 % 256) as u8];
        key.extend_from_slice(format!(" late {i:06}").as_bytes());
        key.iter().map(|b| format!("{b:02x}")).collect::<String>()
    }));
    keys.extend((0..200).map(|i| format!("{:x}", 0x6e6f742d7772697474656e00u128 + i)));
    let (code, json, stderr) = explain_json(&db.0, &["--json", "--hex"], &keys);
    assert_eq!(code, 0, "{stderr}");
    let explained = json.as_array().unwrap();
    let harness = harness();
    let mut cache = BTreeMap::new();
    let (mut calls, mut saved, mut found, mut deletions, mut multi) = (0, 0, 0, 0, 0);
    for (chunk, expected) in keys
        .chunks(KEYS_PER_RUN)
        .zip(explained.chunks(KEYS_PER_RUN))
    {
        for (key, (leveldb_calls, leveldb_found), ours) in chunk
            .iter()
            .zip(leveldb_gets(&harness, &db.0, chunk))
            .zip(expected)
            .map(|((k, g), e)| (k, g, e))
        {
            let steps = ours["steps"].as_array().unwrap();
            let our_calls: Vec<(String, bool)> = steps
                .iter()
                .filter(|s| s["filter"]["policy_asked"] == true)
                .map(|s| {
                    let bytes = filter_hex(
                        &db.0,
                        s["table"].as_u64().unwrap(),
                        s["filter"]["index"].as_u64().unwrap() as usize,
                        &mut cache,
                    );
                    (bytes, s["filter"]["answer"] == "may-match")
                })
                .collect();
            assert_eq!(our_calls, leveldb_calls, "key {key}: {ours:#}");
            let ours_found = ours["found"]["kind"] == "value";
            assert_eq!(ours_found, leveldb_found, "key {key}: {ours:#}");
            calls += our_calls.len();
            saved += our_calls.iter().filter(|(_, may)| !may).count();
            found += usize::from(ours_found);
            multi += usize::from(ours["tables_consulted"].as_u64().unwrap() > 1);
            if ours["found"]["kind"] == "deletion" {
                deletions += 1;
                // Deleted at level 0: the older value deeper down is not consulted.
                assert_eq!(ours["found"]["level"], 0, "{ours:#}");
                assert!(steps.iter().all(|s| s["level"] == 0), "{ours:#}");
            }
        }
    }
    assert!(
        deletions >= 30 && found >= 300 && saved >= 100 && multi >= 100,
        "{deletions} {found} {saved} {multi}"
    );
    eprintln!(
        "{} keys ({found} found, {deletions} deleted, {multi} consulting several tables): \
         {calls} filter calls by LevelDB, the same {calls} listed by explain, in order, \
         {saved} answered absent by both; {l0} tables at level 0",
        keys.len()
    );
}

/// goleveldb's tables carry the legacy name: LevelDB's bloom policy ignores them
/// (said so), goleveldb's reading consults them. A database without filters: said.
#[test]
fn legacy_and_filterless_databases_say_why_no_filter_was_used() {
    let db = Scratch::new();
    let scratch = Scratch::new();
    let (keys_path, keys) = keys_file(&scratch.0, 3000);
    goleveldb_write(&db.0, &keys_path);
    let hex = |k: &[u8]| k.iter().map(|b| format!("{b:02x}")).collect::<String>();
    let some: Vec<String> = keys.iter().step_by(300).map(|k| hex(k)).collect();
    let (code, json, stderr) = explain_json(&db.0, &["--json", "--hex"], &some);
    assert_eq!(code, 0, "{stderr}");
    for key in json.as_array().unwrap() {
        assert_eq!(key["found"]["kind"], "value", "{key:#}");
        let step = key["steps"].as_array().unwrap().last().unwrap().clone();
        let why = step["no_filter"].as_str().unwrap();
        assert!(
            why.contains("named \"leveldb.BuiltinBloomFilter\";"),
            "{why}"
        );
    }
    let (code, json, _) = explain_json(&db.0, &["--json", "--hex", "--policy", "legacy"], &some);
    assert_eq!(code, 0);
    for key in json.as_array().unwrap() {
        let step = key["steps"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(step["filter"]["answer"], "may-match", "{key:#}");
        assert_eq!(step["outcome"], "value");
    }

    let bare = Scratch::new();
    succeed(
        Command::new(PYTHON)
            .arg("-c")
            .arg(
                "import plyvel, sys\n\
         db = plyvel.DB(sys.argv[1], create_if_missing=True)\n\
         for i in range(2000):\n    db.put(b'bare %05d' % i, b'v')\n\
         db.compact_range()\n\
         db.close()\n",
            )
            .arg(&bare.0),
    );
    let output = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .arg("explain")
        .arg(&bare.0)
        .args(["bare 00042", "bare 99999"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains("no filter: the table has no filter block"),
        "{text}"
    );
    assert!(text.contains("value in "), "{text}");
    assert!(text.contains("absent: no table holds it"), "{text}");
    print!("{text}");
}

/// Keys written since the last flush live in the log: with --log they are found
/// there, first, as LevelDB finds them in memory; without, the summary says the log
/// was not read.
#[test]
fn the_log_is_read_with_log() {
    let db = Scratch::new();
    succeed(
        Command::new(PYTHON)
            .arg("-c")
            .arg(
                "import plyvel, sys\n\
         db = plyvel.DB(sys.argv[1], create_if_missing=True, bloom_filter_bits=10)\n\
         for i in range(3000):\n    db.put(b'flushed %05d' % i, b'v')\n\
         db.compact_range()\n\
         db.put(b'in the log', b'v')\n\
         db.delete(b'flushed 00007')\n\
         db.close()\n",
            )
            .arg(&db.0),
    );
    let keys = ["in the log".to_string(), "flushed 00007".to_string()];
    let (code, json, _) = explain_json(&db.0, &["--json", "--log"], &keys);
    assert_eq!(code, 0);
    assert_eq!(json[0]["found"]["place"], "log", "{json:#}");
    assert_eq!(json[0]["found"]["kind"], "value");
    assert_eq!(json[1]["found"]["place"], "log");
    assert_eq!(json[1]["found"]["kind"], "deletion");
    assert_eq!(json[1]["tables_consulted"], 0);
    let (_, json, _) = explain_json(&db.0, &["--json"], &keys);
    assert!(json[0]["log"].as_str().unwrap().starts_with("not read"));
    assert!(json[0]["found"].is_null());
    assert_eq!(
        json[1]["found"]["kind"], "value",
        "the table's, without the log"
    );
}

/// Broken databases: a clear error naming what was found, exit 1, no panic.
#[test]
fn broken_databases_are_errors() {
    let db = plyvel_database(false);
    let run = |dir: &Path| {
        let output = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
            .arg("explain")
            .arg(dir)
            .arg("key")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(!stderr.contains("panicked"), "{stderr}");
        (output.status.code().unwrap(), stderr)
    };
    let manifest = leveldb_table::db::manifest::live_version(&db.0)
        .unwrap()
        .manifest;
    let bytes = std::fs::read(&manifest).unwrap();
    let mut corrupt = bytes.clone();
    corrupt[20] ^= 0x10;
    std::fs::write(&manifest, &corrupt).unwrap();
    let (code, stderr) = run(&db.0);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("MANIFEST-") && stderr.contains("checksum mismatch"),
        "{stderr}"
    );
    // Cut inside its first record: no edit is read whole, as for LevelDB.
    std::fs::write(&manifest, &bytes[..12]).unwrap();
    let (code, stderr) = run(&db.0);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("MANIFEST-") && stderr.contains("no next-file entry"),
        "{stderr}"
    );
    std::fs::write(&manifest, &bytes).unwrap();
    std::fs::remove_file(db.0.join("CURRENT")).unwrap();
    let (code, stderr) = run(&db.0);
    assert_eq!(code, 1);
    assert!(stderr.contains("CURRENT: No such file"), "{stderr}");

    let reversed = Scratch::new();
    succeed(Command::new(PYTHON).arg("-c").arg(
        "import plyvel, sys\n\
         db = plyvel.DB(sys.argv[1], create_if_missing=True, comparator=lambda a, b: (a < b) - (a > b), comparator_name=b'test.Reversed')\n\
         db.put(b'a', b'1')\n\
         db.close()\n",
    ).arg(&reversed.0));
    let (code, stderr) = run(&reversed.0);
    assert_eq!(code, 1);
    assert!(stderr.contains("comparator \"test.Reversed\""), "{stderr}");
}

#[test]
fn keys_longer_than_a_command_line_come_from_a_keys_file() {
    // Linux takes no argument longer than 128 KiB (E2BIG).
    let db = Scratch::new();
    plyvel_script(
        &db.0,
        "import plyvel, sys\n\
         db = plyvel.DB(sys.argv[1], create_if_missing=True, bloom_filter_bits=10)\n\
         db.put(b'k' * 200000, b'long')\n\
         db.put(b'short', b'v')\n\
         db.compact_range()\n\
         db.close()\n",
    );
    let keys = db.0.join("keys.txt");
    std::fs::write(&keys, format!("{}\n{}\n", "6b".repeat(200_000), "6e6f6e65")).unwrap();
    let output = succeed(
        Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
            .args(["explain", "--json", "--hex", "--keys-file"])
            .arg(&keys)
            .arg(&db.0)
            .arg("73686f7274"),
    );
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let found: Vec<&Value> = (0..3).map(|i| &json[i]["found"]["kind"]).collect();
    // The arguments' keys first, then the file's, in order.
    assert_eq!(found[0], "value", "{json}");
    assert_eq!(found[1], "value", "{json}");
    assert!(found[2].is_null() || found[2] != "value", "{json}");
    assert_eq!(json.as_array().unwrap().len(), 3);
}
