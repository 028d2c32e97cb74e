//! The definition of a LevelDB function that a caller of this library's open
//! function would have reached without this library, found without loading
//! anything: after this library in the scope it was loaded in (`RTLD_NEXT`), then
//! in the caller's own scope (the object its call returns to, and that object's
//! dependencies), then in any loaded object that defines it. Never this library's.

use std::ffi::{c_char, c_void, CStr};

use crate::dropin::loaded_libraries;
use std::ptr;

/// The object `address` lies in: its `Dl_info`, if it lies in one.
fn object_of(address: *const c_void) -> Option<libc::Dl_info> {
    if address.is_null() {
        return None;
    }
    // SAFETY: Dl_info is plain data, which dladdr only writes.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr accepts any address and reports failure with 0.
    let found = unsafe { libc::dladdr(address, &mut info) };
    (found != 0 && !info.dli_fbase.is_null()).then_some(info)
}

/// The load address of the object `address` lies in.
pub(super) fn object_base(address: *const c_void) -> Option<usize> {
    object_of(address).map(|info| info.dli_fbase as usize)
}

/// The file name of the object `address` lies in, for messages.
pub(super) fn object_name(address: *const c_void) -> String {
    object_of(address)
        .filter(|info| !info.dli_fname.is_null())
        .map(|info| {
            // SAFETY: dladdr's file name is a NUL-terminated string of the loader's.
            unsafe { CStr::from_ptr(info.dli_fname) }
                .to_string_lossy()
                .into_owned()
        })
        .unwrap_or_else(|| "an unknown object".into())
}

/// Whether `address` lies in this library.
fn in_this_library(address: *const c_void) -> bool {
    object_base(address) == object_base(in_this_library as *const c_void)
}

/// A handle of the already loaded object named `name` (never loading it), closed
/// when dropped.
struct Handle(*mut c_void);

impl Handle {
    fn of_loaded(name: *const c_char) -> Option<Self> {
        // SAFETY: a NUL-terminated name; RTLD_NOLOAD only looks for a loaded object.
        let handle = unsafe { libc::dlopen(name, libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        (!handle.is_null()).then(|| Self(handle))
    }

    /// `name` as the object's scope (itself, then its dependencies) binds it.
    fn symbol(&self, name: &CStr) -> *const c_void {
        // SAFETY: a live handle and a NUL-terminated name.
        unsafe { libc::dlsym(self.0, name.as_ptr()) }.cast_const()
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: a handle dlopen returned, closed once (it only drops the count the
        // RTLD_NOLOAD open added).
        unsafe { libc::dlclose(self.0) };
    }
}

/// The definition of `name` the code at `caller` would reach without this library:
/// as the dynamic linker binds the caller's call, the global scope first (after this
/// library: `RTLD_NEXT`), then the caller's own scope (a LevelDB loaded
/// `RTLD_LOCAL`, or built into the caller), then any loaded object defining it.
/// Never `exclude` (the definition an outer call of this thread already forwarded
/// to: a shim that forwards back here, which would loop).
pub(super) fn definition(
    name: &CStr,
    caller: *const c_void,
    exclude: *const c_void,
) -> Option<*const c_void> {
    let usable =
        |found: *const c_void| !found.is_null() && found != exclude && !in_this_library(found);
    // SAFETY: a NUL-terminated name; RTLD_NEXT searches after this library.
    let next = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) }.cast_const();
    if usable(next) {
        return Some(next);
    }
    object_of(caller)
        .filter(|info| !info.dli_fname.is_null() && !in_this_library(caller))
        .and_then(|info| Handle::of_loaded(info.dli_fname))
        .map(|handle| handle.symbol(name))
        .filter(|&found| usable(found))
        .or_else(|| defined_by_a_loaded_object(name, exclude))
}

/// `name` as defined by the first loaded object (other than this library) whose own
/// scope binds it to its own definition, other than `exclude`. The objects are
/// listed first (`dropin::loaded_libraries`), and the loader asked about each after
/// the walk: `dlopen` and `dlsym` inside `dl_iterate_phdr`'s callback would take the
/// loader's lock under the list's, the reverse of `dlopen`'s order.
fn defined_by_a_loaded_object(name: &CStr, exclude: *const c_void) -> Option<*const c_void> {
    loaded_libraries()
        .into_iter()
        .find_map(|(library, load_offset)| {
            let found = Handle::of_loaded(library.as_ptr())?.symbol(name);
            let own = object_base(found) == Some(load_offset)
                && found != exclude
                && !in_this_library(found);
            own.then_some(found)
        })
}

/// `name` as defined in the object `address` lies in (not through another object).
pub(super) fn in_object_of(address: *const c_void, name: &CStr) -> Option<*const c_void> {
    let info = object_of(address)?;
    // The program itself cannot be opened by its name: its scope is the global one,
    // which holds it first.
    let handle = Handle::of_loaded(info.dli_fname).or_else(|| Handle::of_loaded(ptr::null()))?;
    let found = handle.symbol(name);
    (object_base(found) == Some(info.dli_fbase as usize)).then_some(found)
}
