//! Swapping into LevelDB. Every policy this library returns is its own object with
//! LevelDB's `FilterPolicy` ABI (`filter_policy.cc`), whose virtual functions call
//! the functions of its format's [`Calls`] ([`calls`]). It needs nothing of LevelDB: no
//! header, no symbol, no library, so it works wherever LevelDB's call reaches this
//! library (LevelDB linked, `dlopen`ed privately, built into another object, or
//! absent), and this library never loads a LevelDB. What it must know, the
//! `std::string` its `CreateFilter` appends to, is decided once, when the object is
//! made, from the LevelDB its creator's caller binds to ([`decide`]); a policy
//! made for the C++ header ([`new_cxx_policy`]) is told instead: the header hands
//! over its program's own append function. `CreateFilter` and `KeyMayMatch` then
//! look nothing up.

mod calls;
mod decide;
mod loaded;
mod string_abi;

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::Ordering;

use libc::size_t;

use super::leveldb_filterpolicy_t;
use super::registry::{PolicyState, REGISTRY};
use super::self_bound;
use bloom::BloomFilterPolicy;
use calls::Calls;
pub(crate) use decide::Creator;
use decide::Decision;
use string_abi::StringAbi;

/// Fills the `length` bytes at `out` with a filter and returns how many it wrote:
/// `length`, or 2 (the match-all filter, `00 FF`) when it could not build the filter;
/// 0, writing nothing, when `out` is NULL or `length` is below 2 (nothing fits).
/// `writer` is the value the library passed along with it. Never throws.
#[allow(non_camel_case_types)]
pub type leveldb_bloom_filter_writer_t =
    unsafe extern "C" fn(writer: *mut c_void, out: *mut c_char, length: size_t) -> size_t;

/// Appends to a C++ program's own `std::string`, for a policy object's `CreateFilter`:
/// appends `length` NUL bytes to the `std::string` at `string`, calls `write(writer,
/// first appended byte, length)`, then keeps only the bytes `write` says it wrote.
/// When the string cannot grow it throws, as `std::string::resize` does
/// (`std::bad_alloc`, `std::length_error`), as LevelDB's own `CreateFilter` would; the
/// library calls it from C++ code only, never from Rust. `leveldb_bloom.hpp` passes
/// one compiled in the program (`leveldb_bloom::detail::append_written`).
#[allow(non_camel_case_types)]
pub type leveldb_bloom_string_append_t = Option<
    unsafe extern "C" fn(
        string: *mut c_void,
        length: size_t,
        write: leveldb_bloom_filter_writer_t,
        writer: *mut c_void,
    ),
>;

extern "C" {
    /// A new object, or NULL. Its `CreateFilter` appends with `append`; without
    /// one it refuses (`refuse_unknown_string`) and ends the process.
    fn leveldb_bloom_policy_new(
        calls: &'static Calls,
        state: *mut c_void,
        append: leveldb_bloom_string_append_t,
    ) -> *mut c_void;
    /// C++ `delete` through the object's virtual destructor.
    fn leveldb_bloom_policy_delete(policy: *mut c_void);
    /// The append functions for each of libstdc++'s strings (string_append.cc).
    static leveldb_bloom_append_cxx11: leveldb_bloom_string_append_t;
    static leveldb_bloom_append_cxx98: leveldb_bloom_string_append_t;
}

/// A new policy for `bloom` from `creator`, called from `caller` (the address it
/// returns to, 0 when unknown): what stock would return there ([`decide`]): this
/// library's object wherever it can write the string LevelDB will hand it.
pub(crate) fn new_policy(
    bloom: BloomFilterPolicy,
    creator: Creator,
    caller: usize,
) -> *mut leveldb_filterpolicy_t {
    made(bloom, decide::decide(creator, caller))
}

/// A new policy for `bloom`, for the LevelDB whose code lies at `leveldb`.
pub(crate) fn new_policy_for(
    bloom: BloomFilterPolicy,
    leveldb: usize,
) -> *mut leveldb_filterpolicy_t {
    made(bloom, decide::decide_for(leveldb))
}

