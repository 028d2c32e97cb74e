//! The reference harness, `c_tests/reference_test.cc`: our library against the
//! real LevelDB 1.23 over fixed edge cases and generated cases with fixed seeds,
//! filters byte for byte and answers bit for bit. It runs as built, under valgrind
//! (fewer generated cases: every fixed case, but valgrind is slow), and built with
//! AddressSanitizer and UndefinedBehaviorSanitizer.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{Lang, Program};

/// The harness links LevelDB only; ours is loaded with dlopen from this path.
fn reference_test() -> Program {
    Program::new(
        "reference_test",
        Lang::Cxx17,
        &["c_tests/reference_test.cc"],
    )
    .arg("-lleveldb")
}

/// The plain build, shared by the native and the valgrind run.
fn plain() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| reference_test().build())
}

/// Every fixed case compares at least this many filters and queries.
const FIXED_FILTERS: u64 = 350;
const FIXED_QUERIES: u64 = 75_000;

/// Runs the harness (with `extra` arguments) on `random_cases` generated cases and
/// checks its report: no mismatch, and every case compared.
fn compare(mut command: Command, random_cases: u64, extra: &[&str]) {
    command
        .arg(common::lib_path())
        .arg(random_cases.to_string())
        .args(extra);
    let stdout = common::run(&mut command);
    let report = stdout
        .lines()
        .find(|line| line.starts_with("reference: "))
        .unwrap_or_else(|| panic!("no report in: {stdout}"));
    println!("{report}");
    let numbers: Vec<u64> = report
        .split(|c: char| !c.is_ascii_digit())
        .filter(|word| !word.is_empty())
        .map(|word| word.parse().expect("digits"))
        .collect();
    let [filters, _bytes, queries, _foreign, mismatches] = numbers[..] else {
        panic!("unexpected report: {report}");
    };
    assert_eq!(mismatches, 0, "{report}");
    // Each generated case is one filter and at least 20 queries on it, plus 10
    // foreign filters of 8 queries each.
    assert!(
        filters >= FIXED_FILTERS + random_cases,
        "too few filters compared: {report}"
    );
    assert!(
        queries >= FIXED_QUERIES + 100 * random_cases,
        "too few queries compared: {report}"
    );
}

#[test]
fn agrees_with_leveldb() {
    compare(Command::new(plain()), 3000, &[]);
}

#[test]
fn clean_under_valgrind() {
    compare(common::valgrind(plain()), 50, &["--quick"]);
}

#[test]
fn clean_under_address_and_undefined_behavior_sanitizers() {
    let exe = reference_test().sanitize().build();
    compare(common::sanitized(&exe), 1000, &[]);
}

/// The harness cannot call ours by name by mistake: it references none of the C
/// API's names, so every call to ours goes through dlsym.
#[test]
fn references_none_of_our_names() {
    let output = common::run(
        Command::new("nm")
            .args(["-D", "--undefined-only"])
            .arg(plain()),
    );
    let ours: Vec<&str> = output
        .lines()
        .filter_map(|line| line.split_whitespace().last())
        .filter(|symbol| symbol.starts_with("leveldb_"))
        .collect();
    assert!(ours.is_empty(), "the harness references {ours:?} directly");
}
