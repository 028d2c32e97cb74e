//! `leveldb-bloom audit` on databases written by real writers (stock LevelDB 1.23
//! through Debian's plyvel, the same swapped to this library, rusty-leveldb with this
//! crate's policy, goleveldb), on tables whose filters were rewritten by this test
//! (signed hash, one bit cleared), and on broken files.
//!
//! Run with `cargo test --workspace` (as `make test` does): the swapped database
//! needs the library's cdylib, which the workspace's root package builds.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use leveldb_bloom::hash::{hash_with, tail_is_ambiguous, TailBytes};
use leveldb_bloom::{BloomFilterPolicy, Filter};
use leveldb_table::{masked_crc, FilterBlock, Table};

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const PYTHON: &str = "/usr/bin/python3";

/// A directory removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "leveldb-bloom-audit-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn audit(args: &[&Path]) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .arg("audit")
        .args(args)
        .output()
        .expect("the tool runs");
    (
        output.status.code().expect("exits, no signal"),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn audit_json(path: &Path) -> (i32, serde_json::Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .args(["audit", "--json"])
        .arg(path)
        .output()
        .expect("the tool runs");
    let json = serde_json::from_slice(&output.stdout).expect("one JSON document");
    (output.status.code().unwrap(), json)
}

fn succeed(command: &mut Command) -> Output {
    let output = command.output().expect("runs");
    assert!(
        output.status.success(),
        "{command:?}: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

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
    assert!(json["keys"].as_u64().unwrap() > 10_000);
}

/// plyvel on Debian's LevelDB 1.23, stock and swapped by LD_PRELOAD.
fn plyvel_database(swapped: bool) -> Scratch {
    let dir = Scratch::new();
    let mut command = Command::new(PYTHON);
    command
        .arg(Path::new(REPO).join("tests/loaders/python_db.py"))
        .args(["plyvel", "write"])
        .arg(&dir.0);
    if swapped {
        let exe = std::env::current_exe().unwrap();
        let lib = exe.parent().unwrap().join("libleveldb_bloom.so");
        assert!(
            lib.exists(),
            "{} missing: run cargo test --workspace",
            lib.display()
        );
        command
            .env("LD_PRELOAD", &lib)
            .env("LEVELDB_BLOOM_LIB", &lib);
    }
    let shown = String::from_utf8(succeed(&mut command).stdout).unwrap();
    assert!(shown.contains(if swapped {
        "swap status: 3"
    } else {
        "swap status: absent"
    }));
    dir
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

/// The goleveldb tool (tests/goleveldb), built in GOPATH mode from Debian's packages.
fn goleveldb_tool() -> PathBuf {
    let out = std::env::temp_dir().join(format!("goleveldb-tool-audit-{}", std::process::id()));
    succeed(
        Command::new("go")
            .args(["build", "-o"])
            .arg(&out)
            .arg(".")
            .current_dir(Path::new(REPO).join("tests/goleveldb"))
            .env("GOPATH", "/usr/share/gocode")
            .env("GO111MODULE", "off")
            .env(
                "GOCACHE",
                std::env::temp_dir().join("leveldb-bloom-gocache"),
            ),
    );
    out
}

/// Keys of many lengths, a third ending in bytes ≥ 0x80.
fn keys_file(dir: &Path) -> (PathBuf, Vec<Vec<u8>>) {
    let keys: Vec<Vec<u8>> = (0..20_000u32)
        .map(|i| {
            let mut key = format!("go key {i:05} {}", "x".repeat((i % 11) as usize)).into_bytes();
            key.extend_from_slice(&[0xff, 0xfe][..(i % 3) as usize]);
            key
        })
        .collect();
    let mut bytes = Vec::new();
    for key in &keys {
        bytes.extend_from_slice(&(key.len() as u32).to_le_bytes());
        bytes.extend_from_slice(key);
    }
    std::fs::create_dir_all(dir).unwrap();
    let path = dir.join("keys");
    std::fs::write(&path, bytes).unwrap();
    (path, keys)
}

/// A database goleveldb wrote.
fn goleveldb_database() -> (Scratch, Scratch) {
    let (db, scratch) = (Scratch::new(), Scratch::new());
    let (keys, written) = keys_file(&scratch.0);
    assert!(written.iter().any(|key| tail_is_ambiguous(key)));
    succeed(
        Command::new(goleveldb_tool())
            .arg("write")
            .arg(&db.0)
            .arg(keys),
    );
    (db, scratch)
}

#[test]
fn goleveldb_database_is_legacy_unsigned() {
    let (db, _keys) = goleveldb_database();
    let (code, json) = audit_json(&db.0);
    assert_eq!(code, 0, "{json}");
    for table in json["tables"].as_array().unwrap() {
        assert_eq!(table["dialect"], "legacy-unsigned", "{table}");
        assert_eq!(table["filter_name"], "leveldb.BuiltinBloomFilter");
        assert_eq!(table["missed"], 0);
        // Its keys with high tail bytes: an x86 LevelDB before 1.18 would miss some.
        assert!(
            table["missed_by_old_x86_leveldb"].as_u64().unwrap() > 0,
            "{table}"
        );
    }
}

fn ldb_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ldb"))
        .collect();
    files.sort();
    files
}

/// LevelDB's masked crc32c of a block and its type byte.
/// Rewrites each filter of `table` with `rewrite(filter index, its keys, filter)`,
/// keeping its length, and fixes the filter block's checksum.
fn rewrite_filters(table: &Path, mut rewrite: impl FnMut(usize, &[Vec<u8>], &mut [u8])) {
    let mut data = std::fs::read(table).unwrap();
    let parsed = Table::open(&data).unwrap();
    let handle = ["leveldb.BuiltinBloomFilter2", "leveldb.BuiltinBloomFilter"]
        .into_iter()
        .find_map(|name| parsed.filter_block_handle(name).unwrap())
        .expect("a filter block");
    let block = parsed.block(handle).unwrap().into_owned();
    let filters = FilterBlock::parse(&block, 0).unwrap();
    let keys = parsed.keys_by_filter(&filters).unwrap();
    let start = handle.offset as usize;
    for (i, keys) in keys.iter().enumerate() {
        let Some(filter) = filters.filter(i) else {
            continue;
        };
        let at = start + (filter.as_ptr() as usize - block.as_ptr() as usize);
        rewrite(i, keys, &mut data[at..at + filter.len()]);
    }
    let end = start + handle.size as usize;
    let crc = masked_crc(&data[start..end], data[end]);
    data[end + 1..end + 5].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(table, data).unwrap();
}

/// Filters built by this test with the signed hash, as LevelDB before 1.18 on x86
/// wrote them, under `leveldb.BuiltinBloomFilter`: `legacy-signed`, and every key
/// that an unsigned reader (goleveldb) misses is listed; exit 1.
#[test]
fn signed_filters_are_legacy_signed_and_unsigned_misses_reported() {
    let (db, _keys) = goleveldb_database();
    let policy = BloomFilterPolicy::new(10);
    let tables = ldb_files(&db.0);
    let mut expected_missed = Vec::new();
    for table in &tables {
        rewrite_filters(table, |_, keys, filter| {
            let hashes = keys
                .iter()
                .map(|key| hash_with(key, 0xbc9f1d34, TailBytes::Signed));
            policy.write_filter_of_hashes(hashes, filter).unwrap();
            let written = Filter::new(filter);
            for key in keys {
                if !written.may_contain(key) {
                    expected_missed
                        .push(key.iter().map(|b| format!("{b:02x}")).collect::<String>());
                }
            }
        });
    }
    assert!(
        !expected_missed.is_empty(),
        "no key an unsigned reader misses"
    );
    let (code, json) = audit_json(&db.0);
    assert_eq!(code, 1);
    let mut missed = Vec::new();
    for table in json["tables"].as_array().unwrap() {
        assert_eq!(table["dialect"], "legacy-signed", "{table}");
        missed.extend(
            table["missed_keys"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap().to_string()),
        );
    }
    missed.sort();
    expected_missed.sort();
    assert_eq!(missed, expected_missed);
    assert_eq!(json["missed"], expected_missed.len());
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
    let (code, stdout, _) = audit(&[&empty.0]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("no table files"), "{stdout}");

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
