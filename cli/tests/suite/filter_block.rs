//! The audit predicts what LevelDB 1.23 does with a filter block, branch by branch of
//! its `FilterBlockReader` (table/filter_block.cc): a table written by LevelDB (plyvel
//! on Debian's LevelDB 1.23) has one filter's offsets rewritten to reach each branch;
//! then the keys the audit reports missed must be exactly the keys LevelDB itself,
//! reading the database, no longer finds.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use common::*;
use leveldb_table::{FilterBlock, Table};

/// Gets every key python_db.py wrote and did not delete, with plyvel (stock
/// LevelDB 1.23, its bloom filter), and prints those not found, in hex. (Keys never
/// written cannot be lost: only present keys are read.)
const READ_PRESENT: &str = "\
import plyvel, sys
sys.path.insert(0, sys.argv[2])
import python_db
present, _ = python_db.keys()
db = plyvel.DB(sys.argv[1], bloom_filter_bits=python_db.BITS_PER_KEY)
for i, key in enumerate(present):
    if i % 10 != 0 and db.get(key) is None:
        print(key.hex())
db.close()
";

/// The keys LevelDB does not find in the database at `dir`, in hex.
fn keys_leveldb_misses(dir: &Path) -> BTreeSet<String> {
    let output = Command::new(PYTHON)
        .arg("-c")
        .arg(READ_PRESENT)
        .arg(dir)
        .arg(Path::new(REPO).join("tests/loaders"))
        .output()
        .expect("python runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The keys the audit reports missed in the database at `dir`, and its exit status.
fn keys_audit_misses(dir: &Path) -> (i32, BTreeSet<String>) {
    let output = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .args(["audit", "--json", "--max-missed", "1000000"])
        .arg(dir)
        .output()
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let missed = json["tables"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["missed_keys"].as_array().unwrap().clone())
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    (output.status.code().unwrap(), missed)
}

/// One way to rewrite a filter block, and whether LevelDB then loses the keys of
/// filter 1 (rewriting its offsets moves its neighbours' too, which may lose theirs).
struct Case {
    name: &'static str,
    rewrite: fn(&mut [u8]),
    loses_keys: bool,
}

fn array_offset(block: &[u8]) -> usize {
    let n = block.len();
    u32::from_le_bytes(block[n - 5..n - 1].try_into().unwrap()) as usize
}

/// Sets filter 1's start and limit: entries 1 and 2 of the offset array (filter 0's
/// limit and filter 2's start change with them).
fn set_filter_1(block: &mut [u8], start: u32, limit: u32) {
    let array = array_offset(block);
    block[array + 4..array + 8].copy_from_slice(&start.to_le_bytes());
    block[array + 8..array + 12].copy_from_slice(&limit.to_le_bytes());
}

fn filter_1_start(block: &[u8]) -> u32 {
    let array = array_offset(block);
    u32::from_le_bytes(block[array + 4..array + 8].try_into().unwrap())
}

const CASES: &[Case] = &[
    Case {
        name: "start == limit past the offset array: absent without the policy",
        rewrite: |b| {
            let past = array_offset(b) as u32 + 4;
            set_filter_1(b, past, past)
        },
        loses_keys: true,
    },
    Case {
        name: "start == limit within the block: an empty filter, absent",
        rewrite: |b| set_filter_1(b, 3, 3),
        loses_keys: true,
    },
    Case {
        name: "start > limit: may match",
        rewrite: |b| {
            let start = filter_1_start(b);
            set_filter_1(b, start, start - 1)
        },
        loses_keys: false,
    },
    Case {
        name: "limit past the offset array: may match",
        rewrite: |b| set_filter_1(b, filter_1_start(b), array_offset(b) as u32 + 1),
        loses_keys: false,
    },
    Case {
        name: "offset array past its end: no filter at all, may match",
        rewrite: |b| {
            let n = b.len();
            b[n - 5..n - 1].copy_from_slice(&(n as u32).to_le_bytes());
        },
        loses_keys: false,
    },
    Case {
        name: "base_lg 0: data blocks past the filters' count, may match",
        rewrite: |b| *b.last_mut().unwrap() = 0,
        loses_keys: false,
    },
    Case {
        name: "base_lg 64: shifted modulo 64 as by x86-64, may match",
        rewrite: |b| *b.last_mut().unwrap() = 64,
        loses_keys: false,
    },
];

#[test]
fn missed_keys_are_exactly_the_keys_leveldb_loses() {
    let db = plyvel_database(false);
    assert!(keys_leveldb_misses(&db.0).is_empty());
    assert_eq!(keys_audit_misses(&db.0), (0, BTreeSet::new()));
    // Each case on its own copy, in parallel: each reads the database with LevelDB.
    std::thread::scope(|scope| {
        for case in CASES {
            let db = &db;
            scope.spawn(move || {
                let copy = Scratch::new();
                std::fs::create_dir_all(&copy.0).unwrap();
                for entry in std::fs::read_dir(&db.0).unwrap() {
                    let path = entry.unwrap().path();
                    std::fs::copy(&path, copy.0.join(path.file_name().unwrap())).unwrap();
                }
                let table = ldb_files(&copy.0)[0].clone();
                let filter_1_keys: BTreeSet<String> = {
                    let data = std::fs::read(&table).unwrap();
                    let range = filter_block_range(&data);
                    let filters = FilterBlock::new(data[range].to_vec(), 0);
                    Table::open(&data)
                        .unwrap()
                        .keys_by_filter(&filters)
                        .unwrap()[1]
                        .iter()
                        .map(|key| key.iter().map(|b| format!("{b:02x}")).collect())
                        .collect()
                };
                assert!(!filter_1_keys.is_empty());
                rewrite_filter_block(&table, case.rewrite);
                let (code, audit) = keys_audit_misses(&copy.0);
                let leveldb = keys_leveldb_misses(&copy.0);
                assert_eq!(
                    audit,
                    leveldb,
                    "{}: audit {} keys, LevelDB {} keys",
                    case.name,
                    audit.len(),
                    leveldb.len()
                );
                let lost = filter_1_keys.intersection(&leveldb).count();
                let expected = if case.loses_keys {
                    filter_1_keys.len()
                } else {
                    0
                };
                assert_eq!(lost, expected, "{}: filter 1's keys lost", case.name);
                assert_eq!(code, i32::from(!leveldb.is_empty()), "{}", case.name);
                eprintln!(
                    "{}: LevelDB and the audit both miss {} keys",
                    case.name,
                    leveldb.len()
                );
            });
        }
    });
}
