//! plyvel's own test suite (`test/test_plyvel.py` from the sdist of the version Debian
//! packages, put under `target/reach/plyvel-suite` by `make deps`), run with pytest
//! against Debian's python3-plyvel, stock and with this library preloaded: the swapped
//! run passes and fails exactly the tests the stock run does, and the dynamic linker
//! bound plyvel's `leveldb::NewBloomFilterPolicy` (its `bloom_filter_bits` tests) to
//! this library.

use crate::common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use common::{lib_path, Scratch};

/// The suite's directory (its `test/` package), installed by `make deps`.
fn suite() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| common::repo().join("target"), PathBuf::from);
    let suite = target.join("reach/plyvel-suite");
    assert!(
        suite.join("test/test_plyvel.py").is_file(),
        "{} has no test/test_plyvel.py: run `make deps`",
        suite.display()
    );
    suite
}

/// The suite's outcome: the tests that failed, and the summary's count of passes.
/// Run from a copy of `test/` alone, so that Debian's installed plyvel is imported.
fn run_suite(swapped: bool) -> (BTreeSet<String>, String, String) {
    let scratch = Scratch::new();
    let dir = scratch.dir().join("suite");
    std::fs::create_dir_all(dir.join("test")).unwrap();
    for entry in std::fs::read_dir(suite().join("test")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join("test").join(entry.file_name())).unwrap();
    }
    let mut command = Command::new("/usr/bin/python3");
    command
        .args([
            "-m",
            "pytest",
            "-q",
            "-rf",
            "-p",
            "no:cacheprovider",
            "test",
        ])
        .current_dir(&dir)
        .env("TMPDIR", scratch.dir());
    if swapped {
        command
            .env("LD_PRELOAD", lib_path())
            .env("LD_DEBUG", "bindings")
            .env("LD_DEBUG_OUTPUT", scratch.dir().join("bindings"));
    }
    let output = command.output().expect("pytest runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let failed = stdout
        .lines()
        .filter_map(|line| line.strip_prefix("FAILED "))
        .map(|line| line.split(' ').next().unwrap_or(line).to_string())
        .collect();
    // "1 failed, 52 passed in 8.40s": the word before " passed".
    let summary = stdout.lines().rev().find(|line| line.contains(" passed"));
    let passed = summary
        .and_then(|line| line.split(" passed").next()?.rsplit(' ').next())
        .unwrap_or_else(|| panic!("no pytest summary:\n{stdout}"))
        .to_string();
    let bindings = std::fs::read_dir(scratch.dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().contains("bindings"))
        .map(|path| std::fs::read_to_string(path).unwrap_or_default())
        .collect();
    (failed, passed, bindings)
}

#[test]
fn plyvels_own_suite_passes_as_stock_does() {
    let (stock_failed, stock_passed, _) = run_suite(false);
    let (failed, passed, bindings) = run_suite(true);
    assert_eq!(
        failed, stock_failed,
        "the swapped run fails other tests than stock"
    );
    assert_eq!(passed, stock_passed);
    assert!(passed.parse::<u32>().unwrap() >= 50, "{passed} passed");
    // As root, a read-only directory does not stop LevelDB: plyvel's one test of it
    // fails stock too. Nothing else may.
    let root_only: BTreeSet<String> =
        ["test/test_plyvel.py::test_open_read_only_dir".to_string()].into();
    assert!(stock_failed.is_subset(&root_only), "{stock_failed:?}");
    assert!(
        bindings
            .lines()
            .any(|line| line.contains("libleveldb_bloom.so")
                && line.ends_with("`_ZN7leveldb20NewBloomFilterPolicyEi'")),
        "plyvel's NewBloomFilterPolicy was not bound to this library"
    );
}
