//! Finding LevelDB's C API in the process, wherever the program put it.
//!
//! A program that links LevelDB has it in the global symbol scope, but Python
//! extension modules, `ctypes` and plugins opened with `dlopen`'s default flags load
//! it `RTLD_LOCAL`, where `dlsym(RTLD_DEFAULT, …)` cannot see it, although their
//! calls to this library's names (preloaded or linked first) still reach us. So the
//! search does not rely on the global scope: it asks each loaded object, through
//! its own handle, for LevelDB's functions, and takes them from the first one that
//! has both from a library other than this one. The object found is pinned: it stays
//! loaded for as long as the process runs, since LevelDB objects made through it may
//! live as long.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use libc::size_t;

use super::super::fork_lock::ForkLock;
use super::super::leveldb_filterpolicy_t;
use super::super::registry::try_box;

type Destructor = unsafe extern "C" fn(*mut c_void);
type CreateFilter = unsafe extern "C" fn(
    *mut c_void,
    *const *const c_char,
    *const size_t,
    c_int,
    *mut size_t,
) -> *mut c_char;
type KeyMayMatch =
    unsafe extern "C" fn(*mut c_void, *const c_char, size_t, *const c_char, size_t) -> u8;
type Name = unsafe extern "C" fn(*mut c_void) -> *const c_char;
type LevelDbCreate = unsafe extern "C" fn(
    *mut c_void,
    Destructor,
    CreateFilter,
    KeyMayMatch,
    Name,
) -> *mut leveldb_filterpolicy_t;
type LevelDbDestroy = unsafe extern "C" fn(*mut leveldb_filterpolicy_t);

/// LevelDB's own functions, as found in a loaded object that stays loaded.
pub(super) struct LevelDb {
    pub(super) create: LevelDbCreate,
    pub(super) destroy: LevelDbDestroy,
}

/// LevelDB once found (NULL before): never freed. An atomic rather than a
/// `OnceLock`, so that no thread waits for another that is finding it, and a child
/// forked meanwhile never waits for a thread it does not have.
static LEVELDB: AtomicPtr<LevelDb> = AtomicPtr::new(ptr::null_mut());

/// The search could not be made: memory ran out listing the loaded objects.
#[derive(Debug)]
pub(super) struct OutOfMemory;

/// LevelDB's C API if it is loaded; looked for again on each call until found, since
/// a program may `dlopen` LevelDB after this library.
pub(super) fn leveldb() -> Result<Option<&'static LevelDb>, OutOfMemory> {
    // SAFETY: NULL, or a LevelDb leaked below, never freed.
    if let Some(found) = unsafe { LEVELDB.load(Ordering::Acquire).as_ref() } {
        return Ok(Some(found));
    }
    let Some(found) = find_leveldb()? else {
        return Ok(None);
    };
    let found = Box::into_raw(try_box(found).ok_or(OutOfMemory)?);
    let kept =
        match LEVELDB.compare_exchange(ptr::null_mut(), found, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => found,
            Err(first) => {
                // SAFETY: made by Box::into_raw above and never shared: another thread
                // stored the same functions first.
                drop(unsafe { Box::from_raw(found) });
                first
            }
        };
    // SAFETY: leaked, never freed.
    Ok(Some(unsafe { &*kept }))
}

/// The sonames LevelDB is installed under: Debian's first, then upstream's.
const SONAMES: [&CStr; 3] = [c"libleveldb.so.1d", c"libleveldb.so.1", c"libleveldb.so"];

