//! Every command says what the reader needs: LevelDB reads (and its compactions
//! write) filters only for a program that opens the database with a bloom filter
//! policy. `refilter` ends saying so; `audit` of tables without filters points to
//! `refilter --dry-run`; `explain` says which reader it assumes; `--dry-run` alone
//! compares 6, 10 and 16 bits per key; a database whose keys are all in its log says
//! how to flush them, and its dry run's rows and JSON are right.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::{refilter_db, refilter_json, succeed, Scratch, PYTHON};

fn tool(args: &[&str], db: &Path) -> String {
    let output = succeed(
        Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
            .arg(args[0])
            .arg(db)
            .args(&args[1..]),
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn refilter_ends_saying_what_the_reader_needs() {
    let db = refilter_db("none");
    let text = tool(&["refilter", "--bits-per-key", "10"], &db.0);
    let last = text.lines().last().unwrap();
    for needed in [
        "only when the program opens the database with a bloom filter policy",
        "plyvel bloom_filter_bits=N",
        "leveldb_options_set_filter_policy",
        "options.filter_policy",
        "LEVELDB_BLOOM_DEFAULT_BITS=N",
        "compactions write tables without filters again",
    ] {
        assert!(last.contains(needed), "{needed:?} not in {last:?}");
    }
    let (code, json, _) = refilter_json(&db.0, &["--bits-per-key", "12"]);
    assert_eq!(code, 0);
    assert!(json["reader"]
        .as_str()
        .unwrap()
        .contains("LEVELDB_BLOOM_DEFAULT_BITS=N"));
}

#[test]
fn audit_of_tables_without_filters_points_to_the_dry_run() {
    let db = refilter_db("none");
    let (_, text, _) = common::audit(&[&db.0]);
    assert!(
        text.contains(&format!(
            "`leveldb-bloom refilter --dry-run {}`",
            db.0.display()
        )),
        "{text}"
    );
    let with_filters = refilter_db("10");
    let (_, text, _) = common::audit(&[&with_filters.0]);
    assert!(!text.contains("refilter --dry-run"), "{text}");
}

#[test]
fn explain_says_which_reader_it_assumes() {
    let db = refilter_db("10");
    let bloom = tool(&["explain", "absent"], &db.0);
    assert!(bloom.starts_with("reader: a program that opens the database with a bloom filter policy (--policy leveldb)"), "{bloom}");
    assert!(bloom.lines().next().unwrap().contains("--policy none"));
    let none = tool(&["explain", "absent", "--policy", "none"], &db.0);
    assert!(
        none.starts_with(
            "reader: a program that opens the database with no filter policy (--policy none)"
        ),
        "{none}"
    );
}

#[test]
fn dry_run_alone_compares_6_10_and_16_bits() {
    let db = refilter_db("none");
    let (code, json, stderr) = refilter_json(&db.0, &["--dry-run"]);
    assert_eq!(code, 0, "{stderr}");
    let bits = |level: &serde_json::Value| -> Vec<u64> {
        level["candidates"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["bits_per_key"].as_u64().unwrap())
            .collect()
    };
    for level in json["levels"]
        .as_array()
        .unwrap()
        .iter()
        .chain([&json["total"]])
    {
        assert_eq!(bits(level), [6, 10, 16], "{level}");
    }
    assert!(json["total"].get("level").is_none(), "{}", json["total"]);
    // Without --dry-run, one value at most; none is LevelDB's usual 10.
    let (code, _, stderr) = refilter_json(&db.0, &["--bits-per-key", "6,10"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--bits-per-key N: one value, except with --dry-run"),
        "{stderr}"
    );
    let (code, json, stderr) = refilter_json(&db.0, &[]);
    assert_eq!((code, &json["bits_per_key"]), (0, &10.into()), "{stderr}");
}

/// A database whose keys are all in its log: no live table.
fn keys_in_log() -> Scratch {
    let db = Scratch::new();
    succeed(
        Command::new(PYTHON)
            .args(["-c", "import plyvel, sys\ndb = plyvel.DB(sys.argv[1], create_if_missing=True)\ndb.put(b'k', b'v')\ndb.close()"])
            .arg(&db.0),
    );
    db
}

#[test]
fn keys_all_in_the_log_say_how_to_flush_them() {
    let db = keys_in_log();
    let text = tool(&["refilter", "--dry-run"], &db.0);
    let totals: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with("total"))
        .collect();
    assert_eq!(totals.len(), 4, "{text}");
    assert_eq!(
        totals
            .iter()
            .filter(|line| line.contains("current"))
            .count(),
        1,
        "{text}"
    );
    assert!(text.contains("db.compact_range()"), "{text}");
    let (code, json, _) = refilter_json(&db.0, &["--dry-run", "--bits-per-key", "8"]);
    assert_eq!(code, 0);
    assert_eq!(json["levels"].as_array().unwrap().len(), 0);
    assert_eq!(json["total"]["candidates"][0]["bits_per_key"], 8);
    assert!(json["total"].get("level").is_none());
    let text = tool(&["refilter", "--bits-per-key", "10"], &db.0);
    assert!(text.contains("no live tables: nothing to do"), "{text}");
    assert!(
        text.contains("leveldb_compact_range(db, NULL, 0, NULL, 0)"),
        "{text}"
    );
}
