//! LevelDB's open functions, as this object defines them: each forwards to the
//! definition its caller's reference binds to without this object, with the
//! caller's options or a copy given a policy ([`options::given`]). The real call is
//! made outside every panic boundary, so that an exception LevelDB throws
//! (`std::bad_alloc`) reaches its caller as without this object (the copy, if any,
//! freed on the way). `leveldb::DB::Open` only on x86-64, where a `Status` returned
//! in memory is an ordinary first argument.

use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::is_interposer;
use super::options::{self, Given};

/// `leveldb_open(options, name, errptr)` of the C API.
type COpen =
    unsafe extern "C-unwind" fn(*const c_void, *const c_char, *mut *mut c_char) -> *mut c_void;

/// LevelDB's C API entry: see the module.
#[no_mangle]
#[cfg_attr(caller_asm, unsafe(naked))]
pub extern "C-unwind" fn leveldb_open(
    options: *const c_void,
    name: *const c_char,
    errptr: *mut *mut c_char,
) -> *mut c_void {
    loader::with_caller!(open_c, 3, options, name, errptr)
}

extern "C-unwind" fn open_c(
    options: *const c_void,
    name: *const c_char,
    errptr: *mut *mut c_char,
    caller: usize,
) -> *mut c_void {
    let real = definition(c"leveldb_open", caller);
    // SAFETY: the caller's options, of the LevelDB whose `leveldb_open` it calls.
    let given = prepare(|| unsafe { options::given(options, real) });
    // SAFETY: the definition of `leveldb_open` the caller binds to.
    let real = unsafe { std::mem::transmute::<usize, COpen>(real) };
    // SAFETY: the caller's arguments, its options or their copy.
    unsafe { real(given.as_ref().map_or(options, Given::as_ptr), name, errptr) }
}

/// `Status leveldb::DB::Open(const Options&, const std::string&, DB**)` on x86-64:
/// the `Status` is returned in memory whose address comes first, and is returned.
#[cfg(target_arch = "x86_64")]
type CxxOpen = unsafe extern "C-unwind" fn(
    *mut c_void,
    *const c_void,
    *const c_void,
    *mut *mut c_void,
) -> *mut c_void;

/// `leveldb::DB::Open` of libstdc++'s new `std::string` ABI.
#[cfg(target_arch = "x86_64")]
#[unsafe(export_name = "_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_")]
#[cfg_attr(caller_asm, unsafe(naked))]
pub extern "C-unwind" fn open_cxx11(
    status: *mut c_void,
    options: *const c_void,
    name: *const c_void,
    db: *mut *mut c_void,
) -> *mut c_void {
    loader::with_caller!(open_cxx::<false>, 4, status, options, name, db)
}

/// `leveldb::DB::Open` of libstdc++'s old `std::string` ABI.
#[cfg(target_arch = "x86_64")]
#[unsafe(export_name = "_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_")]
#[cfg_attr(caller_asm, unsafe(naked))]
pub extern "C-unwind" fn open_cxx98(
    status: *mut c_void,
    options: *const c_void,
    name: *const c_void,
    db: *mut *mut c_void,
) -> *mut c_void {
    loader::with_caller!(open_cxx::<true>, 4, status, options, name, db)
}

#[cfg(target_arch = "x86_64")]
extern "C-unwind" fn open_cxx<const OLD_ABI: bool>(
    status: *mut c_void,
    options: *const c_void,
    name: *const c_void,
    db: *mut *mut c_void,
    caller: usize,
) -> *mut c_void {
    let function = match OLD_ABI {
        true => c"_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_",
        false => c"_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_",
    };
    let real = definition(function, caller);
    // SAFETY: the caller's options, of the LevelDB whose `DB::Open` it calls.
    let given = prepare(|| unsafe { options::given(options, real) });
    // SAFETY: the definition of `DB::Open` of this ABI the caller binds to.
    let real = unsafe { std::mem::transmute::<usize, CxxOpen>(real) };
    // SAFETY: the caller's arguments, its options or their copy.
    unsafe {
        real(
            status,
            given.as_ref().map_or(options, Given::as_ptr),
            name,
            db,
        )
    }
}

/// The copy of the options to pass, if any: a panic gives none (the caller's own
/// options are passed, as stock).
fn prepare(given: impl FnOnce() -> Option<Given>) -> Option<Given> {
    catch_unwind(AssertUnwindSafe(given)).ok().flatten()
}

/// The definition of `function` the code at `caller` binds to without this object.
/// Where there is none (or no memory to find it), the process ends as the dynamic
/// linker ends one whose reference has no definition: exit status 127, said.
fn definition(function: &CStr, caller: usize) -> usize {
    let interposer = definition as *const () as usize;
    let bound = catch_unwind(|| {
        loader::bind(
            caller,
            interposer,
            function.to_bytes(),
            is_interposer,
            |_| (),
            |_| (),
        )
    });
    if let Ok(Ok((_, Some(bound)))) = bound {
        return bound.address;
    }
    loader::say(&format!(
        "leveldb-bloom: symbol lookup error: no definition of {} but \
         libleveldb_bloom_default_bits.so's for its caller\n",
        function.to_string_lossy()
    ));
    // SAFETY: ends the process, as ld.so does on an undefined symbol.
    unsafe { libc::_exit(127) }
}
