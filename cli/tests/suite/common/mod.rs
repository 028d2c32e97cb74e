//! What the tool's tests share: scratch directories, running the tool, databases
//! written by real LevelDB (plyvel on Debian's LevelDB 1.23), and rewriting a
//! table's filter block in place.
#![allow(dead_code)] // the suite and the bounded binary (tests/bounded) each use a part

pub mod bounded;
pub mod craft;
pub mod dist;
mod goleveldb;

#[allow(unused_imports)] // the bounded binary (tests/bounded) uses none
pub use goleveldb::{goleveldb_read, goleveldb_tool, goleveldb_write};

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub use test_support::Scratch;

use leveldb_table::{masked_crc, FilterBlock, Lookup, ReadAt, Table};

pub const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
pub const PYTHON: &str = "/usr/bin/python3";

pub fn audit(args: &[&Path]) -> (i32, String, String) {
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

pub fn audit_json(path: &Path) -> (i32, serde_json::Value) {
    audit_json_with(path, &[])
}

/// `audit --json PATH ARGS` (every missed key listed): its exit status and report.
pub fn audit_json_with(path: &Path, args: &[&str]) -> (i32, serde_json::Value) {
    let output = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .args(["audit", "--json", "--max-missed", "1000000"])
        .args(args)
        .arg(path)
        .output()
        .expect("the tool runs");
    let json = serde_json::from_slice(&output.stdout).expect("one JSON document");
    (output.status.code().unwrap(), json)
}

pub fn succeed(command: &mut Command) -> Output {
    let output = command.output().expect("runs");
    assert!(
        output.status.success(),
        "{command:?}: {}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// plyvel on Debian's LevelDB 1.23, stock and swapped by LD_PRELOAD.
pub fn plyvel_database(swapped: bool) -> Scratch {
    let dir = Scratch::new();
    let mut command = Command::new(PYTHON);
    command
        .arg(Path::new(REPO).join("tests/loaders/python_db.py"))
        .args(["plyvel", "write"])
        .arg(&dir.0);
    if swapped {
        let lib = test_support::release_deps_dir().join("libleveldb_bloom.so");
        assert!(
            lib.exists(),
            "{} missing: run cargo build --release --workspace",
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

pub fn ldb_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "ldb"))
        .collect();
    files.sort();
    files
}

/// Where the filter block of the table `data` lies in it (under LevelDB's name,
/// goleveldb's or RocksDB's block-based one).
pub fn filter_block_range(data: &[u8]) -> std::ops::Range<usize> {
    let parsed = Table::open(data).unwrap();
    let handle = [
        "leveldb.BuiltinBloomFilter2",
        "leveldb.BuiltinBloomFilter",
        "rocksdb.BuiltinBloomFilter",
    ]
    .into_iter()
    .find_map(|name| parsed.filter_block_handle(name).unwrap())
    .expect("a filter block");
    handle.offset as usize..(handle.offset + handle.size) as usize
}

/// `table`'s filter block under LevelDB's current name.
pub fn current_filter_block<R: ReadAt + ?Sized>(table: &Table<'_, R>) -> FilterBlock {
    table
        .filter("leveldb.BuiltinBloomFilter2")
        .unwrap()
        .expect("a filter block under LevelDB's current name")
}

/// Rewrites the filter block of `table` in place with `rewrite` (its length kept) and
/// fixes its checksum.
pub fn rewrite_filter_block(table: &Path, rewrite: impl FnOnce(&mut [u8])) {
    let mut data = std::fs::read(table).unwrap();
    let range = filter_block_range(&data);
    rewrite(&mut data[range.clone()]);
    let end = range.end;
    let crc = masked_crc(&data[range], data[end]);
    data[end + 1..end + 5].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(table, data).unwrap();
}

/// Rewrites each filter of `table` with `rewrite(filter index, its keys, filter)`,
/// keeping its length, and fixes the filter block's checksum.
pub fn rewrite_filters(table: &Path, mut rewrite: impl FnMut(usize, &[Vec<u8>], &mut [u8])) {
    let data = std::fs::read(table).unwrap();
    let keys = {
        let parsed = Table::open(&data).unwrap();
        let range = filter_block_range(&data);
        let filters = FilterBlock::new(data[range].to_vec(), 0);
        parsed.keys_by_filter(&filters).unwrap()
    };
    rewrite_filter_block(table, |block| {
        let filters = FilterBlock::new(block.to_vec(), 0);
        let start = filters.contents().as_ptr() as usize;
        let spans: Vec<_> = (0..keys.len())
            .map(|i| match filters.lookup(i) {
                Lookup::Filter(filter) => Some(filter.as_ptr() as usize - start..filter.len()),
                _ => None,
            })
            .collect();
        for (i, span) in spans.into_iter().enumerate() {
            if let Some(span) = span {
                rewrite(i, &keys[i], &mut block[span.start..span.start + span.end]);
            }
        }
    });
}

/// Runs the Python `script` with plyvel (Debian's LevelDB 1.23), the database
/// directory `db` as its `sys.argv[1]`.
pub fn plyvel_script(db: &Path, script: &str) {
    succeed(Command::new(PYTHON).arg("-c").arg(script).arg(db));
}

/// `count` keys of many lengths, a third ending in bytes ≥ 0x80, in a file of the
/// goleveldb tool's format.
pub fn keys_file(dir: &Path, count: u32) -> (PathBuf, Vec<Vec<u8>>) {
    let keys: Vec<Vec<u8>> = (0..count)
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

/// A table's 48-byte footer: the metaindex and index handles (offset, size) as
/// varints, zero padding, LevelDB's magic number.
pub fn table_footer(metaindex: (u64, u64), index: (u64, u64)) -> Vec<u8> {
    let mut footer = Vec::new();
    for mut v in [metaindex.0, metaindex.1, index.0, index.1] {
        while v >= 0x80 {
            footer.push(v as u8 | 0x80);
            v >>= 7;
        }
        footer.push(v as u8);
    }
    footer.resize(40, 0);
    footer.extend_from_slice(&0xdb47_7524_8b80_fb57u64.to_le_bytes());
    footer
}

/// The files of the live tables of the database at `dir`, as its MANIFEST lists them.
pub fn live_table_files(dir: &Path) -> Vec<PathBuf> {
    let version = leveldb_table::db::manifest::live_version(dir).unwrap();
    (0..7)
        .flat_map(|level| version.files(level))
        .map(|t| leveldb_table::db::manifest::table_file(dir, t.number))
        .collect()
}

/// LevelDB 1.23 reading keys through a filter policy that records the filters it is
/// asked about (cli/tests/explain_harness.cc), built into target/tmp once per test
/// process (the tests of several modules share it).
pub fn harness() -> PathBuf {
    static HARNESS: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    HARNESS.get_or_init(build_harness).clone()
}

fn build_harness() -> PathBuf {
    let out = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("explain_harness.{}", std::process::id()));
    succeed(
        Command::new("g++")
            .args([
                "-std=c++17",
                "-O1",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
            ])
            .arg(Path::new(REPO).join("cli/tests/explain_harness.cc"))
            .arg("-o")
            .arg(&out)
            .arg("-lleveldb"),
    );
    out
}

/// What LevelDB did for each key: the filters it asked about (hex, answer) and
/// whether the Get found a value.
pub fn leveldb_gets(
    harness: &Path,
    dir: &Path,
    keys: &[String],
) -> Vec<(Vec<(String, bool)>, bool)> {
    let mut child = Command::new(harness)
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all((keys.join("\n") + "\n").as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(
        text.ends_with("filters built 0\n"),
        "LevelDB compacted during the reads:\n{text}"
    );
    let mut gets = Vec::new();
    let mut calls = Vec::new();
    for line in text.lines() {
        if let Some(call) = line.strip_prefix("filter ") {
            let (bytes, answer) = call.rsplit_once(' ').unwrap();
            calls.push((bytes.to_string(), answer == "1"));
        } else if let Some(result) = line.strip_prefix("get ") {
            gets.push((std::mem::take(&mut calls), result == "found"));
        }
    }
    assert_eq!(gets.len(), keys.len());
    gets
}

/// Runs `leveldb-bloom refilter DB ARGS --json`: its exit code, its JSON report and
/// its stderr.
pub fn refilter_json(db: &Path, args: &[&str]) -> (i32, serde_json::Value, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .arg("refilter")
        .arg(db)
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A small database written by LevelDB (tests/loaders/refilter_db.py) with filters
/// of `bits` bits per key, or "none": 12,000 keys compacted into a level-2 table,
/// then 300 more into a level-0 table; the same tables whatever the policy.
pub fn refilter_db(bits: &str) -> Scratch {
    let db = Scratch::new();
    succeed(
        Command::new(PYTHON)
            .arg(Path::new(REPO).join("tests/loaders/refilter_db.py"))
            .arg("write")
            .arg(&db.0)
            .args([bits, LATE]),
    );
    db
}

/// The late keys of [`refilter_db`]'s loader (written after its compaction).
const LATE: &str = "300";

/// LevelDB opens the database [`refilter_db`] wrote with the bloom policy and reads
/// every key.
pub fn leveldb_reads_every_key(db: &Path) {
    let read = succeed(
        Command::new(PYTHON)
            .arg(Path::new(REPO).join("tests/loaders/refilter_db.py"))
            .arg("read")
            .arg(db)
            .args(["10", LATE]),
    );
    let text = String::from_utf8_lossy(&read.stdout);
    assert!(
        text.contains("read: 12300 present, 12000 absent, 0 wrong"),
        "{text}"
    );
}

/// Copies the files of the database `from` into `to`, made if missing.
pub fn copy_db(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
    }
}

/// A Python program holding the database `db` open with plyvel (LevelDB 1.23), once
/// LevelDB has opened it; it closes the database and exits when [`Holder::release`]d.
pub struct Holder(pub std::process::Child);

impl Holder {
    pub fn hold(db: &Path) -> Self {
        use std::io::{BufRead, BufReader};
        let mut child = Command::new(PYTHON)
            .arg("-c")
            .arg("import plyvel, sys\ndb = plyvel.DB(sys.argv[1])\nprint('open', flush=True)\nsys.stdin.read()\ndb.close()")
            .arg(db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "open\n");
        Self(child)
    }

    /// Closes the database and waits for the program to exit.
    pub fn release(&mut self) {
        drop(self.0.stdin.take());
        assert!(self.0.wait().unwrap().success());
    }
}
