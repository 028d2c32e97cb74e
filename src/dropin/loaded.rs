//! Questions about addresses in the loaded objects ([`loader`]): which object code
//! lies in, and which symbol the program's global scope binds.

use std::ffi::{c_void, CStr};

/// `name` as the dynamic linker binds it for the program (the global scope), or
/// NULL. `dlsym` takes the loader's lock: only `leveldb_bloom_swap_status` asks.
pub(super) fn global_symbol(name: &CStr) -> *mut c_void {
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT searches the global scope.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// Which object `address` lies in (its identity while loaded).
fn object_at(address: *const c_void) -> Option<usize> {
    loader::with_object_at(address as usize, |object| object.id())
}

/// Whether `address` lies in this library (in the program, when it is linked
/// statically).
pub(super) fn in_this_library(address: *const c_void) -> bool {
    !address.is_null() && object_at(address) == object_at(leveldb_bloom_anchor as *const c_void)
}

/// Only its address is used: it lies in this library.
extern "C" fn leveldb_bloom_anchor() {}

/// The size of a pointer in a vtable.
const WORD: usize = std::mem::size_of::<usize>();

/// Whether `object` looks like a live C++ object of a loaded library: its first
/// word points into a loaded object, at a table (mapped there, two entries at
/// least) whose second entry (the deleting destructor) is code of that same object.
///
/// # Safety
/// `object` must be readable for a pointer.
pub(super) unsafe fn is_cxx_object(object: *const c_void) -> bool {
    // SAFETY: the caller's promise.
    let table = unsafe { object.cast::<usize>().read_unaligned() };
    let destructor = loader::with_object_at(table, |object| {
        let entries = object.bytes(table)?;
        let destructor = entries.get(WORD..2 * WORD)?;
        let destructor = usize::from_ne_bytes(destructor.try_into().ok()?);
        object.holds(destructor).then_some(())
    });
    destructor.flatten().is_some()
}
