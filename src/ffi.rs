//! The C API. Each function turns its raw arguments into checked Rust values, runs
//! the safe core inside the one panic boundary, [`guard`], and answers every bad
//! input with a documented, fail-safe result.

use std::ffi::{c_char, c_int, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::ptr;

use libc::size_t;

use crate::bloom::{BloomFilterPolicy, Filter, Format, MATCH_ALL_FILTER};
use crate::dropin;
use crate::handle::{self, Policy};
use crate::simd::SimdLevel;

/// A bloom filter policy. Opaque: made by `leveldb_filterpolicy_create_bloom` or
/// `leveldb_bloom_policy_create`, released by `leveldb_filterpolicy_destroy`.
#[allow(non_camel_case_types)]
pub struct leveldb_filterpolicy_t {
    _opaque: [u8; 0],
}

/// The name of `bloom`'s filter format, as a static C string.
pub(crate) fn name_of(bloom: &BloomFilterPolicy) -> &'static CStr {
    match bloom.format() {
        Format::Current => c"leveldb.BuiltinBloomFilter2",
        Format::Legacy => c"leveldb.BuiltinBloomFilter",
    }
}

/// The panic boundary of every exported function: a panic in `body` is caught
/// and answered by `on_panic`, the function's fail-safe result.
pub(crate) fn guard<T>(on_panic: impl FnOnce() -> T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|_| on_panic())
}

/// `len` bytes at `data`; NULL is the empty slice when `len` is 0, and `None` otherwise.
///
/// # Safety
/// A non-NULL `data` must be valid for reads of `len` bytes for `'a`.
pub(crate) unsafe fn bytes<'a>(data: *const c_char, len: size_t) -> Option<&'a [u8]> {
    // SAFETY: the caller's promise; NULL and oversized lengths are refused first.
    unsafe { array(data.cast::<u8>(), len) }
}

/// `len` values at `data`, with the same rules as [`bytes`].
///
/// # Safety
/// A non-NULL `data` must be valid for reads of `len` values for `'a`.
unsafe fn array<'a, T>(data: *const T, len: usize) -> Option<&'a [T]> {
    if len == 0 {
        return Some(&[]);
    }
    if !can_slice(data, len) {
        return None;
    }
    // SAFETY: non-NULL, within isize::MAX bytes, and valid for reads per the caller.
    Some(unsafe { std::slice::from_raw_parts(data, len) })
}

/// Whether `len` values at `data` can form a slice: non-NULL and within isize::MAX bytes.
fn can_slice<T>(data: *const T, len: usize) -> bool {
    !data.is_null()
        && len
            .checked_mul(size_of::<T>())
            .is_some_and(|bytes| bytes <= isize::MAX as usize)
}

/// A C key array, checked: every key is either non-NULL or empty.
#[derive(Clone, Copy)]
pub(crate) struct Keys<'a> {
    pointers: &'a [*const c_char],
    lengths: &'a [size_t],
}

impl<'a> Keys<'a> {
    /// `None` if either array is NULL while `num_keys > 0`, or a key is NULL with a
    /// non-zero length.
    ///
    /// # Safety
    /// Non-NULL arrays must hold `num_keys` entries, and each non-NULL key as many
    /// readable bytes as its length, for `'a`.
    pub(crate) unsafe fn new(
        key_array: *const *const c_char,
        key_length_array: *const size_t,
        num_keys: usize,
    ) -> Option<Self> {
        // SAFETY: the caller's promise.
        let (pointers, lengths) = unsafe {
            (
                array(key_array, num_keys)?,
                array(key_length_array, num_keys)?,
            )
        };
        let valid = pointers
            .iter()
            .zip(lengths)
            .all(|(key, &len)| len == 0 || (!key.is_null() && len <= isize::MAX as usize));
        valid.then_some(Self { pointers, lengths })
    }

    pub(crate) fn len(&self) -> usize {
        self.pointers.len()
    }

    pub(crate) fn iter(self) -> impl ExactSizeIterator<Item = &'a [u8]> {
        self.pointers.iter().zip(self.lengths).map(|(&key, &len)| {
            if len == 0 {
                &[][..]
            } else {
                // SAFETY: `new` checked the key is non-NULL and its length in range;
                // its creator promised the bytes are readable for 'a.
                unsafe { std::slice::from_raw_parts(key.cast::<u8>(), len) }
            }
        })
    }
}

