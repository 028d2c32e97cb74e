//! Swapping into LevelDB. When LevelDB's C API is loaded in the process, policies
//! are made with its own `leveldb_filterpolicy_create`, so LevelDB gets an object of
//! its own kind (no guessed C++ layout) whose callbacks build and match filters here.
//! LevelDB is found at run time, wherever it was loaded (see `find`); this library
//! never links to it.

mod find;

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use libc::size_t;

use super::args::malloc_copy;
use super::ops;
use super::registry::{self, try_box, Policy};
use super::{guard, leveldb_filterpolicy_t};
use bloom::BloomFilterPolicy;
use bloom::MATCH_ALL_FILTER;
pub(super) use find::LOADER;
use find::{global_symbol, in_this_library, leveldb, leveldb_or_load, warn_once, LevelDb};

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
        if let Some((filter, _)) = malloc_copy(&MATCH_ALL_FILTER) {
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

/// What `leveldb_filterpolicy_create_bloom` returns for `bloom`: with LevelDB in the
/// process, a LevelDB object whose callbacks run this library; without it, a handle
/// of this library's own. NULL when memory runs out, or (said once on stderr) when a
/// LevelDB C API is loaded that cannot be used: a handle of ours would crash LevelDB,
/// while NULL makes it run without filters, slower but right.
pub(crate) fn new_c_policy(bloom: BloomFilterPolicy) -> *mut leveldb_filterpolicy_t {
    // Out of memory, the search cannot tell whether LevelDB is here: NULL is the
    // answer that is safe either way.
    let Ok(found) = leveldb() else {
        return ptr::null_mut();
    };
    if let Some(leveldb) = found {
        return new_leveldb_policy(bloom, leveldb);
    }
    if find::leveldb_api_visible().unwrap_or(true) {
        warn_once(
            &UNUSABLE_WARNED,
            "leveldb-bloom: a leveldb_filterpolicy_create is loaded, but no object \
             defines both it and leveldb_filterpolicy_destroy: the bloom filter policy \
             is NULL, and LevelDB runs without filters\n",
        );
        return ptr::null_mut();
    }
    ops::new_own_handle(bloom)
}

static UNUSABLE_WARNED: AtomicBool = AtomicBool::new(false);

/// A LevelDB policy object whose callbacks run this library, registered so every
/// function here accepts it; NULL only when memory runs out. Should the registry
/// have no room, the object is still returned: LevelDB uses it through its own
/// methods, and this library's functions then treat it as LevelDB's own policy.
fn new_leveldb_policy(bloom: BloomFilterPolicy, leveldb: &LevelDb) -> *mut leveldb_filterpolicy_t {
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
    let format = unsafe {
        (*policy)
            .leveldb_wrapper
            .store(wrapper as usize, Ordering::Release);
        (*policy).bloom.format()
    };
    registry::register(wrapper as usize, policy, format);
    wrapper
}

/// Releases any handle: this library's own, a LevelDB object wrapping one of our
/// policies, or a policy LevelDB made itself. LevelDB objects go to LevelDB's own
/// `leveldb_filterpolicy_destroy` (which calls back to free our state); without
/// LevelDB an unknown pointer is left alone.
pub(crate) fn destroy(handle: *mut leveldb_filterpolicy_t) {
    if handle.is_null() || ops::free_own_handle(handle) {
        return;
    }
    if let Ok(Some(leveldb)) = leveldb() {
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
            registry::unregister(state.policy.leveldb_wrapper.load(Ordering::Acquire));
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
    let built = guard(ptr::null_mut, || {
        // SAFETY: as above.
        unsafe {
            ops::create_filter(
                Some(&state.policy.bloom),
                key_array,
                key_length_array,
                num_keys,
                filter_length,
            )
        }
    });
    if !built.is_null() {
        state.reserve.refill();
        return built;
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
    guard(
        || 1,
        || {
            // SAFETY: LevelDB passes our state, and readable key and filter bytes.
            unsafe {
                ops::key_may_match(
                    || Some(wrapper_state(state).policy.bloom.format()),
                    key,
                    length,
                    filter,
                    filter_length,
                )
            }
        },
    )
}

/// LevelDB's `Name` callback: the static name of the policy's format. The one
/// entry point without a panic boundary: nothing in it can panic, and no fallback
/// name would be safe (a wrong one would make LevelDB misread the filters).
///
/// # Safety
/// Called by LevelDB with our live state.
unsafe extern "C" fn name(state: *mut c_void) -> *const c_char {
    // SAFETY: LevelDB passes our state.
    ops::name_of(&unsafe { wrapper_state(state) }.policy.bloom).as_ptr()
}

/// The object `leveldb::NewBloomFilterPolicy` returns: a LevelDB object whose
/// callbacks run this library, loading LevelDB by its soname if it is not in the
/// process (see `find::leveldb_or_load`); NULL when that fails or memory runs out.
pub(crate) fn new_cxx_policy(bloom: BloomFilterPolicy) -> *mut leveldb_filterpolicy_t {
    match leveldb_or_load() {
        Some(leveldb) => new_leveldb_policy(bloom, leveldb),
        None => ptr::null_mut(),
    }
}

/// `leveldb_bloom_swap_status`: which of the two names resolve to this library in
/// the global scope, with LevelDB loaded.
pub(crate) fn swap_status(c_api: c_int, cxx_api: c_int) -> c_int {
    if !matches!(leveldb(), Ok(Some(_))) {
        return 0;
    }
    let ours = |name: &CStr| in_this_library(global_symbol(name));
    let mut status = 0;
    if ours(c"leveldb_filterpolicy_create_bloom") {
        status |= c_api;
    }
    if ours(c"_ZN7leveldb20NewBloomFilterPolicyEi") {
        status |= cxx_api;
    }
    status
}
