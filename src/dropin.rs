//! Swapping into LevelDB. Every policy this library returns is its own object with
//! LevelDB's `FilterPolicy` ABI (`filter_policy.cc`), whose virtual functions call
//! the functions of [`CALLS`] here. It needs nothing of LevelDB: no header, no
//! symbol, no library, so it works wherever LevelDB's call reaches this library
//! (LevelDB linked, `dlopen`ed privately, built into another object, or absent),
//! and this library never looks for or loads a LevelDB.

mod loaded;
mod string_abi;

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

use libc::size_t;

use super::args::{slice_bytes, slices, Slice};
use super::ops;
use super::registry::{PolicyState, REGISTRY};
use super::{c_text, guard, leveldb_filterpolicy_t};
use bloom::{BloomFilterPolicy, MATCH_ALL_FILTER};
use string_abi::{CallerNames, StringAbi};

/// What the C++ object calls, with the `*const PolicyState` it was made with as `state`.
/// Mirrors `leveldb_bloom_policy_calls` in `filter_policy.cc`.
#[repr(C)]
struct Calls {
    release: unsafe extern "C" fn(*mut c_void),
    name: unsafe extern "C" fn(*const c_void) -> *const c_char,
    filter_length: unsafe extern "C" fn(*const c_void, c_int) -> size_t,
    write_filter:
        unsafe extern "C" fn(*const c_void, *const Slice, c_int, *mut c_char, size_t) -> size_t,
    key_may_match: unsafe extern "C" fn(*const c_void, *const Slice, *const Slice) -> u8,
}

static CALLS: Calls = Calls {
    release,
    name,
    filter_length,
    write_filter,
    key_may_match,
};

