//! Memory and time bounded by the input's real size, not by the numbers inside it:
//! each attack crafted here byte by byte, run under an address-space limit of
//! 1 GiB (`RLIMIT_AS`) and a timeout, its peak resident memory checked.
//! - a filter block (8 KB compressed) claiming 16 million filters: `show`, `audit`;
//! - an index block (a few KB compressed) of 13 million entries naming one data
//!   block: `show`, `audit` (the block read once, its 3 keys counted once), `explain`;
//! - filter offsets that make the filters overlap into gigabytes: `show` refuses;
//! - `--bits-per-key` far past LevelDB's sane range: refused, saying what LevelDB does;
//! - 20,000 tables a MANIFEST lists, all missing: the MANIFEST read twice, not 20,001 times;
//! - a write-ahead log of one batch of 10 million tiny deletions: `explain --log`;
//! - a MANIFEST of 2 million tiny live tables: `explain` (measured, ~30x);
//! - a 1 GiB sparse file, of zeros or a real ELF library extended: `reach`.

// A binary of its own (tests/bounded): Linux gives a child the high-water mark of the
// memory of the process that spawned it (kept across exec), and these tests bound the
// tool's peak memory, so their parent must stay small: not the suite's binary.
#[path = "../suite/common/mod.rs"]
mod common;

use std::time::Duration;

use common::bounded::run_tool;
use common::craft::{self, varint};
use common::Scratch;

/// `show TABLE -o PAGE` under the limits, its memory checked as the case `what`.
fn show(table: &std::path::Path, page: &std::path::Path, what: &str) -> common::bounded::Run {
    let args = [
        "show".as_ref(),
        table.as_os_str(),
        "-o".as_ref(),
        page.as_os_str(),
    ];
    let r = run_tool(&args, TIMEOUT, |_| {});
    r.check(what, 400);
    r
}

const TIMEOUT: Duration = Duration::from_secs(60);

fn scratch() -> Scratch {
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    dir
}

/// A filter block of `count` filters, all empty, base_lg 11: the offset array of
/// zeros (compresses to almost nothing).
fn many_filters(count: usize) -> Vec<u8> {
    let mut block = vec![0u8; 4 * count + 4];
    block.push(11);
    block
}

/// An index block of `entries` entries all naming the table's one data block
/// (offset 0, `size`): the first whole, every other sharing all of its key (5 bytes).
fn repeating_index(entries: usize, size: u64) -> Vec<u8> {
    let key = craft::internal(b"\xff\xff");
    let value = craft::handle(0, size);
    let mut block = Vec::with_capacity(entries * 5 + 64);
    block.push(0);
    varint(key.len() as u64, &mut block);
    varint(value.len() as u64, &mut block);
    block.extend_from_slice(&key);
    block.extend_from_slice(&value);
    for _ in 1..entries {
        block.push(key.len() as u8);
        block.push(0);
        block.push(value.len() as u8);
        block.extend_from_slice(&value);
    }
    block.extend_from_slice(&0u32.to_le_bytes());
    block.extend_from_slice(&1u32.to_le_bytes());
    block
}

const KEYS: [&[u8]; 3] = [b"k1", b"k2", b"k3"];

#[test]
fn a_filter_block_claiming_millions_of_filters() {
    let dir = scratch();
    let table = dir.0.join("000005.ldb");
    let bytes = craft::table(
        &KEYS,
        b"filter.leveldb.BuiltinBloomFilter2",
        &many_filters(16 << 20),
        None,
    );
    std::fs::write(&table, &bytes).unwrap();
    let page = dir.0.join("page.html");
    let r = show(
        &table,
        &page,
        &format!("show: {} B table, 16M filters claimed", bytes.len()),
    );
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    let html = std::fs::metadata(&page).unwrap().len();
    assert!(html < 200 << 10, "a page of {html} bytes");
    let r = run_tool(
        &["audit".as_ref(), "--json".as_ref(), table.as_os_str()],
        TIMEOUT,
        |_| {},
    );
    r.check("audit: 16M filters claimed", 400);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    // Empty filters: LevelDB answers "absent" for every key, and the audit says so.
    assert_eq!(doc["verdict"], "keys-missed", "{doc}");
    assert_eq!(doc["missed"], 3);
    assert_eq!(doc["tables"][0]["filters"], 16 << 20);
    assert_eq!(doc["entries"], 3);
}

