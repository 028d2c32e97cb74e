//! Every bad input of the C API has its documented result (the README's table): the
//! rows that need a process without LevelDB, calling the exported functions directly.
//! The sweep of c_tests/bad_inputs.cc against the real LevelDB is a row of
//! tests/suite/harnesses.rs.

use std::ffi::{c_char, c_int};
use std::sync::Mutex;

#[allow(non_camel_case_types)]
enum leveldb_filterpolicy_t {}

our_functions! {
    fn leveldb_filterpolicy_create_bloom(bits_per_key: c_int) -> *mut leveldb_filterpolicy_t;
    fn leveldb_bloom_legacy_policy_create(bits_per_key: c_int) -> *mut leveldb_filterpolicy_t;
    fn leveldb_filterpolicy_destroy(policy: *mut leveldb_filterpolicy_t);
    fn leveldb_bloom_policy_destroy(policy: *mut leveldb_filterpolicy_t);
    fn leveldb_filterpolicy_name(policy: *const leveldb_filterpolicy_t) -> *const c_char;
    fn leveldb_bloom_swap_status() -> c_int;
    fn leveldb_filterpolicy_create_filter(
        policy: *mut leveldb_filterpolicy_t,
        key_array: *const *const c_char,
        key_length_array: *const usize,
        num_keys: c_int,
        filter_length: *mut usize,
    ) -> *mut c_char;
    fn leveldb_filterpolicy_key_may_match(
        policy: *const leveldb_filterpolicy_t,
        key: *const c_char,
        length: usize,
        filter: *const c_char,
        filter_length: usize,
    ) -> u8;
}

/// Held by each test that creates or destroys policies: a test that destroys a handle
/// and then queries through it must not see another test's new policy made at the
/// same address meanwhile.
static POLICIES: Mutex<()> = Mutex::new(());

#[test]
fn without_leveldb_unknown_pointers_are_ignored() {
    let _policies = POLICIES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
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

/// A destroyed handle is no longer one of this library's, and its queries answer 1:
/// the policy made last (whose format a query reads without a lookup while it lives)
/// while another is live, and that other one once it is destroyed too.
#[test]
fn destroyed_policies_answer_may_match() {
    let _policies = POLICIES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let keys: Vec<Vec<u8>> = (0..100u32)
        .map(|i| format!("key{i}").into_bytes())
        .collect();
    let pointers: Vec<*const c_char> = keys.iter().map(|key| key.as_ptr().cast()).collect();
    let lengths: Vec<usize> = keys.iter().map(Vec::len).collect();
    // SAFETY: the arrays hold 100 keys of their lengths; each filter is freed once,
    // each policy destroyed once, and the destroyed ones are only passed as values.
    unsafe {
        let first = leveldb_filterpolicy_create_bloom(10);
        let last = leveldb_filterpolicy_create_bloom(10);
        let mut length = 0;
        let filter = leveldb_filterpolicy_create_filter(
            last,
            pointers.as_ptr(),
            lengths.as_ptr(),
            100,
            &mut length,
        );
        assert!(!filter.is_null());
        let answer = |policy: *mut leveldb_filterpolicy_t, key: &[u8]| {
            leveldb_filterpolicy_key_may_match(
                policy,
                key.as_ptr().cast(),
                key.len(),
                filter,
                length,
            )
        };
        // A key the filter rejects: its answer is the only one that needs the policy.
        let absent = (0..)
            .map(|i: u32| format!("absent{i}").into_bytes())
            .find(|key| answer(last, key) == 0)
            .expect("a bloom filter of 100 keys rejects most keys");
        assert_eq!(
            answer(first, &absent),
            0,
            "a live policy made before the last"
        );
        assert_eq!(answer(last, b"key7"), 1);

        leveldb_filterpolicy_destroy(last);
        assert_eq!(answer(last, &absent), 1, "the last policy, destroyed");
        assert_eq!(answer(first, &absent), 0, "the policy still live");
        leveldb_filterpolicy_destroy(first);
        assert_eq!(answer(first, &absent), 1, "both destroyed");
        libc::free(filter.cast());
    }
}