extern "C" {
    /// A new object of the new (`__cxx11`) or the old `std::string` ABI, or NULL.
    fn leveldb_bloom_policy_new_cxx11(calls: &'static Calls, state: *mut c_void) -> *mut c_void;
    fn leveldb_bloom_policy_new_cxx98(calls: &'static Calls, state: *mut c_void) -> *mut c_void;
    /// C++ `delete` through the object's virtual destructor.
    fn leveldb_bloom_policy_delete(policy: *mut c_void);
}

/// A new policy object for `bloom`, registered so every function here accepts it,
/// whose `CreateFilter` appends to strings of the ABI `caller`'s LevelDB has (see
/// [`string_abi`]; `caller` is the address the exported function returns to, NULL
/// when unknown). NULL only when memory runs out. Should the registry have no room,
/// the object is still returned: LevelDB uses it through its vtable, and this
/// library's functions then treat it as not theirs.
pub(crate) fn new_policy(
    bloom: BloomFilterPolicy,
    caller: *const c_void,
) -> *mut leveldb_filterpolicy_t {
    let names = CallerNames::read(loaded::dynamic_names(caller));
    if names.opens_databases {
        REACHED_BY_LEVELDB.store(true, Ordering::Relaxed);
    }
    let Some(policy) = PolicyState::new(bloom) else {
        return ptr::null_mut();
    };
    let policy = Box::into_raw(policy);
    // SAFETY: CALLS lives for the whole process; the object keeps `policy` as its
    // state and hands it back to `release` once, from its destructor.
    let object = unsafe {
        match names.string_abi() {
            StringAbi::Cxx11 => leveldb_bloom_policy_new_cxx11(&CALLS, policy.cast()),
            StringAbi::Cxx98 => leveldb_bloom_policy_new_cxx98(&CALLS, policy.cast()),
        }
    };
    if object.is_null() {
        // SAFETY: no object was made, so the policy is still ours alone.
        drop(unsafe { Box::from_raw(policy) });
        return ptr::null_mut();
    }
    // SAFETY: the object, which alone could free the policy, is not returned yet.
    unsafe { (*policy).object.store(object as usize, Ordering::Release) };
    REGISTRY.register(object as usize, policy);
    object.cast()
}

/// Whether a policy was made for code that opens LevelDB databases (LevelDB itself,
/// or a program or binding using it), which shows a LevelDB in the process that the
/// global scope may not (one loaded privately, or built into another library).
static REACHED_BY_LEVELDB: AtomicBool = AtomicBool::new(false);

/// Whether LevelDB's C or C++ API is in the global scope (LevelDB linked, or loaded
/// `RTLD_GLOBAL`). Neither name is one of this library's.
fn leveldb_in_global_scope() -> bool {
    [c"leveldb_open"]
        .iter()
        .chain(&string_abi::DB_OPEN)
        .any(|name| !loaded::global_symbol(name).is_null())
}

/// Releases a policy: this library's own, or an object with LevelDB's `FilterPolicy`
/// ABI that a loaded library made (a policy LevelDB made itself), each by its own
/// virtual destructor, as LevelDB's `leveldb_filterpolicy_destroy` does. Anything
/// else (NULL, memory that is no such object) is left alone.
pub(crate) fn destroy(handle: *mut leveldb_filterpolicy_t) {
    if handle.is_null() {
        return;
    }
    // SAFETY: the caller promised a live policy, or at least memory readable for a
    // pointer: a registered handle is one of our objects, anything else is deleted
    // only when it looks like a C++ object of a loaded library.
    let object = REGISTRY.lookup(handle as usize).is_some()
        || unsafe { loaded::is_cxx_object(handle.cast_const().cast()) };
    if object {
        // SAFETY: as above: an object with a virtual destructor, released once.
        unsafe { leveldb_bloom_policy_delete(handle.cast()) };
    }
}

/// # Safety
/// `state` is the state an object was made with in [`new_policy`]: a live `PolicyState`.
unsafe fn policy<'a>(state: *const c_void) -> &'a PolicyState {
    // SAFETY: the caller's promise.
    unsafe { &*state.cast::<PolicyState>() }
}

/// The object's destructor: forgets the object, then frees its policy.
///
/// # Safety
/// Called once, from the destructor of the object made with `state`.
unsafe extern "C" fn release(state: *mut c_void) {
    guard(
        || (),
        || {
            // SAFETY: made by Box::into_raw in `new_policy`; the destructor runs once.
            let policy = unsafe { Box::from_raw(state.cast::<PolicyState>()) };
            REGISTRY.unregister(policy.object.load(Ordering::Acquire));
        },
    )
}

/// `Name()`: the static name of the policy's format. Without a panic boundary:
/// nothing in it can panic, and no fallback name would be safe (a wrong one would
/// make LevelDB misread the filters).
///
/// # Safety
/// Called by a live object with its state.
unsafe extern "C" fn name(state: *const c_void) -> *const c_char {
    // SAFETY: the caller's promise.
    c_text::policy_name(unsafe { policy(state) }.bloom.format()).as_ptr()
}

/// `CreateFilter`, first step: how many bytes to append for `num_keys` keys.
///
/// # Safety
/// Called by a live object with its state.
unsafe extern "C" fn filter_length(state: *const c_void, num_keys: c_int) -> size_t {
    guard(
        || MATCH_ALL_FILTER.len(),
        || {
            let num_keys = usize::try_from(num_keys).ok();
            // SAFETY: the caller's promise.
            let bloom = &unsafe { policy(state) }.bloom;
            num_keys
                .and_then(|num_keys| bloom.filter_len(num_keys))
                .unwrap_or(MATCH_ALL_FILTER.len())
        },
    )
}

/// `CreateFilter`, second step: the filter written into the `length` bytes the
/// object appended, or the match-all filter; the bytes written.
///
/// # Safety
/// Called by a live object with its state, LevelDB's `num_keys` keys, and `out`
/// writable for `length` bytes, the value of [`filter_length`] (at least 2), all zero
/// (`std::string::resize` appends NUL characters).
unsafe extern "C" fn write_filter(
    state: *const c_void,
    keys: *const Slice,
    num_keys: c_int,
    out: *mut c_char,
    length: size_t,
) -> size_t {
    // SAFETY: the caller's promise: `out` holds `length` ≥ 2 writable, zeroed bytes.
    let out = unsafe { std::slice::from_raw_parts_mut(out.cast::<u8>(), length) };
    let written = guard(
        || None,
        || {
            // SAFETY: the caller's promises about the state and the keys.
            let (bloom, keys) = unsafe { (&policy(state).bloom, slices(keys, num_keys)) };
            Some(ops::write_filter_into(Some(bloom), keys, &mut *out))
        },
    );
    written.unwrap_or_else(|| ops::write_match_all(out))
}

/// `KeyMayMatch`.
///
/// # Safety
/// Called by a live object with its state and two readable slices.
unsafe extern "C" fn key_may_match(
    state: *const c_void,
    key: *const Slice,
    filter: *const Slice,
) -> u8 {
    guard(
        || 1,
        || {
            // SAFETY: the caller's promises.
            let (policy, key, filter) =
                unsafe { (policy(state), slice_bytes(key), slice_bytes(filter)) };
            let (Some(key), Some(filter)) = (key, filter) else {
                return 1;
            };
            ops::key_may_match(policy, key, filter).into()
        },
    )
}

/// `leveldb_bloom_swap_status`: which of the two names resolve to this library in
/// the global scope, once LevelDB is in the process: in the global scope, or seen
/// by a policy made for it.
pub(crate) fn swap_status(c_api: c_int, cxx_api: c_int) -> c_int {
    if !REACHED_BY_LEVELDB.load(Ordering::Relaxed) && !leveldb_in_global_scope() {
        return 0;
    }
    let ours = |name: &CStr| loaded::in_this_library(loaded::global_symbol(name));
    let mut status = 0;
    if ours(c"leveldb_filterpolicy_create_bloom") {
        status |= c_api;
    }
    if ours(c"_ZN7leveldb20NewBloomFilterPolicyEi") {
        status |= cxx_api;
    }
    status
}