/// The policy behind a handle this library returned and has not destroyed.
///
/// # Safety
/// The handle must not be destroyed while the reference is in use.
unsafe fn lookup_policy<'a>(handle: *const leveldb_filterpolicy_t) -> Option<&'a Policy> {
    // SAFETY: registered handles point at live policies until destroyed.
    handle::lookup(handle as usize).map(|policy| unsafe { &*policy })
}

/// A `malloc`'d copy of `filter`, for the caller to `free()`.
pub(crate) fn malloc_copy(filter: &[u8]) -> Option<(*mut c_char, usize)> {
    // SAFETY: malloc has no preconditions; NULL is handled.
    let buffer = unsafe { libc::malloc(filter.len()) }.cast::<u8>();
    if buffer.is_null() {
        return None;
    }
    // SAFETY: `buffer` was just allocated with room for `filter.len()` bytes.
    unsafe { ptr::copy_nonoverlapping(filter.as_ptr(), buffer, filter.len()) };
    Some((buffer.cast(), filter.len()))
}

/// The real filter, `malloc`'d, or `None` if it cannot be sized or allocated.
fn malloc_filter(bloom: &BloomFilterPolicy, keys: Keys<'_>) -> Option<(*mut c_char, usize)> {
    let len = bloom.filter_len(keys.len())?;
    // SAFETY: calloc has no preconditions; NULL is handled.
    let buffer = unsafe { libc::calloc(len, 1) }.cast::<u8>();
    if buffer.is_null() {
        return None;
    }
    // SAFETY: `buffer` holds `len` zeroed bytes, owned here until returned.
    let out = unsafe { std::slice::from_raw_parts_mut(buffer, len) };
    match guard(|| None, || bloom.write_filter(keys.iter(), out).ok()) {
        Some(()) => Some((buffer.cast(), len)),
        None => {
            // SAFETY: allocated above and not handed out.
            unsafe { libc::free(buffer.cast()) };
            None
        }
    }
}

/// `create_filter` for an already resolved policy: the real filter, else the
/// match-all filter, else NULL with length 0. Shared with the LevelDB callbacks.
///
/// # Safety
/// As for [`leveldb_filterpolicy_create_filter`].
pub(crate) unsafe fn create_filter(
    bloom: Option<&BloomFilterPolicy>,
    key_array: *const *const c_char,
    key_length_array: *const size_t,
    num_keys: c_int,
    filter_length: *mut size_t,
) -> *mut c_char {
    // SAFETY: the caller passes NULL or a writable size_t.
    let Some(filter_length) = (unsafe { filter_length.as_mut() }) else {
        return ptr::null_mut();
    };
    let real = || {
        let num_keys = usize::try_from(num_keys).ok()?;
        // SAFETY: the caller's promise about the arrays.
        let keys = unsafe { Keys::new(key_array, key_length_array, num_keys) }?;
        malloc_filter(bloom?, keys)
    };
    let filter = guard(|| None, real).or_else(|| malloc_copy(&MATCH_ALL_FILTER));
    let (buffer, len) = filter.unwrap_or((ptr::null_mut(), 0));
    *filter_length = len;
    buffer
}

/// `key_may_match` once a policy was found: bad pointers answer 1 (may match).
///
/// # Safety
/// As for [`leveldb_filterpolicy_key_may_match`].
pub(crate) unsafe fn key_may_match(
    policy: &Policy,
    key: *const c_char,
    length: size_t,
    filter: *const c_char,
    filter_length: size_t,
) -> u8 {
    guard(
        || 1,
        || {
            // SAFETY: the caller's promise about both buffers.
            match unsafe { (bytes(key, length), bytes(filter, filter_length)) } {
                (Some(key), Some(filter)) => {
                    Filter::cached(filter, &policy.reciprocals, policy.bloom.format())
                        .may_contain(key)
                        .into()
                }
                _ => 1,
            }
        },
    )
}

/// A policy handle of this library's own: never a LevelDB object; NULL when memory
/// runs out.
pub(crate) fn new_own_handle(bloom: BloomFilterPolicy) -> *mut leveldb_filterpolicy_t {
    let Some(policy) = Policy::new(bloom) else {
        return ptr::null_mut();
    };
    let policy = Box::into_raw(policy);
    if handle::register(policy as usize, policy) {
        policy.cast()
    } else {
        // SAFETY: just made by Box::into_raw and never shared.
        drop(unsafe { Box::from_raw(policy) });
        ptr::null_mut()
    }
}

