//! What the dynamic linker tells about the objects in the process, asked without
//! loading anything and without walking the list of loaded objects: which object an
//! address lies in, the names an object's dynamic symbols have, and the global
//! scope. Each question takes the loader's own lock, which glibc resets in a forked
//! child, so none can hang a child.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;

/// `dladdr1`'s request for the object's `struct link_map` (glibc's `<dlfcn.h>`).
const RTLD_DL_LINKMAP: c_int = 2;

extern "C" {
    /// glibc's `dladdr1`: `dladdr`, and the `link_map` of the object found.
    fn dladdr1(
        address: *const c_void,
        info: *mut libc::Dl_info,
        extra: *mut *mut c_void,
        flags: c_int,
    ) -> c_int;
}

/// The public head of glibc's `struct link_map` (`<link.h>`).
#[repr(C)]
struct LinkMap {
    /// The difference between the object's addresses in memory and in its file.
    addr: usize,
    name: *const c_char,
    /// The object's dynamic section, ended by a `DT_NULL` entry.
    dynamic: *const Dyn,
}

/// An `ElfW(Dyn)` entry.
#[repr(C)]
struct Dyn {
    tag: isize,
    value: usize,
}

const DT_NULL: isize = 0;
const DT_STRTAB: isize = 5;
const DT_STRSZ: isize = 10;

/// The object `address` lies in: its `Dl_info` and `link_map`, if it lies in one.
fn object_of(address: *const c_void) -> Option<(libc::Dl_info, *const LinkMap)> {
    if address.is_null() {
        return None;
    }
    // SAFETY: Dl_info is plain data, which dladdr1 only writes.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let mut map: *mut c_void = ptr::null_mut();
    // SAFETY: dladdr1 accepts any address and reports failure with 0.
    let found = unsafe { dladdr1(address, &mut info, &mut map, RTLD_DL_LINKMAP) };
    (found != 0 && !info.dli_fbase.is_null()).then_some((info, map.cast_const().cast()))
}

/// The load address of the object `address` lies in, or NULL.
fn base_of(address: *const c_void) -> *mut c_void {
    object_of(address).map_or(ptr::null_mut(), |(info, _)| info.dli_fbase)
}

/// Whether `address` lies in this library (in the program, when it is linked
/// statically).
pub(super) fn in_this_library(address: *const c_void) -> bool {
    !address.is_null() && base_of(address) == base_of(leveldb_bloom_anchor as *const c_void)
}

/// Only its address is used: it lies in this library.
extern "C" fn leveldb_bloom_anchor() {}

/// `name` as the dynamic linker binds it for the program (the global scope), or NULL.
pub(super) fn global_symbol(name: &CStr) -> *mut c_void {
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT searches the global scope.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// `name` as the global scope binds it for anyone but this library: past this
/// library's own definitions of LevelDB's open functions (`default_bits`), the
/// next one (`RTLD_NEXT`), or NULL.
pub(super) fn leveldb_symbol(name: &CStr) -> *mut c_void {
    let found = global_symbol(name);
    if !in_this_library(found) {
        return found;
    }
    // SAFETY: a NUL-terminated name; RTLD_NEXT searches after this library.
    unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) }
}

/// The names of the dynamic symbols the object `address` lies in defines or
/// imports, NUL-separated (its `.dynstr`, which holds little else): empty when
/// `address` is NULL or lies in no object. Valid while that object stays loaded.
pub(super) fn dynamic_names<'a>(address: *const c_void) -> &'a [u8] {
    let Some((_, map)) = object_of(address) else {
        return &[];
    };
    // SAFETY: glibc's link_map of a loaded object, whose dynamic section ends with
    // DT_NULL.
    let (base, dynamic) = unsafe { ((*map).addr, (*map).dynamic) };
    let (mut table, mut size) = (0, 0);
    // SAFETY: as above.
    for (tag, value) in unsafe { entries(dynamic) } {
        match tag {
            DT_STRTAB => table = value,
            DT_STRSZ => size = value,
            _ => {}
        }
    }
    // glibc relocates the dynamic section in place where it is writable (as on
    // x86-64), so DT_STRTAB is then an address; else it is the offset from `base`.
    if table != 0 && table < base {
        table += base;
    }
    if table == 0 || size == 0 || size > isize::MAX as usize {
        return &[];
    }
    // SAFETY: the object's string table, mapped with the object, `size` bytes.
    unsafe { std::slice::from_raw_parts(table as *const u8, size) }
}

/// The tags and values of a dynamic section's entries, up to `DT_NULL`.
///
/// # Safety
/// `first` must be NULL or point at a readable dynamic section ending with `DT_NULL`.
unsafe fn entries(first: *const Dyn) -> impl Iterator<Item = (isize, usize)> {
    (0..).map_while(move |index| {
        // SAFETY: the caller's promise: the entries up to DT_NULL, where the walk
        // stops, are readable.
        let entry = unsafe { first.add(index).as_ref() }?;
        (entry.tag != DT_NULL).then_some((entry.tag, entry.value))
    })
}

/// Whether `object` looks like a live C++ object of a loaded library: its first
/// word points into a loaded object, at a table whose second entry (the deleting
/// destructor) is code of that same object.
///
/// # Safety
/// `object` must be readable for a pointer.
pub(super) unsafe fn is_cxx_object(object: *const c_void) -> bool {
    // SAFETY: the caller's promise.
    let vtable = unsafe { object.cast::<*const *const c_void>().read_unaligned() };
    let base = base_of(vtable.cast());
    // SAFETY: the vtable lies in a loaded object, whose mapped tables hold at least
    // two entries there.
    !base.is_null() && base_of(unsafe { vtable.add(1).read_unaligned() }) == base
}
