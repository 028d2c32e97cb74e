//! The entry points of the open functions `LEVELDB_BLOOM_DEFAULT_BITS` interposes
//! (`src/default_bits/open.cc`, which alone calls them: they are in no header).
//! Each is a panic boundary around preparing the call and around finishing it; the
//! real open function runs between the two, outside both, so that an exception
//! LevelDB throws (`std::bad_alloc`) reaches its caller as without this library.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;

use super::super::default_bits::{Open, OpenFunction};
use super::super::guard;

/// `leveldb_open(options, name, errptr)` of the C API.
type COpen =
    unsafe extern "C-unwind" fn(*const c_void, *const c_char, *mut *mut c_char) -> *mut c_void;
/// `Status leveldb::DB::Open(const Options&, const std::string&, DB**)` on x86-64: the
/// Status is returned in memory whose address comes first, and is returned.
type CxxOpen = unsafe extern "C-unwind" fn(
    *mut c_void,
    *const c_void,
    *const c_void,
    *mut *mut c_void,
) -> *mut c_void;

/// Prepares the call of `function` (`None`: no definition found, or a panic).
///
/// # Safety
/// As for [`Open::prepare`].
unsafe fn prepare(
    function: OpenFunction,
    options: *const c_void,
    caller: *const c_void,
) -> Option<Open> {
    // SAFETY: the caller's promise, passed on.
    guard(
        || None,
        || unsafe { Open::prepare(function, options, caller) },
    )
}

fn finish(open: Open) {
    guard(|| (), || open.finish())
}

/// `leveldb_open` for `open.cc`: the real one's result, `*forwarded` set to 1; when
/// no LevelDB definition is found, NULL and 0 (`open.cc` then sets the error).
///
/// # Safety
/// The arguments of a call of `leveldb_open`, `caller` the address it returns to,
/// and `forwarded` writable.
#[no_mangle]
unsafe extern "C-unwind" fn leveldb_bloom_default_bits_open_c(
    options: *const c_void,
    name: *const c_char,
    errptr: *mut *mut c_char,
    caller: *const c_void,
    forwarded: *mut c_int,
) -> *mut c_void {
    // SAFETY: the caller's promise: options of the LevelDB it calls.
    let Some(open) = (unsafe { prepare(OpenFunction::C, options, caller) }) else {
        return ptr::null_mut();
    };
    // SAFETY: the definition of leveldb_open the caller would have reached.
    let real = unsafe { std::mem::transmute::<*const c_void, COpen>(open.real) };
    // SAFETY: the caller's arguments, unchanged.
    let db = unsafe { real(options, name, errptr) };
    finish(open);
    // SAFETY: the caller's promise.
    unsafe { *forwarded = 1 };
    db
}

/// `leveldb::DB::Open` for `open.cc`, of the new (`abi` 0) or old (1) `std::string`
/// ABI: 1 once the real one filled `status` in; 0 when no LevelDB definition is
/// found (`open.cc` then makes the error).
///
/// # Safety
/// The arguments of a call of `DB::Open` of that ABI (`status` the memory of its
/// result), `caller` the address it returns to.
#[no_mangle]
unsafe extern "C-unwind" fn leveldb_bloom_default_bits_open_cxx(
    abi: c_int,
    status: *mut c_void,
    options: *const c_void,
    name: *const c_void,
    db: *mut *mut c_void,
    caller: *const c_void,
) -> c_int {
    let function = if abi == 0 {
        OpenFunction::Cxx11
    } else {
        OpenFunction::Cxx98
    };
    // SAFETY: the caller's promise: options of the LevelDB it calls.
    let Some(open) = (unsafe { prepare(function, options, caller) }) else {
        return 0;
    };
    // SAFETY: the definition of DB::Open of this ABI the caller would have reached.
    let real = unsafe { std::mem::transmute::<*const c_void, CxxOpen>(open.real) };
    // SAFETY: the caller's arguments, unchanged.
    unsafe { real(status, options, name, db) };
    finish(open);
    1
}