/// Releases any handle: this library's own, a LevelDB object wrapping one of our
/// policies, or (forwarded to LevelDB) a policy LevelDB made itself.
fn destroy(handle: *mut leveldb_filterpolicy_t) {
    if handle.is_null() {
        return;
    }
    match handle::lookup(handle as usize) {
        Some(policy) if policy.cast() == handle => {
            if handle::unregister(handle as usize).is_some() {
                // SAFETY: made by Box::into_raw in `new_own_handle`; unregistering
                // succeeded here only, so it is freed once.
                drop(unsafe { Box::from_raw(policy) });
            }
        }
        // LevelDB's object: LevelDB deletes it and calls back to free our state.
        _ => dropin::leveldb_destroy(handle),
    }
}

fn bits_per_key(bits_per_key: c_int) -> Option<BloomFilterPolicy> {
    u32::try_from(bits_per_key).ok().map(BloomFilterPolicy::new)
}

/// What the C constructors return (see `dropin::new_c_policy`); NULL for `None`.
fn new_handle(bloom: Option<BloomFilterPolicy>) -> *mut leveldb_filterpolicy_t {
    bloom.map_or(ptr::null_mut(), dropin::new_c_policy)
}

/// Creates a bloom filter policy, as LevelDB's `leveldb_filterpolicy_create_bloom`:
/// each key gets `bits_per_key` bits and k = bits_per_key × 0.69 probes (truncated,
/// clamped to 1..=30).
///
/// When LevelDB is loaded in the process, however it was loaded (linked, or
/// `dlopen`ed privately by a Python extension, `ctypes` or a plugin), the policy is a
/// LevelDB object (made with LevelDB's own `leveldb_filterpolicy_create`) that
/// `leveldb_options_set_filter_policy` accepts and whose filters are built and
/// matched by this library. Otherwise it is this library's own, for the functions
/// here (it must not be given to a LevelDB loaded later). Every function here
/// accepts either. There is no limit on how many policies may be live.
///
/// Returns NULL when `bits_per_key` is negative (undefined in LevelDB), when memory
/// runs out, or (said once on stderr) when an object defines
/// `leveldb_filterpolicy_create` but none also defines `leveldb_filterpolicy_destroy`
/// (a NULL filter policy makes LevelDB run without filters: slower, never wrong).
/// Release the policy with `leveldb_filterpolicy_destroy`, after every database
/// using it is closed.
#[no_mangle]
pub extern "C" fn leveldb_filterpolicy_create_bloom(
    bits_per_key: c_int,
) -> *mut leveldb_filterpolicy_t {
    guard(ptr::null_mut, || {
        new_handle(self::bits_per_key(bits_per_key))
    })
}

/// Creates a policy of the legacy filter format, `"leveldb.BuiltinBloomFilter"`, the
/// name goleveldb and LevelDB before 1.18 write: with it, LevelDB 1.23 uses the
/// filters of their tables (which it otherwise ignores), and the filters it writes
/// are read by goleveldb and by LevelDB before 1.18, on x86 and on ARM.
///
/// Those writers disagree on the hash of keys whose last `length % 4` bytes include
/// one ≥ 0x80 (LevelDB issue 243: signed on x86 before 1.18, unsigned elsewhere), so
/// for such keys this policy sets the probe bits of both readings and answers "may
/// match" when either finds all its bits set. Other keys are hashed once, and their
/// filters equal goleveldb's byte for byte. Same sizing and k as
/// `leveldb_filterpolicy_create_bloom`.
///
/// Same rules as `leveldb_filterpolicy_create_bloom`: a LevelDB object when LevelDB is
/// loaded, however it was loaded (for `leveldb_options_set_filter_policy`), this
/// library's own otherwise; NULL for a negative `bits_per_key`, when memory runs out,
/// or when a LevelDB C API is loaded that cannot be used. Every function here accepts it, with the legacy semantics; release it
/// with `leveldb_filterpolicy_destroy` or `leveldb_bloom_policy_destroy`.
#[no_mangle]
pub extern "C" fn leveldb_bloom_legacy_policy_create(
    bits_per_key: c_int,
) -> *mut leveldb_filterpolicy_t {
    guard(ptr::null_mut, || {
        let bloom = u32::try_from(bits_per_key)
            .ok()
            .map(BloomFilterPolicy::legacy);
        new_handle(bloom)
    })
}

