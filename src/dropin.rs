//! Swapping into LevelDB. Every policy this library returns is its own object with
//! LevelDB's `FilterPolicy` ABI (`filter_policy.cc`), whose virtual functions call
//! the functions of its format's [`Calls`] here. It needs nothing of LevelDB: no
//! header, no symbol, no library, so it works wherever LevelDB's call reaches this
//! library (LevelDB linked, `dlopen`ed privately, built into another object, or
//! absent), and this library never loads a LevelDB. What it must know, the
//! `std::string` its `CreateFilter` appends to, is decided once, when the object is
//! made, from the LevelDB its creator's caller binds to ([`decide`]); a policy
//! made for the C++ header ([`new_cxx_policy`]) is told instead: the header hands
//! over its program's own append function. `CreateFilter` and `KeyMayMatch` then
//! look nothing up.

mod decide;
mod loaded;
mod string_abi;

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::Ordering;

use libc::size_t;

use super::args::{leveldb_slice, slices, Slice};
use super::ops;
use super::registry::{PolicyState, REGISTRY};
use super::self_bound;
use super::{c_text, guard, leveldb_filterpolicy_t};
use bloom::{BloomFilterPolicy, Format, MATCH_ALL_FILTER};
pub(crate) use decide::Creator;
use decide::Decision;
use loader::say;
use string_abi::StringAbi;

/// What the C++ object calls, with the `*const PolicyState` it was made with as `state`
/// (`key_may_match` gets the object itself instead: see [`key_may_match`]).
/// Mirrors `leveldb_bloom_policy_calls` in `policy_calls.h`.
#[repr(C)]
struct Calls {
    release: unsafe extern "C" fn(*mut c_void),
    name: unsafe extern "C" fn(*const c_void) -> *const c_char,
    refuse_unknown_string: extern "C" fn(),
    filter_length: unsafe extern "C" fn(*const c_void, c_int) -> size_t,
    write_filter:
        unsafe extern "C" fn(*const c_void, *const Slice, c_int, *mut c_char, size_t) -> size_t,
    key_may_match: unsafe extern "C" fn(*const c_void, *const Slice, *const Slice) -> bool,
}

impl Calls {
    /// The calls of an object whose policy has `format`: one table per format, so
    /// that a query, answered under the format its table was chosen for, looks
    /// nothing up.
    fn of(format: Format) -> &'static Self {
        match format {
            Format::Current => &CURRENT_FORMAT_CALLS,
            Format::Legacy => &LEGACY_FORMAT_CALLS,
        }
    }

    /// The calls every format shares, with `key_may_match`.
    const fn with(
        key_may_match: unsafe extern "C" fn(*const c_void, *const Slice, *const Slice) -> bool,
    ) -> Self {
        Self {
            release,
            name,
            refuse_unknown_string,
            filter_length,
            write_filter,
            key_may_match,
        }
    }
}

static CURRENT_FORMAT_CALLS: Calls = Calls::with(key_may_match::<false>);
static LEGACY_FORMAT_CALLS: Calls = Calls::with(key_may_match::<true>);

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

/// `CreateFilter` of an object that knows no string to append to: it must not
/// write one of unknown layout, and says so before the process ends.
extern "C" fn refuse_unknown_string() {
    say(
        "leveldb-bloom: CreateFilter called on a policy made where no LevelDB showed its \
         std::string (leveldb_bloom_policy_create with no LevelDB loaded, or given to a \
         LevelDB of libc++): aborting rather than write a string of unknown layout\n",
    );
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
/// `state` is the state an object was made with in [`new_object`]: a live `PolicyState`.
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
            // SAFETY: made by Box::into_raw in `new_object`; the destructor runs once.
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
/// append function appended, or the match-all filter; the bytes written. An append
/// function of the program's (`leveldb_bloom.hpp`, or any a C++ program passes to
/// `leveldb_bloom_cxx_policy_create`) may get it wrong: given NULL, or fewer bytes
/// than the match-all filter's 2, nothing fits, and 0 is written.
///
/// # Safety
/// Called by a live object with its state and LevelDB's `num_keys` keys; `out` NULL
/// or writable for `length` bytes, all zero (`std::string::resize` appends NUL
/// characters).
unsafe extern "C" fn write_filter(
    state: *const c_void,
    keys: *const Slice,
    num_keys: c_int,
    out: *mut c_char,
    length: size_t,
) -> size_t {
    if out.is_null() || length < MATCH_ALL_FILTER.len() {
        return 0;
    }
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

/// `KeyMayMatch` of an object whose policy has the legacy format if `LEGACY_FORMAT`,
/// else the current one, on the slices LevelDB's code hands it: trusted as LevelDB's
/// own policy trusts them (the C API's checks are for C callers). One function per
/// format, each with its panic boundary compiled in (a closure of its own), so that
/// the format is known without looking it up. `_object` is the object itself, of
/// which the answer needs nothing: passed on, it leaves the slices in the registers
/// the virtual call put them in, and the object's call is one jump. With statistics
/// on, the arguments go on as they came to [`key_may_match_counted`]: one more jump.
///
/// # Safety
/// Called by a live object with two slices, each readable for its size.
unsafe extern "C" fn key_may_match<const LEGACY_FORMAT: bool>(
    object: *const c_void,
    key: *const Slice,
    filter: *const Slice,
) -> bool {
    if ops::counting() {
        // SAFETY: the caller's promises, passed on.
        return unsafe { key_may_match_counted::<LEGACY_FORMAT>(object, key, filter) };
    }
    guard(
        || true,
        || {
            // The filter's slice read first: its register is then free for the key's
            // length, which the hash wants there, with no copy.
            // SAFETY: the caller's promises.
            let (filter, key) = unsafe { (leveldb_slice(filter), leveldb_slice(key)) };
            format_of::<LEGACY_FORMAT>().key_may_match(key, filter)
        },
    )
}

/// [`key_may_match`] with statistics on, out of its path.
///
/// # Safety
/// As for [`key_may_match`].
#[cold]
#[inline(never)]
unsafe extern "C" fn key_may_match_counted<const LEGACY_FORMAT: bool>(
    _object: *const c_void,
    key: *const Slice,
    filter: *const Slice,
) -> bool {
    guard(
        || true,
        || {
            // SAFETY: the caller's promises.
            let (filter, key) = unsafe { (leveldb_slice(filter), leveldb_slice(key)) };
            ops::key_may_match_counted(format_of::<LEGACY_FORMAT>(), key, filter)
        },
    )
}

/// The legacy format if `LEGACY_FORMAT`, else the current one.
const fn format_of<const LEGACY_FORMAT: bool>() -> Format {
    if LEGACY_FORMAT {
        Format::Legacy
    } else {
        Format::Current
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
