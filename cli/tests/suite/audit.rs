//! `leveldb-bloom audit` on databases written by real writers (stock LevelDB 1.23
//! through Debian's plyvel, the same swapped to this library, rusty-leveldb with this
//! crate's policy, goleveldb), on tables whose filters were rewritten by this test
//! (signed hash, mixed writers, one bit cleared), and on broken files.
//!
//! Run with `cargo test --workspace` (as `make test` does): the swapped database
//! needs the library's cdylib, which the workspace's root package builds.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::*;
use leveldb_bloom::hash::tail_is_ambiguous;
use leveldb_bloom::BloomFilterPolicy;

mod signed_hash;

/// Every table `leveldb`, none missed, exit 0.
fn assert_all_leveldb(dir: &Path) {
    let (code, json) = audit_json(dir);
    assert_eq!(code, 0, "{json}");
    let tables = json["tables"].as_array().unwrap();
    assert!(!tables.is_empty());
    for table in tables {
        assert_eq!(table["dialect"], "leveldb", "{table}");
        assert_eq!(table["missed"], 0);
        assert_eq!(table["k"], 6);
        assert_eq!(table["filter_name"], "leveldb.BuiltinBloomFilter2");
    }
    assert_eq!(json["missed"], 0);
    assert!(json["entries"].as_u64().unwrap() > 10_000);
    assert_eq!(json["verdict"], "ok");
}

#[test]
fn stock_leveldb_database() {
    assert_all_leveldb(&plyvel_database(false).0);
}

#[test]
fn swapped_leveldb_database() {
    assert_all_leveldb(&plyvel_database(true).0);
}

#[test]
fn rusty_leveldb_database() {
    let dir = Scratch::new();
    let mut options = rusty_leveldb::Options {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        max_file_size: 128 << 10,
        ..Default::default()
    };
    options.filter_policy = std::rc::Rc::new(Box::new(BloomFilterPolicy::new(10)));
    let mut db = rusty_leveldb::DB::open(&dir.0, options).expect("opens");
    for i in 0..30_000u32 {
        db.put(format!("rusty key {i}").as_bytes(), b"value")
            .unwrap();
    }
    db.compact_range(b"rusty", b"rusty z").unwrap();
    db.close().unwrap();
    assert_all_leveldb(&dir.0);
}

/// A database goleveldb wrote.
pub(super) fn goleveldb_database() -> (Scratch, Scratch) {
    let (db, scratch) = (Scratch::new(), Scratch::new());
    let (keys, written) = keys_file(&scratch.0, 20_000);
    assert!(written.iter().any(|key| tail_is_ambiguous(key)));
    goleveldb_write(&db.0, &keys);
    (db, scratch)
}

/// goleveldb's filters, under a name HyperLevelDB and LevelDB before 1.18 on x86
/// read with the signed hash: their misses fail the audit, unless the user names
/// goleveldb as the reader.
#[test]
fn goleveldb_database_is_legacy_unsigned() {
    let (db, _keys) = goleveldb_database();
    let (code, json) = audit_json(&db.0);
    assert_eq!(
        (code, &json["verdict"]),
        (1, &"keys-missed".into()),
        "{json}"
    );
    for table in json["tables"].as_array().unwrap() {
        assert_eq!(table["dialect"], "legacy-unsigned", "{table}");
        assert_eq!(table["filter_name"], "leveldb.BuiltinBloomFilter");
        assert_eq!(table["missed_by_unsigned_readers"], 0);
        // Its keys with high tail bytes: a signed reader would miss some.
        let signed = table["missed_by_signed_readers"].as_u64().unwrap();
        assert!(signed > 0, "{table}");
        assert_eq!(table["missed"], signed);
    }
    assert!(json["notes"]
        .to_string()
        .contains("name its readers with --reader"));
    let (code, json) = audit_json_with(&db.0, &["--reader", "goleveldb"]);
    assert_eq!((code, &json["verdict"]), (0, &"ok".into()), "{json}");
    for table in json["tables"].as_array().unwrap() {
        assert_eq!(table["missed"], 0);
    }
    assert!(json["notes"].to_string().contains("not counted"), "{json}");
}