/// Creates a policy that is always this library's own object, never a LevelDB one,
/// whatever else is loaded: for direct use, not for LevelDB's options. Same rules as
/// `leveldb_filterpolicy_create_bloom`; LevelDB cannot shadow this name. Release it
/// with `leveldb_bloom_policy_destroy`, which is this library's whatever the link
/// order (a program's `leveldb_filterpolicy_destroy` may be LevelDB's).
#[no_mangle]
pub extern "C" fn leveldb_bloom_policy_create(bits_per_key: c_int) -> *mut leveldb_filterpolicy_t {
    guard(ptr::null_mut, || {
        self::bits_per_key(bits_per_key).map_or(ptr::null_mut(), new_own_handle)
    })
}

/// Releases a policy. NULL is ignored. When LevelDB is loaded, a pointer this library
/// did not return is taken to be a policy LevelDB made itself (its own bloom policy,
/// or one from `leveldb_filterpolicy_create`) and is passed on to LevelDB's own
/// `leveldb_filterpolicy_destroy`; without LevelDB, such a pointer is ignored.
///
/// # Safety
/// `policy` must be NULL or a live policy (this library's or, with LevelDB loaded,
/// LevelDB's), not used by any open database, and not used again afterwards.
#[no_mangle]
pub unsafe extern "C" fn leveldb_filterpolicy_destroy(policy: *mut leveldb_filterpolicy_t) {
    guard(|| (), || destroy(policy));
}

/// The same as `leveldb_filterpolicy_destroy`, under a name LevelDB cannot shadow.
///
/// # Safety
/// As for `leveldb_filterpolicy_destroy`.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_policy_destroy(policy: *mut leveldb_filterpolicy_t) {
    guard(|| (), || destroy(policy));
}

/// The policy's name, `"leveldb.BuiltinBloomFilter2"` (`"leveldb.BuiltinBloomFilter"`
/// for a policy from `leveldb_bloom_legacy_policy_create`): a static string, never
/// freed. LevelDB stores it with each filter block, and ignores filters of another
/// name.
/// Returns NULL for NULL or a pointer this library did not return.
///
/// # Safety
/// `policy` must be NULL or a policy that is not being destroyed concurrently.
#[no_mangle]
pub unsafe extern "C" fn leveldb_filterpolicy_name(
    policy: *const leveldb_filterpolicy_t,
) -> *const c_char {
    guard(ptr::null, || {
        // SAFETY: the caller's promise about `policy`.
        unsafe { policy_of(policy) }.map_or(ptr::null(), |bloom| name_of(bloom).as_ptr())
    })
}

/// # Safety
/// As for [`lookup_policy`].
unsafe fn policy_of<'a>(handle: *const leveldb_filterpolicy_t) -> Option<&'a BloomFilterPolicy> {
    // SAFETY: the caller's promise.
    unsafe { lookup_policy(handle) }.map(|policy| &policy.bloom)
}

/// Builds the filter for `num_keys` keys: exactly the bytes LevelDB's `CreateFilter`
/// appends to an empty string. Key i is `key_length_array[i]` bytes at
/// `key_array[i]`; duplicates are fine.
///
/// Returns a buffer from `malloc` that the caller releases with `free()`, and stores
/// its length in `*filter_length`.
///
/// Bad inputs never give a filter that could answer "no" wrongly:
/// - `filter_length` NULL: returns NULL; nothing is allocated.
/// - `policy` NULL or unknown, `num_keys < 0`, `key_array` or `key_length_array`
///   NULL while `num_keys > 0`, a NULL key with non-zero length, or a filter too large
///   to size or allocate: returns the 2-byte match-all filter `00 FF`, which every
///   LevelDB reader treats as "may match" for all keys.
/// - if even that cannot be allocated: returns NULL with `*filter_length = 0`.
///
/// `num_keys == 0` is valid (the arrays may then be NULL); a NULL key of length 0
/// is the empty key.
///
/// # Safety
/// Non-NULL arrays must hold `num_keys` entries, and each non-NULL key as many
/// readable bytes as its length.
#[no_mangle]
pub unsafe extern "C" fn leveldb_filterpolicy_create_filter(
    policy: *const leveldb_filterpolicy_t,
    key_array: *const *const c_char,
    key_length_array: *const size_t,
    num_keys: c_int,
    filter_length: *mut size_t,
) -> *mut c_char {
    let on_panic = || {
        // SAFETY: as below, with no policy: only the match-all filter is made.
        unsafe { create_filter(None, ptr::null(), ptr::null(), -1, filter_length) }
    };
    guard(on_panic, || {
        // SAFETY: the caller's promises, passed on.
        unsafe {
            create_filter(
                policy_of(policy),
                key_array,
                key_length_array,
                num_keys,
                filter_length,
            )
        }
    })
}