#[test]
fn an_index_of_millions_of_entries_naming_one_block() {
    let dir = scratch();
    let table = dir.0.join("000005.ldb");
    let data = craft::block(
        &KEYS
            .iter()
            .map(|k| craft::internal(k))
            .collect::<Vec<_>>()
            .iter()
            .map(|k| (k.as_slice(), &b"v"[..]))
            .collect::<Vec<_>>(),
    );
    let entries = 13 << 20;
    let bytes = craft::table(
        &KEYS,
        b"filter.leveldb.BuiltinBloomFilter2",
        &many_filters(2),
        Some(&repeating_index(entries, data.len() as u64)),
    );
    std::fs::write(&table, &bytes).unwrap();
    let r = run_tool(
        &["audit".as_ref(), "--json".as_ref(), table.as_os_str()],
        TIMEOUT,
        |_| {},
    );
    r.check(
        &format!("audit: {} B table, index of {entries} entries", bytes.len()),
        400,
    );
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["entries"], 3, "the block counted once: {doc}");
    let page = dir.0.join("page.html");
    let r = run_tool(
        &[
            "show".as_ref(),
            table.as_os_str(),
            "-o".as_ref(),
            page.as_os_str(),
            "--key".as_ref(),
            "k2".as_ref(),
        ],
        TIMEOUT,
        |_| {},
    );
    r.check("show: index of 13M entries", 400);
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    assert!(std::fs::read_to_string(&page)
        .unwrap()
        .contains("\"key_count\":3"));
}

/// Offsets 0, M, 0, M, …: every other filter is the whole block (M bytes): in a
/// table of 4 KB with base_lg 0, thousands of filters of a megabyte each.
#[test]
fn filters_overlapping_into_gigabytes_are_refused() {
    let dir = scratch();
    let table = dir.0.join("000005.ldb");
    let m = 1u32 << 20;
    let mut block = vec![0u8; m as usize];
    for i in 0..4096u32 {
        block.extend_from_slice(&(if i % 2 == 0 { 0 } else { m }).to_le_bytes());
    }
    block.extend_from_slice(&m.to_le_bytes());
    block.push(0);
    let bytes = craft::table(&KEYS, b"filter.leveldb.BuiltinBloomFilter2", &block, None);
    std::fs::write(&table, &bytes).unwrap();
    let page = dir.0.join("page.html");
    let r = show(
        &table,
        &page,
        &format!("show: {} B table, overlapping filters", bytes.len()),
    );
    assert_eq!(r.code(), Some(1));
    assert!(
        r.stderr.contains("its offsets make them overlap"),
        "{}",
        r.stderr
    );
    assert!(!page.exists());
}

#[test]
fn bits_per_key_past_the_sane_range_is_refused_with_what_leveldb_does() {
    let dir = scratch();
    let page = dir.0.join("page.html");
    for (bits, keys, said) in [
        (
            "1000000",
            "a",
            "LevelDB would build a filter of 125001 bytes for these 1 keys, k = 30",
        ),
        ("4294967295", "a", "overflows"),
        ("4294967295", "a,b,c", "overflows"),
        ("100", "a", ""),
    ] {
        let r = run_tool(
            &[
                "show",
                "--bits-per-key",
                bits,
                "--keys",
                keys,
                "-o",
                page.to_str().unwrap(),
            ],
            TIMEOUT,
            |_| {},
        );
        r.check(&format!("--bits-per-key {bits} --keys {keys}"), 100);
        if said.is_empty() {
            assert_eq!(r.code(), Some(0), "{}", r.stderr);
            assert!(std::fs::read_to_string(&page)
                .unwrap()
                .contains("100 bits per key"));
        } else {
            assert_eq!(r.code(), Some(1));
            assert!(
                r.stderr.contains(said) && r.stderr.contains("0 to 100"),
                "{}",
                r.stderr
            );
        }
    }
}

#[test]
fn twenty_thousand_missing_tables_read_the_manifest_once_more_not_each_time() {
    let dir = scratch();
    let mut edit = craft::base_edit(1);
    for number in 10..20_010 {
        craft::add_table(&mut edit, number);
    }
    craft::database(&dir.0, &[edit]);
    let r = run_tool(
        &["audit".as_ref(), "--json".as_ref(), dir.0.as_os_str()],
        TIMEOUT,
        |_| {},
    );
    r.check("audit: 20,000 listed tables missing", 200);
    assert_eq!(r.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["errors"].as_array().unwrap().len(), 20_000);
    // Processor time, not wall time: a busy machine slows the run, not its work.
    assert!(r.cpu_seconds < 10.0, "{} s of CPU", r.cpu_seconds);
}

