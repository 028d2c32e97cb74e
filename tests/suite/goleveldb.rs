//! The legacy policy (`leveldb.BuiltinBloomFilter`) against goleveldb, the writer of
//! that name still in use (Debian's golang-github-syndtr-goleveldb-dev, built in
//! GOPATH mode from tests/goleveldb):
//! - a database goleveldb wrote is read by LevelDB 1.23 with the legacy policy through
//!   the C API: every key found, and the filters consulted (counted by
//!   c_tests/count_filter_calls.cc) and answering "absent" for absent keys;
//! - a database LevelDB 1.23 wrote with the legacy policy is read by goleveldb with
//!   its own bloom filter: every key found, and goleveldb's filter, counting, said
//!   "absent" for absent keys, so it found and used the filters;
//! - for keys whose tail bytes are all below 0x80 the legacy filters are goleveldb's
//!   byte for byte, and for the others a superset of goleveldb's bits.

use crate::common;

use std::collections::BTreeMap;

use std::ffi::c_int;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use bloom::hash::tail_is_ambiguous;
use bloom::BloomFilterPolicy;
use common::{Lang, Program};

#[allow(non_camel_case_types)]
enum leveldb_filterpolicy_t {}

our_functions! {
    fn leveldb_bloom_legacy_policy_create(bits_per_key: c_int) -> *mut leveldb_filterpolicy_t;
    fn leveldb_bloom_policy_destroy(policy: *mut leveldb_filterpolicy_t);
    fn leveldb_filterpolicy_create_filter(
        policy: *const leveldb_filterpolicy_t,
        key_array: *const *const std::ffi::c_char,
        key_length_array: *const usize,
        num_keys: c_int,
        filter_length: *mut usize,
    ) -> *mut std::ffi::c_char;
}

/// Keys written to the databases; as many absent keys fall between them.
const KEYS: usize = 50_000;

/// Key i: its number, then 0 to 8 bytes of a pattern that runs through every byte
/// value, so keys have every tail length and many have a tail byte ≥ 0x80.
fn key(i: usize) -> Vec<u8> {
    let mut key = format!("{i:07}").into_bytes();
    key.extend((0..i % 9).map(|j| (i * 31 + j * 97) as u8));
    key
}

/// The written keys (even numbers) and the absent ones (odd), each as a key file.
fn key_files() -> &'static (PathBuf, PathBuf) {
    static FILES: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    FILES.get_or_init(|| {
        let present: Vec<Vec<u8>> = (0..2 * KEYS).step_by(2).map(key).collect();
        let absent: Vec<Vec<u8>> = (1..2 * KEYS).step_by(2).map(key).collect();
        let ambiguous = present.iter().filter(|k| tail_is_ambiguous(k)).count();
        assert!(
            ambiguous > KEYS / 3,
            "only {ambiguous} keys with a high tail byte"
        );
        let dir = scratch("keys");
        let files = (dir.join("present"), dir.join("absent"));
        write_keys(&files.0, &present);
        write_keys(&files.1, &absent);
        files
    })
}

/// A key file: each key as a 4-byte little-endian length and its bytes.
fn write_keys(path: &Path, keys: &[Vec<u8>]) {
    let mut bytes = Vec::new();
    for key in keys {
        bytes.extend_from_slice(&(key.len() as u32).to_le_bytes());
        bytes.extend_from_slice(key);
    }
    std::fs::write(path, bytes).expect("key file");
}

/// An empty directory under the test output directory.
fn scratch(name: &str) -> PathBuf {
    let dir = common::lib_dir().join("goleveldb-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

/// tests/goleveldb built once: Debian's goleveldb from GOPATH, no network.
fn goleveldb_tool() -> &'static Path {
    static TOOL: OnceLock<PathBuf> = OnceLock::new();
    TOOL.get_or_init(|| {
        let out = common::lib_dir().join("goleveldb-tool");
        common::run(
            Command::new("go")
                .args(["build", "-o"])
                .arg(&out)
                .arg(".")
                .current_dir(common::repo().join("tests/goleveldb"))
                .env("GOPATH", "/usr/share/gocode")
                .env("GO111MODULE", "off")
                .env("GOCACHE", common::lib_dir().join("gocache")),
        );
        out
    })
}

/// c_tests/legacy_db.c, linked to this library and LevelDB.
fn legacy_db() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        Program::new("legacy_db", Lang::C99, &["c_tests/legacy_db.c"])
            .link_bloom()
            .arg("-lleveldb")
            .build()
    })
}

/// Runs legacy_db with the counting shim, which must pass (c_tests/check.h's report);
/// returns the rest of its stdout and the shim's counts.
fn run_legacy_db(args: &[&Path]) -> (String, BTreeMap<String, String>) {
    let mut command = common::command(legacy_db());
    command.args(args).env("LD_PRELOAD", common::count_shim());
    let output = command.output().expect("legacy_db runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{command:?} failed\n{stdout}\n{stderr}"
    );
    common::harness::assert_report("legacy_db", &stdout);
    // What it printed besides its report line.
    let shown: String = stdout
        .lines()
        .filter(|line| !line.starts_with("legacy_db: "))
        .map(|line| format!("{line}\n"))
        .collect();
    (shown, common::filter_calls(&stderr))
}