/// Whether `key` may be in `filter`: LevelDB's `KeyMayMatch`, for any bytes at all.
/// Returns 0 when the key is certainly absent, 1 when it may be present.
///
/// As LevelDB: a filter shorter than 2 bytes gives 0; a last (k) byte of 0 or above
/// 30 gives 1. The policy's own bits_per_key plays no part.
///
/// Bad inputs give 1 ("may match", never a false negative): `policy` NULL or
/// unknown, `key` NULL with `length > 0`, `filter` NULL with `filter_length > 0`.
/// `key` or `filter` may be NULL when its length is 0.
///
/// # Safety
/// Non-NULL `key` and `filter` must be readable for their lengths.
#[no_mangle]
pub unsafe extern "C" fn leveldb_filterpolicy_key_may_match(
    policy: *const leveldb_filterpolicy_t,
    key: *const c_char,
    length: size_t,
    filter: *const c_char,
    filter_length: size_t,
) -> u8 {
    guard(
        || 1,
        || {
            // SAFETY: the caller's promises, passed on.
            unsafe {
                match lookup_policy(policy) {
                    Some(policy) => key_may_match(policy, key, length, filter, filter_length),
                    None => 1,
                }
            }
        },
    )
}

/// `leveldb_filterpolicy_key_may_match` for `num_keys` keys at once: writes to
/// `results[i]` exactly what it returns for key i (`key_length_array[i]` bytes at
/// `key_array[i]`), 0 for certainly absent, 1 for may be present. Faster per key than
/// one call each: keys are hashed in groups (with AVX2 or AVX-512 where the CPU has
/// them; see `leveldb_bloom_simd_level`) and the filter's memory is fetched for a
/// group at a time. Allocates nothing.
///
/// Bad inputs never give a wrong 0:
/// - `results` NULL, or `num_keys` 0: writes nothing.
/// - `policy` NULL or unknown, `key_array` or `key_length_array` NULL, or `filter`
///   NULL with `filter_length > 0`: every result is 1.
/// - a NULL key with non-zero length: that key's result is 1.
///
/// A NULL key of length 0 is the empty key.
///
/// # Safety
/// `results` must be NULL or writable for `num_keys` bytes; non-NULL arrays must hold
/// `num_keys` entries, each non-NULL key as many readable bytes as its length, and a
/// non-NULL `filter` `filter_length` bytes. `policy` must not be destroyed meanwhile.
#[no_mangle]
pub unsafe extern "C" fn leveldb_filterpolicy_key_may_match_batch(
    policy: *const leveldb_filterpolicy_t,
    key_array: *const *const c_char,
    key_length_array: *const size_t,
    num_keys: size_t,
    filter: *const c_char,
    filter_length: size_t,
    results: *mut u8,
) {
    if num_keys == 0 || !can_slice(results, num_keys) {
        return;
    }
    // SAFETY: non-NULL and writable for `num_keys` bytes per the caller. Every result
    // starts as 1, so whatever is not answered below (a bad input, a panic) may match.
    let results = unsafe {
        ptr::write_bytes(results, 1, num_keys);
        std::slice::from_raw_parts_mut(results, num_keys)
    };
    guard(
        || (),
        || {
            // SAFETY: the caller's promises about the policy and every array.
            let (policy, filter, pointers, lengths) = unsafe {
                (
                    lookup_policy(policy),
                    bytes(filter, filter_length),
                    array(key_array, num_keys),
                    array(key_length_array, num_keys),
                )
            };
            let (Some(policy), Some(filter), Some(pointers), Some(lengths)) =
                (policy, filter, pointers, lengths)
            else {
                return;
            };
            // A bad key is queried as the empty key, and its result is then set to 1.
            let any_bad = std::cell::Cell::new(false);
            let keys = pointers.iter().zip(lengths).map(|(&key, &length)| {
                // SAFETY: the caller's promise about each key.
                unsafe { bytes(key, length) }.unwrap_or_else(|| {
                    any_bad.set(true);
                    &[]
                })
            });
            Filter::cached(filter, &policy.reciprocals, policy.bloom.format()).may_contain_each(
                keys,
                results,
                SimdLevel::active(),
            );
            if any_bad.get() {
                for ((&key, &length), result) in pointers.iter().zip(lengths).zip(results) {
                    if !can_slice(key, length) && length != 0 {
                        *result = 1;
                    }
                }
            }
        },
    );
}

