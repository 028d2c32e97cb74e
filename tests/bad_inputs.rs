//! Every bad input of the C API has its documented result (the README's table): the
//! rows that need a process without LevelDB, calling the exported functions directly.
//! The sweep of c_tests/bad_inputs.cc against the real LevelDB is a row of
//! tests/harnesses.rs.

#[macro_use]
mod common;

use std::ffi::{c_char, c_int};

#[allow(non_camel_case_types)]
enum leveldb_filterpolicy_t {}

our_functions! {
    fn leveldb_filterpolicy_create_bloom(bits_per_key: c_int) -> *mut leveldb_filterpolicy_t;
    fn leveldb_bloom_legacy_policy_create(bits_per_key: c_int) -> *mut leveldb_filterpolicy_t;
    fn leveldb_filterpolicy_destroy(policy: *mut leveldb_filterpolicy_t);
    fn leveldb_bloom_policy_destroy(policy: *mut leveldb_filterpolicy_t);
    fn leveldb_filterpolicy_name(policy: *const leveldb_filterpolicy_t) -> *const c_char;
    fn leveldb_bloom_swap_status() -> c_int;
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
