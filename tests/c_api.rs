//! The C API harness, `c_tests/api_test.c`: every exported function and every bad
//! input with its documented result, through the real `libleveldb_bloom.so` from a
//! plain C99 program that does not load LevelDB. It runs as built, under valgrind,
//! and built with AddressSanitizer and UndefinedBehaviorSanitizer.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{Lang, Program};

fn api_test() -> Program {
    Program::new("api_test", Lang::C99, &["c_tests/api_test.c"]).link_bloom()
}

/// The plain build, shared by the native and the valgrind run.
fn plain() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| api_test().build())
}

fn assert_passed(stdout: &str) {
    assert!(
        stdout.contains("api_test: all checks passed"),
        "unexpected output: {stdout}"
    );
}

#[test]
fn every_function_and_bad_input() {
    assert_passed(&common::run(&mut Command::new(plain())));
}

#[test]
fn clean_under_valgrind() {
    assert_passed(&common::run(&mut common::valgrind(plain())));
}

#[test]
fn clean_under_address_and_undefined_behavior_sanitizers() {
    let exe = api_test().sanitize().build();
    assert_passed(&common::run(&mut common::sanitized(&exe)));
}
