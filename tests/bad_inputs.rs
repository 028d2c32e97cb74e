//! Every bad input of the C API has its documented result (the README's table):
//! the sweep of c_tests/bad_inputs.cc against the real LevelDB, and the rows that
//! need a process without LevelDB, calling the exported functions directly.

mod common;

use std::ffi::{c_char, c_int};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use common::{Lang, Program};

// Links this crate's exported functions into the test (no LevelDB in the process).
extern crate leveldb_bloom;

#[allow(non_camel_case_types)]
enum leveldb_filterpolicy_t {}

extern "C" {
    fn leveldb_filterpolicy_create_bloom(bits_per_key: c_int) -> *mut leveldb_filterpolicy_t;
    fn leveldb_bloom_legacy_policy_create(bits_per_key: c_int) -> *mut leveldb_filterpolicy_t;
    fn leveldb_filterpolicy_destroy(policy: *mut leveldb_filterpolicy_t);
    fn leveldb_bloom_policy_destroy(policy: *mut leveldb_filterpolicy_t);
    fn leveldb_filterpolicy_name(policy: *const leveldb_filterpolicy_t) -> *const c_char;
    fn leveldb_bloom_swap_status() -> c_int;
}

fn sweep_program() -> Program {
    Program::new("bad_inputs", Lang::Cxx17, &["c_tests/bad_inputs.cc"])
        .arg(format!("-I{}", common::repo().join("c_tests").display()))
        .arg("-lleveldb")
        .arg("-ldl")
}

fn sweep() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| sweep_program().build())
}

fn run_sweep(command: &mut Command) {
    let out = common::run(command.env("LEVELDB_BLOOM_LIB", common::lib_path()));
    assert!(out.contains(" 0 failed"), "{out}");
    println!("{out}");
}

#[test]
fn sweep_against_leveldb() {
    run_sweep(&mut Command::new(sweep()));
}

#[test]
fn sweep_is_clean_under_valgrind() {
    run_sweep(&mut common::valgrind(sweep()));
}

#[test]
fn sweep_is_clean_under_address_and_undefined_behavior_sanitizers() {
    run_sweep(&mut common::sanitized(&sweep_program().sanitize().build()));
}

#[test]
fn without_leveldb_unknown_pointers_are_ignored() {
    let mut not_a_policy = [0u64; 4];
    let unknown = not_a_policy.as_mut_ptr().cast::<leveldb_filterpolicy_t>();
    // SAFETY: the documented contract: without LevelDB in the process, a pointer this
    // library did not return is ignored by both destroy functions and by name.
    unsafe {
        assert_eq!(leveldb_bloom_swap_status(), 0, "LevelDB is not loaded here");
        leveldb_filterpolicy_destroy(unknown);
        leveldb_bloom_policy_destroy(unknown);
        assert!(leveldb_filterpolicy_name(unknown).is_null());
        // And without LevelDB, create_bloom gives the library's own handle.
        let own = leveldb_filterpolicy_create_bloom(10);
        assert!(!own.is_null());
        assert!(!leveldb_filterpolicy_name(own).is_null());
        leveldb_filterpolicy_destroy(own);
        // So does the legacy policy, named as its format.
        let legacy = leveldb_bloom_legacy_policy_create(10);
        assert!(!legacy.is_null());
        let name = std::ffi::CStr::from_ptr(leveldb_filterpolicy_name(legacy));
        assert_eq!(name, c"leveldb.BuiltinBloomFilter");
        leveldb_bloom_policy_destroy(legacy);
        assert!(leveldb_bloom_legacy_policy_create(-1).is_null());
    }
    assert_eq!(not_a_policy, [0; 4], "an unknown pointer was written to");
}