/// Broken inputs: a clear message with the file (and offset), the right exit status,
/// no panic; the other tables are still audited.
#[test]
fn broken_tables_and_bad_paths() {
    let db = plyvel_database(false);
    let good = ldb_files(&db.0)[0].clone();
    let data = std::fs::read(&good).unwrap();
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let broken = |name: &str, bytes: &[u8]| {
        let path = dir.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    };
    let truncated = broken("truncated.ldb", &data[..data.len() / 2]);
    let garbage = broken("garbage.ldb", &[0x5a; 4096]);
    let short = broken("short.ldb", b"tiny");
    let mut bad_crc = data.clone();
    bad_crc[10] ^= 0x01; // inside the first data block
    let bad_crc = broken("crc.ldb", &bad_crc);
    let mut bad_magic = data.clone();
    let n = bad_magic.len();
    bad_magic[n - 1] ^= 0xff;
    let bad_magic = broken("magic.ldb", &bad_magic);
    for (path, expected) in [
        (&truncated, "wrong magic number"),
        (&garbage, "wrong magic number"),
        (&short, "too short for a table"),
        (&bad_crc, "checksum mismatch"),
        (&bad_magic, "wrong magic number"),
    ] {
        let (code, stdout, stderr) = audit(&[path.as_path(), good.as_path()]);
        assert_eq!(code, 1, "{stdout}{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        let line = stdout
            .lines()
            .find(|l| l.starts_with("ERROR"))
            .unwrap_or_default();
        assert!(
            line.contains(path.to_str().unwrap()) && line.contains(expected),
            "{stdout}"
        );
        assert!(line.contains(" at offset "), "{line}");
        assert!(
            stdout.contains("leveldb  leveldb.BuiltinBloomFilter2"),
            "the good table: {stdout}"
        );
    }

    let empty = Scratch::new();
    std::fs::create_dir_all(&empty.0).unwrap();
    // Neither CURRENT nor a table: nothing audited is no OK (a mistyped path).
    let (code, stdout, _) = audit(&[&empty.0]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("no table files"), "{stdout}");
    assert!(stdout.contains("FAILED: nothing audited"), "{stdout}");

    let (code, stdout, _) = audit(&[Path::new("/nonexistent/leveldb-bloom")]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("ERROR /nonexistent/leveldb-bloom: No such file"),
        "{stdout}"
    );

    let usage = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .arg("audit")
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

/// docs/tool.md's sample: a plyvel database and a goleveldb one audited for the
/// programs that read them (`--reader leveldb --reader goleveldb`): OK, with the
/// keys a signed reader of goleveldb's name would miss as a note, not counted.
#[test]
fn the_docs_sample_audit_is_what_it_prints() {
    let dir = Scratch::new();
    // 3,000 keys: goleveldb writes them into one table, the same at every run.
    std::fs::create_dir_all(&dir.0).unwrap();
    let (keys, _) = keys_file(&dir.0, 3_000);
    goleveldb_write(&dir.0.join("goleveldb-db"), &keys);
    copy_db(&plyvel_database(false).0, &dir.0.join("plyvel-db"));
    let output = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .args([
            "audit",
            "--reader",
            "leveldb",
            "--reader",
            "goleveldb",
            "plyvel-db",
            "goleveldb-db",
        ])
        .current_dir(&dir.0)
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{printed}");
    // goleveldb removes the tables its compactions replaced in the background: on a busy
    // machine some may still be there when it closes, noted as not live, which the
    // sample leaves out.
    let printed: String = printed
        .lines()
        .filter(|line| !line.contains(": not live ("))
        .map(|line| format!("{line}\n"))
        .collect();
    let repo = std::path::Path::new(REPO);
    test_support::samples::assert_sample(repo, "docs/tool.md", "tool-audit", &printed, &[]);
}
