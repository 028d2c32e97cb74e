//! Refilter's decisions before and after the commit: the numbers of its new files,
//! what its report says in each outcome, and what it leaves of a directory that is
//! no database.

use super::*;
use leveldb_bloom::POLICY_NAME;
use test_support::Scratch;

#[test]
fn leveldb_file_numbers_are_parsed_as_leveldb_parses_them() {
    assert_eq!(leveldb_file_number("000012.ldb"), Some(12));
    assert_eq!(leveldb_file_number("MANIFEST-000003"), Some(3));
    assert_eq!(leveldb_file_number("7.dbtmp"), Some(7));
    assert_eq!(
        leveldb_file_number("18446744073709551615.log"),
        Some(u64::MAX)
    );
    for not_leveldb in [
        "18446744073709551615.junk",
        "18446744073709551616.ldb",
        "+5.ldb",
        ".ldb",
        "MANIFEST-",
        "MANIFEST-3.bak",
        "12.ldb.bak",
        "CURRENT",
        "LOCK",
    ] {
        assert_eq!(leveldb_file_number(not_leveldb), None, "{not_leveldb}");
    }
}

#[test]
fn file_numbers_never_wrap() {
    assert_eq!(
        FileNumbers::after(10, 2).unwrap(),
        FileNumbers {
            manifest: 12,
            next_file: 13
        }
    );
    assert!(FileNumbers::after(u64::MAX - 2, 2).is_err());
    assert!(FileNumbers::after(u64::MAX, 0).is_err());
}

fn report(manifest: Option<&str>, error: Option<&str>) -> RefilterReport {
    RefilterReport {
        database: "db".into(),
        policy: POLICY_NAME,
        bits_per_key: 10,
        committed: manifest.is_some(),
        manifest: manifest.map(str::to_string),
        tables: Vec::new(),
        error: error.map(str::to_string),
        note: None,
        reader: None,
    }
}

#[test]
fn the_report_says_what_was_committed_or_why_nothing_changed() {
    let committed = report(Some("MANIFEST-000009"), None).text();
    assert!(
        committed.starts_with("db: 0 tables refiltered with leveldb.BuiltinBloomFilter2 at 10 bits per key; CURRENT names MANIFEST-000009."),
        "{committed}"
    );
    assert!(committed.contains(OLD_FILES), "{committed}");
    let nothing = report(None, None).text();
    assert!(
        nothing.starts_with("db: no live tables: nothing to do."),
        "{nothing}"
    );
    let failed = report(None, Some("db/LOCK: held")).text();
    assert_eq!(failed, "db: nothing changed (the error is on stderr).\n");
}

#[test]
fn a_directory_that_is_no_database_is_left_as_it_was_and_the_error_says_why() {
    let scratch = Scratch::created();
    let (report, outcome) = refilter(scratch.dir(), BloomFilterPolicy::new(10));
    let error = format!("{:#}", outcome.unwrap_err());
    assert!(
        error.ends_with("CURRENT: No such file or directory (os error 2): not a LevelDB database"),
        "{error}"
    );
    assert_eq!(report.error.as_deref(), Some(error.as_str()));
    assert!(!report.committed && report.manifest.is_none() && report.note.is_none());
    assert_eq!(
        std::fs::read_dir(scratch.dir()).unwrap().count(),
        0,
        "no LOCK left"
    );
}