fn count(counts: &BTreeMap<String, String>, name: &str) -> u64 {
    counts[name].parse().expect("a count")
}

#[test]
fn leveldb_reads_a_goleveldb_database_through_its_filters() {
    let (present, absent) = key_files();
    let dir = scratch("written-by-goleveldb").join("db");
    let wrote = common::run(
        Command::new(goleveldb_tool())
            .arg("write")
            .arg(&dir)
            .arg(present),
    );
    assert_eq!(wrote, format!("wrote {KEYS} keys\n"));

    let (stdout, counts) = run_legacy_db(&[Path::new("read"), &dir, present, absent]);
    println!("LevelDB 1.23 + legacy policy on goleveldb's database: {stdout}{counts:?}");
    assert_eq!(
        stdout,
        format!("found {KEYS} of {KEYS}, absent {KEYS} of {KEYS}\n")
    );
    let callbacks_in = &counts["callbacks_in"];
    assert!(callbacks_in.contains("libleveldb_bloom"), "{counts:?}");
    assert!(count(&counts, "policies") >= 1, "{counts:?}");
    // Every absent key lies inside some table's range, so a filter is asked about it;
    // at 10 bits per key it says "absent" about 99% of the time.
    let said_no = count(&counts, "said_no");
    assert!(said_no as usize > KEYS * 9 / 10, "{counts:?}");
    assert!(
        count(&counts, "key_may_match") >= said_no + KEYS as u64,
        "{counts:?}"
    );
}

#[test]
fn goleveldb_reads_a_database_leveldb_wrote_with_the_legacy_policy() {
    let (present, absent) = key_files();
    let dir = scratch("written-by-leveldb").join("db");
    let (stdout, counts) = run_legacy_db(&[Path::new("write"), &dir, present]);
    assert_eq!(stdout, format!("wrote {KEYS} keys\n"));
    assert!(count(&counts, "create_filter") > 100, "{counts:?}");

    let read = common::run(
        Command::new(goleveldb_tool())
            .arg("read")
            .arg(&dir)
            .arg(present)
            .arg(absent),
    );
    println!("goleveldb on LevelDB 1.23's database: {read}");
    let said_absent: usize = read
        .trim_end()
        .strip_prefix(&format!(
            "found {KEYS} of {KEYS}, absent {KEYS} of {KEYS}, filter said absent "
        ))
        .and_then(|rest| rest.strip_suffix(" times"))
        .unwrap_or_else(|| panic!("{read}"))
        .parse()
        .expect("a count");
    assert!(said_absent > KEYS * 9 / 10, "{read}");
}

/// goleveldb's filter for `keys`, from the tool's `filter` subcommand.
fn goleveldb_filter(keys: &[Vec<u8>]) -> Vec<u8> {
    let file = scratch("filter-keys").join("keys");
    write_keys(&file, keys);
    let hex = common::run(Command::new(goleveldb_tool()).arg("filter").arg(&file));
    let hex = hex.trim_end();
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect()
}

/// The legacy filter through the C API, on a handle of the library's own.
fn c_api_filter(keys: &[Vec<u8>]) -> Vec<u8> {
    let pointers: Vec<_> = keys.iter().map(|k| k.as_ptr().cast()).collect();
    let lengths: Vec<usize> = keys.iter().map(Vec::len).collect();
    let mut length = 0;
    // SAFETY: the arrays hold keys.len() keys, alive for the call; the filter is
    // malloc'd and freed here once copied.
    unsafe {
        let policy = leveldb_bloom_legacy_policy_create(10);
        assert!(!policy.is_null());
        let filter = leveldb_filterpolicy_create_filter(
            policy,
            pointers.as_ptr(),
            lengths.as_ptr(),
            keys.len() as c_int,
            &mut length,
        );
        assert!(!filter.is_null());
        let bytes = std::slice::from_raw_parts(filter.cast::<u8>(), length).to_vec();
        libc::free(filter.cast());
        leveldb_bloom_policy_destroy(policy);
        bytes
    }
}

#[test]
fn legacy_filters_are_goleveldbs_without_high_tail_bytes() {
    let legacy = BloomFilterPolicy::legacy(10);
    let all: Vec<Vec<u8>> = (0..20_000).map(key).collect();
    let (plain, high): (Vec<_>, Vec<_>) = all.into_iter().partition(|k| !tail_is_ambiguous(k));
    let mut compared = 0;
    for n in [0, 1, 2, 3, 7, 100, 1000, 5000] {
        let keys = &plain[..n];
        let expected = goleveldb_filter(keys);
        assert_eq!(legacy.build_filter(keys), expected, "{n} keys");
        assert_eq!(c_api_filter(keys), expected, "{n} keys, C API");
        compared += 1;
    }
    // With high tail bytes: every bit goleveldb sets is set, and more (the signed
    // reading's bits), at the same length.
    for n in [1, 100, 5000] {
        let keys = &high[..n];
        let (go, ours) = (goleveldb_filter(keys), legacy.build_filter(keys));
        assert_eq!(go.len(), ours.len());
        assert!(go.iter().zip(&ours).all(|(g, o)| g & !o == 0), "{n} keys");
        assert_ne!(go, ours, "{n} keys");
        assert!(keys.iter().all(|key| legacy.key_may_match(key, &go)));
    }
    assert_eq!(compared, 8);
}