#[test]
fn a_log_of_ten_million_tiny_deletions() {
    let dir = scratch();
    craft::database(&dir.0, &[craft::base_edit(3)]);
    let count: u32 = 10_000_000;
    let mut batch = Vec::with_capacity(count as usize * 3 + 12);
    batch.extend_from_slice(&7u64.to_le_bytes());
    batch.extend_from_slice(&count.to_le_bytes());
    for i in 0..count {
        batch.extend_from_slice(&[0, 1, b'a' + (i % 26) as u8]);
    }
    std::fs::write(dir.0.join("000003.log"), craft::log(&[batch])).unwrap();
    let r = run_tool(
        &[
            "explain".as_ref(),
            "--log".as_ref(),
            "--json".as_ref(),
            dir.0.as_os_str(),
            "b".as_ref(),
        ],
        TIMEOUT,
        |_| {},
    );
    r.check("explain --log: a 30 MB batch of 10M deletions", 200);
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc[0]["found"]["kind"], "deletion", "{doc}");
    let last_b = (0..count).rev().find(|i| i % 26 == 1).unwrap();
    assert_eq!(doc[0]["found"]["sequence"], 7 + u64::from(last_b), "{doc}");
}

/// A MANIFEST of 2 million live tables, each added with one-byte keys (the shortest
/// LevelDB's decoder takes): `explain` holds the live set. Bounded by the MANIFEST's
/// size, but at about 30 times it (a table's keys held in two allocations, in a
/// B-tree, then a vector): measured here, and kept under 1000 MB for 20 MB, until the
/// live set is held more compactly.
#[test]
fn a_manifest_of_millions_of_tiny_tables() {
    let dir = scratch();
    let mut records = vec![craft::base_edit(1)];
    let tables: u64 = 2_000_000;
    let mut edit = Vec::new();
    for number in 0..tables {
        edit.push(7);
        varint(1 + number % 6, &mut edit);
        varint(100 + number, &mut edit);
        edit.extend_from_slice(&[1, 1, b'a', 1, b'z']);
        if edit.len() > 1 << 20 {
            records.push(std::mem::take(&mut edit));
        }
    }
    records.push(edit);
    craft::database(&dir.0, &records);
    let size = std::fs::metadata(dir.0.join("MANIFEST-000001"))
        .unwrap()
        .len();
    let r = run_tool(
        &["explain".as_ref(), dir.0.as_os_str(), "0".as_ref()],
        TIMEOUT,
        |_| {},
    );
    r.check(
        &format!("explain: a MANIFEST of {size} bytes, {tables} tables"),
        1000,
    );
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    let ratio = (r.max_rss_kib << 10) as f64 / size as f64;
    eprintln!("resident {ratio:.1} times the MANIFEST");
}

/// `reach` reads an ELF file's headers and tables where they lie, never the whole
/// file: a 1 GiB sparse file of zeros, and Debian's LevelDB library extended to
/// 1 GiB, each judged in under 64 MiB resident and 2 s of processor time.
#[test]
fn reach_judges_a_1_gib_file_by_its_headers() {
    let dir = scratch();
    let zeros = dir.0.join("zeros.so");
    std::fs::File::create(&zeros)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let leveldb = std::fs::read_dir("/usr/lib/x86_64-linux-gnu")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .find(|path| {
            path.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("libleveldb.so.1"))
        });
    let mut cases = vec![(zeros, "not an ELF file")];
    if let Some(leveldb) = leveldb {
        let extended = dir.0.join("libleveldb-extended.so");
        std::fs::copy(&leveldb, &extended).unwrap();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(&extended)
            .unwrap();
        file.set_len(1 << 30).unwrap();
        cases.push((extended, "holds LevelDB"));
    }
    for (file, said) in cases {
        let r = run_tool(&["reach".as_ref(), file.as_os_str()], TIMEOUT, |_| {});
        r.check(&format!("reach {}", file.display()), 64);
        assert!(
            r.cpu_seconds < 2.0,
            "{}: {} s",
            file.display(),
            r.cpu_seconds
        );
        assert!(
            r.stdout.contains(said) || r.stderr.contains(said),
            "{}{}",
            r.stdout,
            r.stderr
        );
    }
}
