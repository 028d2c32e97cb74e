//! The functions a policy object's virtual functions call (`policy_calls.h`): one
//! table per format, chosen when the object is made, each function on the checked
//! arguments LevelDB's code hands the object, with its own panic boundary.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::Ordering;

use libc::size_t;

use crate::args::{leveldb_slice, slices, Slice};
use crate::ops;
use crate::registry::{PolicyState, REGISTRY};
use crate::{c_text, guard};
use bloom::{Format, MATCH_ALL_FILTER};
use loader::say;

/// What the C++ object calls, with the `*const PolicyState` it was made with as `state`
/// (`key_may_match` gets the object itself instead: see [`key_may_match`]).
/// Mirrors `leveldb_bloom_policy_calls` in `policy_calls.h`.
#[repr(C)]
pub(super) struct Calls {
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
    pub(super) fn of(format: Format) -> &'static Self {
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

/// `CreateFilter` of an object that knows no string to append to: it must not
/// write one of unknown layout, and says so before the process ends.
extern "C" fn refuse_unknown_string() {
    say(
        "leveldb-bloom: CreateFilter called on a policy made where no LevelDB showed its \
         std::string (leveldb_bloom_policy_create with no LevelDB loaded, or given to a \
         LevelDB of libc++): aborting rather than write a string of unknown layout\n",
    );
}

/// # Safety
/// `state` is the state an object was made with in `new_object`: a live `PolicyState`.
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
/// The keys are trusted as LevelDB's own policy trusts them (as `key_may_match`
/// trusts its slices).
///
/// # Safety
/// Called by a live object with its state and LevelDB's `num_keys` keys (readable
/// slices, as `CreateFilter`'s caller promises LevelDB's own policy); `out` NULL or
/// writable for `length` bytes, all zero (`std::string::resize` appends NUL
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
            ops::format_of::<LEGACY_FORMAT>().key_may_match(key, filter)
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
            ops::key_may_match_counted(ops::format_of::<LEGACY_FORMAT>(), key, filter)
        },
    )
}
