//! Threads: one policy shared by 8 threads gives exactly the single-threaded results
//! (c_tests/threads.c), also under Valgrind's helgrind race detector; and a LevelDB
//! database using the library through the swap answers every read right under a
//! writer, concurrent readers and compactions (c_tests/db_check.cc).
//!
//! Helgrind rather than ThreadSanitizer: TSan sees only code compiled with it, and
//! the Rust library cannot be built with TSan on the stable toolchain, so TSan would
//! watch the C harness alone. Helgrind instruments the running machine code, the
//! library's included. Its blind spot, atomics, is handled by c_tests/helgrind.supp,
//! and a control run with a deliberate race proves it still reports plain races.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use common::{Lang, Program};

fn threads_program() -> Program {
    Program::new("threads", Lang::C99, &["c_tests/threads.c"])
        .arg("-pthread")
        .link_bloom()
}

fn threads_exe() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| threads_program().build())
}

fn helgrind(args: &[&str]) -> Command {
    let mut command = Command::new("valgrind");
    command
        .args(["--tool=helgrind", "--error-exitcode=99", "--quiet"])
        .arg(format!(
            "--suppressions={}",
            common::repo().join("c_tests/helgrind.supp").display()
        ))
        .arg(threads_exe())
        .args(args);
    command
}

#[test]
fn shared_policy_gives_single_threaded_results() {
    let out = common::run(&mut Command::new(threads_exe()));
    assert!(out.contains(", 0 differ"), "{out}");
    println!("{out}");
}

#[test]
fn threads_are_clean_under_address_and_undefined_behavior_sanitizers() {
    let exe = threads_program().sanitize().build();
    let out = common::run(&mut common::sanitized(&exe));
    assert!(out.contains(", 0 differ"), "{out}");
}

#[test]
fn helgrind_finds_no_race() {
    let out = common::run(&mut helgrind(&["3"]));
    assert!(out.contains(", 0 differ"), "{out}");
    println!("helgrind: {out}");
}

#[test]
fn helgrind_reports_a_deliberate_race() {
    let output = helgrind(&["1", "--race-control"])
        .output()
        .expect("valgrind runs");
    assert_eq!(
        output.status.code(),
        Some(99),
        "helgrind missed the control race:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn swapped_database_under_concurrent_readers_writer_and_compactions() {
    let exe = Program::new("db_check_threads", Lang::Cxx17, &["c_tests/db_check.cc"])
        .arg("-pthread")
        .link_bloom()
        .arg("-lleveldb")
        .arg("-ldl")
        .build();
    let dir = common::lib_dir().join("db_check_concurrent");
    let out = common::run(Command::new(exe).arg("concurrent").arg(&dir));
    assert!(
        out.contains(" 0 wrong") && out.contains("filters written"),
        "{out}"
    );
    println!("{out}");
}
