//! Swapping into LevelDB. When LevelDB's C API is loaded in the process, policies
//! are made with its own `leveldb_filterpolicy_create`, so LevelDB gets an object of
//! its own kind (no guessed C++ layout) whose callbacks build and match filters here.
//! LevelDB is found at run time; this library never links to it.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::OnceLock;

use libc::size_t;

use crate::bloom::{BloomFilterPolicy, MATCH_ALL_FILTER};
use crate::ffi::{self, guard, leveldb_filterpolicy_t};
use crate::handle::{self, try_box, Policy};

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

/// LevelDB's own functions, as found in the library that defines them.
struct LevelDb {
    create: LevelDbCreate,
    destroy: LevelDbDestroy,
}

static LEVELDB: OnceLock<LevelDb> = OnceLock::new();

/// LevelDB's C API, if loaded; looked for again on each call until found, since a
/// program may `dlopen` LevelDB after this library.
fn leveldb() -> Option<&'static LevelDb> {
    if let Some(found) = LEVELDB.get() {
        return Some(found);
    }
    let found = find_leveldb()?;
    Some(LEVELDB.get_or_init(|| found))
}

pub(crate) fn leveldb_loaded() -> bool {
    leveldb().is_some()
}

/// Whether a LevelDB C API is visible in the process at all, usable from here or
/// not. A program that has one must get LevelDB objects or NULL (no filter: slower,
/// never wrong), never this library's own handles, which LevelDB would take for C++
/// objects.
pub(crate) fn leveldb_in_process() -> bool {
    leveldb_loaded() || !global_symbol(c"leveldb_filterpolicy_create").is_null()
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

fn this_library() -> *mut c_void {
    object_base(leveldb_bloom_anchor as *const c_void)
}

/// Only its address is used: it lies in this library.
extern "C" fn leveldb_bloom_anchor() {}

/// `name` as the dynamic linker binds it for the program, or NULL.
fn global_symbol(name: &CStr) -> *mut c_void {
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT searches the global scope.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

fn find_leveldb() -> Option<LevelDb> {
    let create = global_symbol(c"leveldb_filterpolicy_create");
    if create.is_null() {
        return None;
    }
    // `leveldb_filterpolicy_destroy` is shadowed by ours in the global scope, so take
    // it from the library that defines `leveldb_filterpolicy_create`.
    // SAFETY: Dl_info is plain data; dladdr only writes it and reports failure with 0.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    if unsafe { libc::dladdr(create, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a path the loader reported; RTLD_NOLOAD only finds an object already
    // loaded, and its reference is dropped once the symbol is read.
    let destroy = unsafe {
        let library = libc::dlopen(info.dli_fname, libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        if library.is_null() {
            return None;
        }
        let destroy = libc::dlsym(library, c"leveldb_filterpolicy_destroy".as_ptr());
        libc::dlclose(library);
        destroy
    };
    if destroy.is_null() || object_base(destroy) == this_library() {
        return None;
    }
    // SAFETY: both symbols are LevelDB's C API functions, declared in leveldb/c.h
    // with exactly these signatures.
    unsafe {
        Some(LevelDb {
            create: std::mem::transmute::<*mut c_void, LevelDbCreate>(create),
            destroy: std::mem::transmute::<*mut c_void, LevelDbDestroy>(destroy),
        })
    }
}

/// The state behind a LevelDB object: the policy every function here finds through
/// the registry, and the reserve of its `create_filter` callback.
struct WrapperState {
    policy: Box<Policy>,
    reserve: Reserve,
}

/// A `malloc`'d match-all filter held back for the `create_filter` callback. LevelDB
/// appends whatever that callback returns and `free()`s it; were it NULL with length
/// 0, LevelDB would store an empty filter, which answers "absent" for every key. So
/// when not even the 2-byte match-all filter can be allocated, the callback hands out
/// the reserve, and refills it at its next successful call. Only if allocation fails
/// again before a refill does it abort the process (see [`create_filter`]).
struct Reserve(AtomicPtr<c_char>);

impl Reserve {
    fn new() -> Self {
        let reserve = Self(AtomicPtr::new(ptr::null_mut()));
        reserve.refill();
        reserve
    }

    /// Allocates the reserve if it was handed out; costs one atomic load otherwise.
    fn refill(&self) {
        if !self.0.load(Ordering::Relaxed).is_null() {
            return;
        }
        if let Some((filter, _)) = ffi::malloc_copy(&MATCH_ALL_FILTER) {
            if self
                .0
                .compare_exchange(ptr::null_mut(), filter, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                // SAFETY: just allocated and not handed out: another thread refilled first.
                unsafe { libc::free(filter.cast()) };
            }
        }
    }

    /// The reserve filter (`MATCH_ALL_FILTER.len()` bytes), now the caller's, or NULL.
    fn take(&self) -> *mut c_char {
        self.0.swap(ptr::null_mut(), Ordering::AcqRel)
    }
}

impl Drop for Reserve {
    fn drop(&mut self) {
        // SAFETY: NULL or a malloc'd filter that was never handed out.
        unsafe { libc::free(self.take().cast()) };
    }
}

/// A LevelDB policy object whose callbacks run this library, registered so every
/// function here accepts it; NULL if LevelDB is absent or unusable, or memory runs
/// out.
pub(crate) fn new_leveldb_policy(bloom: BloomFilterPolicy) -> *mut leveldb_filterpolicy_t {
    let Some(leveldb) = leveldb() else {
        return ptr::null_mut();
    };
    let Some(policy) = Policy::new(bloom) else {
        return ptr::null_mut();
    };
    let Some(state) = try_box(WrapperState {
        policy,
        reserve: Reserve::new(),
    }) else {
        return ptr::null_mut();
    };
    let state = Box::into_raw(state);
    // SAFETY: LevelDB's leveldb_filterpolicy_create stores the state and callbacks;
    // it calls `destroy_state` exactly once, when the object is deleted.
    let wrapper = unsafe {
        (leveldb.create)(
            state.cast(),
            destroy_state,
            create_filter,
            key_may_match,
            name,
        )
    };
    if wrapper.is_null() {
        // SAFETY: LevelDB made no object, so the state is still ours alone.
        drop(unsafe { Box::from_raw(state) });
        return ptr::null_mut();
    }
    // SAFETY: `state` stays live until `destroy_state`, which LevelDB cannot call
    // before the wrapper is returned to anyone.
    let policy: *mut Policy = unsafe { &mut *(*state).policy };
    // SAFETY: as above.
    unsafe {
        (*policy)
            .leveldb_wrapper
            .store(wrapper as usize, Ordering::Release)
    };
    if handle::register(wrapper as usize, policy) {
        wrapper
    } else {
        // SAFETY: LevelDB's own object, not yet handed out; this frees the state too.
        unsafe { (leveldb.destroy)(wrapper) };
        ptr::null_mut()
    }
}

/// Passes a LevelDB object to LevelDB's own `leveldb_filterpolicy_destroy`; without
/// LevelDB an unknown pointer is left alone.
pub(crate) fn leveldb_destroy(handle: *mut leveldb_filterpolicy_t) {
    if let Some(leveldb) = leveldb() {
        // SAFETY: the caller of destroy promised a live policy; this library did not
        // make it as its own, so it is LevelDB's to delete.
        unsafe { (leveldb.destroy)(handle) }
    }
}

/// # Safety
/// LevelDB passes the state given to `leveldb_filterpolicy_create`: a live
/// `WrapperState`.
unsafe fn wrapper_state<'a>(state: *mut c_void) -> &'a WrapperState {
    // SAFETY: the caller's promise.
    unsafe { &*state.cast::<WrapperState>() }
}

/// LevelDB's destructor callback: frees the state and forgets the wrapper.
///
/// # Safety
/// Called once, by LevelDB, with the state given to `leveldb_filterpolicy_create`.
unsafe extern "C" fn destroy_state(state: *mut c_void) {
    guard(
        || (),
        || {
            // SAFETY: LevelDB calls this once, with the state from `new_leveldb_policy`,
            // made by Box::into_raw.
            let state = unsafe { Box::from_raw(state.cast::<WrapperState>()) };
            handle::unregister(state.policy.leveldb_wrapper.load(Ordering::Acquire));
        },
    )
}

/// LevelDB's `CreateFilter` callback. Never returns NULL: LevelDB would store an
/// empty filter (see [`Reserve`]). When neither the filter nor the match-all filter
/// can be allocated and the reserve is spent, it prints why on stderr and aborts,
/// as a process that cannot allocate two bytes is about to fail anyway, and losing
/// keys silently would be worse.
///
/// # Safety
/// Called by LevelDB with our live state, `num_keys` readable keys described by the
/// two arrays, and a writable `filter_length`.
unsafe extern "C" fn create_filter(
    state: *mut c_void,
    key_array: *const *const c_char,
    key_length_array: *const size_t,
    num_keys: c_int,
    filter_length: *mut size_t,
) -> *mut c_char {
    // SAFETY: LevelDB passes our state, arrays of `num_keys` keys, and a length.
    let state = unsafe { wrapper_state(state) };
    // SAFETY: as above.
    let filter = unsafe {
        ffi::create_filter(
            Some(&state.policy.bloom),
            key_array,
            key_length_array,
            num_keys,
            filter_length,
        )
    };
    if !filter.is_null() {
        state.reserve.refill();
        return filter;
    }
    // SAFETY: LevelDB passes a writable length; NULL (never seen) gets NULL back.
    let Some(filter_length) = (unsafe { filter_length.as_mut() }) else {
        return ptr::null_mut();
    };
    let reserve = state.reserve.take();
    if reserve.is_null() {
        abort_out_of_memory();
    }
    *filter_length = MATCH_ALL_FILTER.len();
    reserve
}

fn abort_out_of_memory() -> ! {
    const MESSAGE: &[u8] = b"leveldb-bloom: out of memory in LevelDB's CreateFilter callback: \
        no filter can be returned, and an empty one would make LevelDB miss keys; aborting\n";
    // SAFETY: writes a static buffer to stderr; nothing is allocated.
    unsafe { libc::write(libc::STDERR_FILENO, MESSAGE.as_ptr().cast(), MESSAGE.len()) };
    std::process::abort()
}

/// LevelDB's `KeyMayMatch` callback.
///
/// # Safety
/// Called by LevelDB with readable key and filter bytes of the given lengths.
unsafe extern "C" fn key_may_match(
    state: *mut c_void,
    key: *const c_char,
    length: size_t,
    filter: *const c_char,
    filter_length: size_t,
) -> u8 {
    // SAFETY: LevelDB passes our state, and readable key and filter bytes.
    unsafe {
        ffi::key_may_match(
            &wrapper_state(state).policy,
            key,
            length,
            filter,
            filter_length,
        )
    }
}

/// LevelDB's `Name` callback: the static name of the policy's format.
///
/// # Safety
/// Called by LevelDB with our live state.
unsafe extern "C" fn name(state: *mut c_void) -> *const c_char {
    // SAFETY: LevelDB passes our state.
    ffi::name_of(&unsafe { wrapper_state(state) }.policy.bloom).as_ptr()
}

/// LevelDB's C++ `leveldb::NewBloomFilterPolicy(int)`, which LevelDB's own
/// `leveldb_filterpolicy_create_bloom` also calls through the dynamic linker. The
/// object is LevelDB's `leveldb_filterpolicy_t`, which derives from
/// `leveldb::FilterPolicy` alone, so the pointer is also the base's; `delete` frees it.
/// NULL without LevelDB or for a negative `bits_per_key`.
///
/// cbindgen:ignore
#[export_name = "_ZN7leveldb20NewBloomFilterPolicyEi"]
pub extern "C" fn leveldb_bloom_cxx_new_bloom_filter_policy(bits_per_key: c_int) -> *const c_void {
    guard(ptr::null, || match u32::try_from(bits_per_key) {
        Ok(bits_per_key) => new_leveldb_policy(BloomFilterPolicy::new(bits_per_key))
            .cast_const()
            .cast(),
        Err(_) => ptr::null(),
    })
}

/// Set in `leveldb_bloom_swap_status` when the program's `leveldb_filterpolicy_create_bloom` is this library's.
pub const LEVELDB_BLOOM_SWAP_C_API: c_int = 1;
/// Set in `leveldb_bloom_swap_status` when the program's `leveldb::NewBloomFilterPolicy` is this library's.
pub const LEVELDB_BLOOM_SWAP_CXX_API: c_int = 2;

/// Whether the swap is in effect: a bit mask of `LEVELDB_BLOOM_SWAP_C_API` and
/// `LEVELDB_BLOOM_SWAP_CXX_API`, set when LevelDB is loaded and the program's
/// `leveldb_filterpolicy_create_bloom` or `leveldb::NewBloomFilterPolicy` resolves to
/// this library. 0 when LevelDB is not loaded or the link order put LevelDB first:
/// then nothing is swapped, and nothing fails either.
#[no_mangle]
pub extern "C" fn leveldb_bloom_swap_status() -> c_int {
    guard(
        || 0,
        || {
            if !leveldb_loaded() {
                return 0;
            }
            let ours = |name: &CStr| {
                let symbol = global_symbol(name);
                !symbol.is_null() && object_base(symbol) == this_library()
            };
            let mut status = 0;
            if ours(c"leveldb_filterpolicy_create_bloom") {
                status |= LEVELDB_BLOOM_SWAP_C_API;
            }
            if ours(c"_ZN7leveldb20NewBloomFilterPolicyEi") {
                status |= LEVELDB_BLOOM_SWAP_CXX_API;
            }
            status
        },
    )
}
