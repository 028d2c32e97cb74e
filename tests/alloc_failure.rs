//! Allocation failure, made on demand by an LD_PRELOAD shim (c_tests/failmalloc.c)
//! that fails only allocations requested by libleveldb_bloom: `create_filter` gives
//! the real filter, the match-all filter 00 FF or NULL with length 0, never a filter
//! with false negatives, and nothing crashes or leaks (c_tests/alloc_failure.c); and a
//! LevelDB database using the library through the swap still finds every key when
//! its filters cannot be allocated (c_tests/db_check.cc).

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use common::{Lang, Program};

fn db_check() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        Program::new("db_check_alloc", Lang::Cxx17, &["c_tests/db_check.cc"])
            .arg("-pthread")
            .link_bloom()
            .arg("-lleveldb")
            .arg("-ldl")
            .build()
    })
}

/// `db_check MODE` with the shim preloaded; its report when every read was right.
fn database_under_failure(mode: &str) -> String {
    let dir = common::lib_dir().join(format!("db_check_{mode}"));
    let out = common::run(
        Command::new(db_check())
            .env("LD_PRELOAD", common::failmalloc_shim())
            .arg(mode)
            .arg(&dir),
    );
    assert!(
        out.contains(" 0 wrong") && out.contains("allocations made to fail"),
        "{out}"
    );
    out
}

#[test]
fn c_api_under_allocation_failure() {
    let exe = Program::new("alloc_failure", Lang::C99, &["c_tests/alloc_failure.c"])
        .link_bloom()
        .arg("-ldl")
        .build();
    let out = common::run(Command::new(exe).env("LD_PRELOAD", common::failmalloc_shim()));
    assert!(out.contains(", 0 failed"), "{out}");
    println!("{out}");
}

#[test]
fn database_finds_every_key_when_filters_cannot_be_allocated() {
    println!("{}", database_under_failure("failing-filters"));
}

/// When even the 2-byte match-all filter cannot be allocated, the LevelDB callback has
/// nothing `malloc`'d to give; returning NULL would make LevelDB store an empty
/// filter, which answers "absent" for every key. Allocations failing in bursts of two
/// make that happen again and again, with successes in between.
#[test]
fn database_finds_every_key_when_not_even_the_match_all_filter_can_be_allocated() {
    println!("{}", database_under_failure("failing-bursts"));
}
