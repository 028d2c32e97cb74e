//! The swapped drop-in programs under valgrind: no memory error, no definite or
//! indirect leak, preloaded, relinked and through the explicit header.

use std::path::Path;

use super::{assert_reported, CXX_EXPLICIT_SWAPPED, CXX_RELINKED, C_STOCK, VALGRIND_KEYS};
use crate::common::harness::Mode;
use crate::common::{self, lib_path, Scratch};

/// A program under valgrind: no memory error, no definite or indirect leak.
fn valgrind(exe: &Path, preload: bool, args: &[&str]) -> String {
    let mut command = common::harness::command_in(Mode::ValgrindLevelDb, exe);
    command.args(args);
    if preload {
        command.env("LD_PRELOAD", lib_path());
    }
    common::run(&mut command)
}

fn valgrind_write_and_read(exe: &Path, preload: bool) {
    let dir = Scratch::new();
    let keys = VALGRIND_KEYS.to_string();
    for mode in ["write", "read"] {
        let stdout = valgrind(exe, preload, &[mode, dir.path(), &keys]);
        assert!(stdout.contains("swap status: 3"), "{stdout}");
        assert_reported(&stdout);
    }
}

#[test]
fn valgrind_c_program_swapped_by_preload() {
    valgrind_write_and_read(&C_STOCK.build(false), true);
}

#[test]
fn valgrind_cxx_program_relinked() {
    valgrind_write_and_read(&CXX_RELINKED.build(false), false);
}

#[test]
fn valgrind_explicit_cxx_header() {
    valgrind_write_and_read(&CXX_EXPLICIT_SWAPPED.build(false), false);
}