/// The policy `decision` says.
fn made(bloom: BloomFilterPolicy, decision: Decision) -> *mut leveldb_filterpolicy_t {
    match decision {
        Decision::Ours(abi) => new_object(bloom, abi.and_then(append_for)),
        Decision::Stock(new) => {
            // SAFETY: LevelDB's `const FilterPolicy* NewBloomFilterPolicy(int)` (or
            // its C API's `leveldb_filterpolicy_create_bloom(int)`), the definition
            // the caller's reference binds to, called as the caller would have.
            let new = unsafe {
                std::mem::transmute::<usize, extern "C" fn(c_int) -> *mut leveldb_filterpolicy_t>(
                    new,
                )
            };
            new(c_int::try_from(bloom.bits_per_key()).unwrap_or(c_int::MAX))
        }
        Decision::Refused => ptr::null_mut(),
    }
}

/// This library's append function for strings of `abi`.
fn append_for(abi: StringAbi) -> leveldb_bloom_string_append_t {
    // SAFETY: constants the C++ side initialised before any code runs.
    unsafe {
        match abi {
            StringAbi::Cxx11 => leveldb_bloom_append_cxx11,
            StringAbi::Cxx98 => leveldb_bloom_append_cxx98,
        }
    }
}

/// A new policy object for `bloom` made for a C++ program, whose `CreateFilter`
/// appends with `append`, the program's own code, and decides nothing from anyone's
/// code.
///
/// No LevelDB of the process is surveyed: `append` is the proof for every call the
/// object can get. It reaches only the LevelDB the program hands it to (through
/// `Options`), which the program's C++ calls with its own `std::string` (the names
/// of LevelDB's C++ API carry the ABI, so a program links only with a LevelDB of its
/// own ABI): exactly where stock's own policy of that LevelDB would be.
///
/// NULL when `append` is NULL (an object that detects is not what was asked for).
///
/// # Safety
/// `append` behaves as [`leveldb_bloom_string_append_t`] says, for every
/// `std::string` the object's `CreateFilter` is given.
pub(crate) unsafe fn new_cxx_policy(
    bloom: BloomFilterPolicy,
    append: leveldb_bloom_string_append_t,
) -> *mut leveldb_filterpolicy_t {
    match append {
        Some(_) => new_object(bloom, append),
        None => ptr::null_mut(),
    }
}

/// A new policy object for `bloom`, registered so every function here accepts it;
/// `append` as in `leveldb_bloom_policy_new`. NULL when memory runs out. Should the
/// registry have no room, the object is still returned: LevelDB uses it through its
/// vtable, and this library's functions then treat it as not theirs.
fn new_object(
    bloom: BloomFilterPolicy,
    append: leveldb_bloom_string_append_t,
) -> *mut leveldb_filterpolicy_t {
    let Some(policy) = PolicyState::new(bloom) else {
        return ptr::null_mut();
    };
    let policy = Box::into_raw(policy);
    let calls = Calls::of(bloom.format());
    // SAFETY: the calls live for the whole process; the object keeps `policy` as its
    // state and hands it back to `release` once, from its destructor. `append`, when
    // given, was vouched for by the caller of `new_cxx_policy`.
    let object = unsafe { leveldb_bloom_policy_new(calls, policy.cast(), append) };
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

/// `leveldb_bloom_swap_status`: which of the two names resolve to this library in
/// the global scope, once LevelDB is in the process: in the global scope, or in a
/// loaded object that defines its API (loaded privately, or built into another
/// library). A loaded LevelDB that calls its own policy inside itself
/// ([`self_bound`]) makes it 0: not every LevelDB in the process is swapped.
pub(crate) fn swap_status(c_api: c_int, cxx_api: c_int) -> c_int {
    if !self_bound::leveldb_loaded() || !self_bound::self_bound().is_empty() {
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
