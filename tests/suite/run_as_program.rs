//! `libleveldb_bloom.so` run as a program, as glibc's `libc.so.6` can be: it says its
//! version, SIMD level and usage and exits 0; with stdout closed or a closed pipe it
//! exits 1, never by a signal. The static library carries no interpreter (a static
//! program linked with it stays static: tests/suite/reach.rs).

use crate::common;

use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

/// Runs the library with `stdout`; its exit status and stdout.
fn run_library(stdout: Stdio) -> (std::process::ExitStatus, String) {
    let output = common::command(common::lib_path())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .output()
        .expect("the library runs as a program");
    (
        output.status,
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn the_library_run_as_a_program_says_what_it_is_and_exits_0() {
    let (status, shown) = run_library(Stdio::piped());
    assert_eq!(status.code(), Some(0), "{status:?}: {shown}");
    let version = env!("CARGO_PKG_VERSION");
    let lines: Vec<&str> = shown.lines().collect();
    assert_eq!(lines.len(), 3, "{shown}");
    assert!(
        lines[0].starts_with(&format!("libleveldb_bloom {version}: ")),
        "{shown}"
    );
    let level = ["scalar", "avx2", "avx512"]
        .iter()
        .any(|level| lines[1].starts_with(&format!("SIMD level: {level} ")));
    assert!(level, "{shown}");
    assert!(
        lines[2].starts_with("usage: LD_PRELOAD=libleveldb_bloom.so.0 "),
        "{shown}"
    );
}

#[test]
fn with_nowhere_to_write_it_exits_1_never_by_a_signal() {
    // stdout closed: the write fails (EBADF).
    let closed = common::command("sh")
        .arg("-c")
        .arg("exec \"$0\" >&-")
        .arg(common::lib_path())
        .status()
        .unwrap();
    assert_eq!(
        (closed.code(), closed.signal()),
        (Some(1), None),
        "{closed:?}"
    );
    // A pipe whose reader is gone: EPIPE, no SIGPIPE.
    let mut child = common::command(common::lib_path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), None, "{status:?}");
    assert!(matches!(status.code(), Some(0 | 1)), "{status:?}");
}

#[test]
fn only_the_shared_library_has_an_interpreter() {
    let headers =
        |file: &std::path::Path| common::run(Command::new("readelf").arg("-lW").arg(file));
    let shared = headers(&common::lib_path());
    assert!(
        shared.contains("Requesting program interpreter: /"),
        "{shared}"
    );
    let sections = common::run(
        Command::new("readelf")
            .arg("-SW")
            .arg(common::lib_dir().join("libleveldb_bloom.a")),
    );
    assert!(
        !sections.contains(".interp"),
        "libleveldb_bloom.a holds an .interp section"
    );
}