/// This library's version, `"MAJOR.MINOR.PATCH"` (Cargo.toml's), a static string,
/// never freed. The header's `LEVELDB_BLOOM_VERSION` is the version it was generated
/// for; a program can compare the two at start-up.
#[no_mangle]
pub extern "C" fn leveldb_bloom_version() -> *const c_char {
    const VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(version) => version,
            Err(_) => panic!("a version has no NUL"),
        };
    VERSION.as_ptr()
}

/// The SIMD level this process hashes keys with in `leveldb_filterpolicy_key_may_match_batch`
/// and when building filters: `"avx512"`, `"avx2"` or `"scalar"`, a static string.
///
/// It is the best the CPU has, unless the environment variable `LEVELDB_BLOOM_SIMD`
/// (read once, at the first use) names a lower level: `scalar`, `avx2` or `avx512`.
/// A level the CPU lacks gives the best one below it; other values are ignored. Every
/// level gives the same results.
#[no_mangle]
pub extern "C" fn leveldb_bloom_simd_level() -> *const c_char {
    guard(ptr::null, || SimdLevel::active().name().as_ptr())
}

/// The length in bytes of the filter `leveldb_filterpolicy_create_filter` would build
/// for `num_keys` keys (k byte included), so a caller can provide the memory to
/// `leveldb_bloom_write_filter`. Returns 0 for NULL or unknown `policy`, or a filter
/// too large to address.
///
/// # Safety
/// `policy` must be NULL or a policy that is not being destroyed concurrently.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_filter_length(
    policy: *const leveldb_filterpolicy_t,
    num_keys: size_t,
) -> size_t {
    guard(
        || 0,
        || {
            // SAFETY: the caller's promise about `policy`.
            unsafe { policy_of(policy) }
                .and_then(|bloom| bloom.filter_len(num_keys))
                .unwrap_or(0)
        },
    )
}

/// Builds the filter for `num_keys` keys into the caller's `out`, without
/// allocating. `out_length` must be exactly `leveldb_bloom_filter_length(policy,
/// num_keys)`.
///
/// Returns how many bytes at the start of `out` now hold a filter: `out_length` on
/// success. On a bad input (as for `leveldb_filterpolicy_create_filter`, or a wrong
/// `out_length`) it writes the 2-byte match-all filter `00 FF` at the start of `out`,
/// leaves the rest of `out` as it was, and returns 2; if `out` is NULL or shorter
/// than 2 bytes, it writes nothing and returns 0.
///
/// # Safety
/// As for `leveldb_filterpolicy_create_filter`; a non-NULL `out` must be writable for
/// `out_length` bytes.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_write_filter(
    policy: *const leveldb_filterpolicy_t,
    key_array: *const *const c_char,
    key_length_array: *const size_t,
    num_keys: size_t,
    out: *mut c_char,
    out_length: size_t,
) -> size_t {
    // Too short even for the match-all filter (and so for any filter): untouched.
    if out.is_null() || out_length < MATCH_ALL_FILTER.len() || out_length > isize::MAX as usize {
        return 0;
    }
    let written = guard(
        || false,
        || {
            // SAFETY: the caller's promises about the arrays, passed on.
            let keys = unsafe { Keys::new(key_array, key_length_array, num_keys) };
            // SAFETY: the caller's promise about `policy`.
            let bloom = unsafe { policy_of(policy) };
            let Some((bloom, keys)) = bloom.zip(keys) else {
                return false;
            };
            if bloom.filter_len(keys.len()) != Some(out_length) {
                return false;
            }
            // SAFETY: non-NULL and writable for `out_length` bytes per the caller; the
            // bytes may be uninitialised, so they are zeroed before a slice is made.
            let out = unsafe {
                ptr::write_bytes(out, 0, out_length);
                std::slice::from_raw_parts_mut(out.cast::<u8>(), out_length)
            };
            bloom.write_filter(keys.iter(), out).is_ok()
        },
    );
    if written {
        out_length
    } else {
        // SAFETY: `out` is writable for at least these 2 bytes, checked above.
        unsafe { ptr::copy_nonoverlapping(MATCH_ALL_FILTER.as_ptr(), out.cast(), 2) };
        MATCH_ALL_FILTER.len()
    }
}
