//! LevelDB's own bloom filter properties (util/bloom_test.cc) on our filters,
//! `c_tests/bloom_properties.c`: EmptyFilter, Small and VaryingLengths (size bound,
//! no false negatives, false-positive rate ≤ 2%, few mediocre filters). It runs as
//! built, under valgrind, and built with AddressSanitizer and
//! UndefinedBehaviorSanitizer.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{Lang, Program};

fn bloom_properties() -> Program {
    Program::new(
        "bloom_properties",
        Lang::C99,
        &["c_tests/bloom_properties.c"],
    )
    .link_bloom()
}

/// The plain build, shared by the native and the valgrind run.
fn plain() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| bloom_properties().build())
}

fn assert_passed(stdout: &str) {
    assert!(
        stdout.contains("bloom_properties: all checks passed"),
        "unexpected output: {stdout}"
    );
}

#[test]
fn leveldb_bloom_test_properties_hold() {
    let stdout = common::run(&mut Command::new(plain()));
    print!("{stdout}");
    assert_passed(&stdout);
}

#[test]
fn clean_under_valgrind() {
    assert_passed(&common::run(&mut common::valgrind(plain())));
}

#[test]
fn clean_under_address_and_undefined_behavior_sanitizers() {
    let exe = bloom_properties().sanitize().build();
    assert_passed(&common::run(&mut common::sanitized(&exe)));
}