/// LevelDB's C API, loading LevelDB by its soname if it is not in the process: for
/// entry points only LevelDB can serve, called by a program that was linked
/// against LevelDB but whose linker dropped it (`--as-needed`, when every LevelDB
/// symbol the program uses is also this library's). When LevelDB cannot be loaded
/// either, says so once on stderr, naming the fix, and returns `None`.
pub(super) fn leveldb_or_load() -> Option<&'static LevelDb> {
    if let Some(found) = leveldb().ok()? {
        return Some(found);
    }
    for soname in SONAMES {
        // SAFETY: a NUL-terminated name. The object stays loaded: found, it is
        // pinned; not usable, its reference is kept all the same, which only costs
        // memory, since its initialisers may have run.
        unsafe { libc::dlopen(soname.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if let Some(found) = leveldb().ok()? {
            return Some(found);
        }
    }
    warn_once(
        &NO_LEVELDB_WARNED,
        "leveldb-bloom: leveldb::NewBloomFilterPolicy was called, but LevelDB is not \
         loaded in this process and could not be loaded (tried libleveldb.so.1d, \
         libleveldb.so.1, libleveldb.so). The program was probably linked with \
         --as-needed, which dropped -lleveldb because every LevelDB symbol it uses is \
         also defined by libleveldb_bloom. Link with -Wl,--no-as-needed around \
         -lleveldb_bloom -lleveldb, or make sure libleveldb can be found. Returning \
         NULL: no bloom filter policy.\n",
    );
    None
}

static NO_LEVELDB_WARNED: AtomicBool = AtomicBool::new(false);

/// Writes `message` to stderr the first time only; allocates nothing.
pub(super) fn warn_once(warned: &AtomicBool, message: &str) {
    if !warned.swap(true, Ordering::Relaxed) {
        // SAFETY: writes a borrowed buffer to stderr.
        unsafe { libc::write(libc::STDERR_FILENO, message.as_ptr().cast(), message.len()) };
    }
}

/// Whether some loaded object defines `leveldb_filterpolicy_create`, usable from
/// here or not.
pub(super) fn leveldb_api_visible() -> Result<bool, OutOfMemory> {
    Ok(loaded_objects()?.iter().any(|object| {
        let handle = Handle::open(object);
        handle.is_some_and(|handle| !handle.symbol(c"leveldb_filterpolicy_create").is_null())
    }))
}

/// A copy of `name`, or `None` when memory runs out (the search must not abort).
fn try_copy(name: &CStr) -> Option<CString> {
    let bytes = name.to_bytes_with_nul();
    let mut copy = Vec::new();
    copy.try_reserve_exact(bytes.len()).ok()?;
    copy.extend_from_slice(bytes);
    CString::from_vec_with_nul(copy).ok()
}

/// The load address of the object defining `address`, or NULL.
fn object_base(address: *const c_void) -> *mut c_void {
    // SAFETY: Dl_info is plain data; dladdr only writes it.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr accepts any address and reports failure with 0.
    match unsafe { libc::dladdr(address, &mut info) } {
        0 => ptr::null_mut(),
        _ => info.dli_fbase,
    }
}

/// Whether `address` lies in this library.
pub(super) fn in_this_library(address: *const c_void) -> bool {
    !address.is_null() && object_base(address) == object_base(leveldb_bloom_anchor as *const c_void)
}

/// Only its address is used: it lies in this library.
extern "C" fn leveldb_bloom_anchor() {}

/// `name` as the dynamic linker binds it for the program (the global scope), or NULL.
pub(super) fn global_symbol(name: &CStr) -> *mut c_void {
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT searches the global scope.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// A reference to a loaded object, dropped with it unless [`pin`](Self::pin)ned.
struct Handle(*mut c_void);

impl Handle {
    /// The already loaded object at `path` ("" for the program, whose handle
    /// searches the global scope).
    fn open(path: &CStr) -> Option<Self> {
        let path = if path.is_empty() {
            ptr::null()
        } else {
            path.as_ptr()
        };
        // SAFETY: NULL or a NUL-terminated path; RTLD_NOLOAD never loads anything.
        let handle = unsafe { libc::dlopen(path, libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        (!handle.is_null()).then_some(Self(handle))
    }

    /// `name` as found in this object and its dependencies, or NULL.
    fn symbol(&self, name: &CStr) -> *mut c_void {
        // SAFETY: a live handle and a NUL-terminated name.
        unsafe { libc::dlsym(self.0, name.as_ptr()) }
    }

    /// Keeps the object loaded for good.
    fn pin(self) {
        std::mem::forget(self);
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: a reference taken by `open` and not dropped before.
        unsafe { libc::dlclose(self.0) };
    }
}

/// Held while this library walks the loaded objects: glibc does not reset the lock
/// `dl_iterate_phdr` takes in a forked child, so no fork may happen mid-walk (see
/// `fork`).
pub(in super::super) static LOADER: ForkLock<()> = ForkLock::new(());

/// The paths of every loaded object, in load order ("" for the program).
fn loaded_objects() -> Result<Vec<CString>, OutOfMemory> {
    /// Pushes each object's path; stops the walk (returns 1) when memory runs out.
    unsafe extern "C" fn collect(
        info: *mut libc::dl_phdr_info,
        _size: size_t,
        objects: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info and our Vec through.
        let (info, objects) = unsafe { (&*info, &mut *objects.cast::<Vec<CString>>()) };
        let name = if info.dlpi_name.is_null() {
            c""
        } else {
            // SAFETY: the loader's NUL-terminated path of the object.
            unsafe { CStr::from_ptr(info.dlpi_name) }
        };
        match (objects.try_reserve(1), try_copy(name)) {
            (Ok(()), Some(name)) => {
                objects.push(name);
                0
            }
            _ => 1,
        }
    }
    let mut objects: Vec<CString> = Vec::new();
    let stopped = {
        let _walking = LOADER.lock();
        // SAFETY: the callback only reads the info it is given and pushes to
        // `objects`, which outlives the call; no loader function is called from
        // inside it.
        unsafe { libc::dl_iterate_phdr(Some(collect), (&mut objects as *mut Vec<CString>).cast()) }
    };
    match stopped {
        0 => Ok(objects),
        _ => Err(OutOfMemory),
    }
}

/// The program's own `leveldb_filterpolicy_create` comes first (so an interposer
/// in front of LevelDB's is honoured), then every loaded object in load order.
fn find_leveldb() -> Result<Option<LevelDb>, OutOfMemory> {
    // Listed before any loader call, so that running out of memory here leaves no
    // loader error message allocated behind.
    let objects = loaded_objects()?;
    let global = global_symbol(c"leveldb_filterpolicy_create");
    let mut candidates = Vec::new();
    if !global.is_null() && !in_this_library(global) {
        // SAFETY: Dl_info is plain data; dladdr only writes it and reports failure with 0.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::dladdr(global, &mut info) } != 0 && !info.dli_fname.is_null() {
            // SAFETY: the loader's NUL-terminated path of the object.
            let path = try_copy(unsafe { CStr::from_ptr(info.dli_fname) }).ok_or(OutOfMemory)?;
            candidates.try_reserve(1).map_err(|_| OutOfMemory)?;
            candidates.push(path);
        }
    }
    Ok(candidates.iter().chain(&objects).find_map(|path| {
        let handle = Handle::open(path)?;
        let create = handle.symbol(c"leveldb_filterpolicy_create");
        let destroy = handle.symbol(c"leveldb_filterpolicy_destroy");
        if create.is_null()
            || destroy.is_null()
            || in_this_library(create)
            || in_this_library(destroy)
        {
            return None;
        }
        handle.pin();
        // SAFETY: both symbols are LevelDB's C API functions, declared in leveldb/c.h
        // with exactly these signatures, in an object pinned in memory.
        unsafe {
            Some(LevelDb {
                create: std::mem::transmute::<*mut c_void, LevelDbCreate>(create),
                destroy: std::mem::transmute::<*mut c_void, LevelDbDestroy>(destroy),
            })
        }
    }))
}
