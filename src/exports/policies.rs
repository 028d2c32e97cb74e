//! The exported functions that make, name and release policies, and tell about the
//! library: each one panic boundary around the layers below.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::ptr;

use super::super::{dropin, guard, leveldb_filterpolicy_t, ops};
use bloom::Format;

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
        ops::bits_per_key(bits_per_key, Format::Current)
            .map_or(ptr::null_mut(), dropin::new_c_policy)
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
        ops::bits_per_key(bits_per_key, Format::Legacy)
            .map_or(ptr::null_mut(), dropin::new_c_policy)
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
        ops::bits_per_key(bits_per_key, Format::Current)
            .map_or(ptr::null_mut(), ops::new_own_handle)
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
    guard(|| (), || dropin::destroy(policy));
}

/// The same as `leveldb_filterpolicy_destroy`, under a name LevelDB cannot shadow.
///
/// # Safety
/// As for `leveldb_filterpolicy_destroy`.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_policy_destroy(policy: *mut leveldb_filterpolicy_t) {
    guard(|| (), || dropin::destroy(policy));
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
pub unsafe extern "C" fn leveldb_bloom_policy_name(
    policy: *const leveldb_filterpolicy_t,
) -> *const c_char {
    guard(ptr::null, || {
        // SAFETY: the caller's promise about `policy`.
        unsafe { ops::policy_of(policy) }.map_or(ptr::null(), |bloom| ops::name_of(bloom).as_ptr())
    })
}

/// This library's version, `"MAJOR.MINOR.PATCH"` (Cargo.toml's), a static string,
/// never freed. The header's `LEVELDB_BLOOM_VERSION` is the version it was generated
/// for; a program can compare the two at start-up.
#[no_mangle]
pub extern "C" fn leveldb_bloom_version() -> *const c_char {
    // Checked when compiled: a version has no NUL.
    const VERSION: &CStr =
        match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
            Ok(version) => version,
            Err(_) => panic!("a version has no NUL"),
        };
    guard(ptr::null, || VERSION.as_ptr())
}

/// The SIMD level this process hashes keys with in `leveldb_bloom_key_may_match_batch`
/// and when building filters: `"avx512"`, `"avx2"` or `"scalar"`, a static string.
///
/// It is the best the CPU has, unless the environment variable `LEVELDB_BLOOM_SIMD`
/// (read once, at the first use) names a lower level: `scalar`, `avx2` or `avx512`.
/// A level the CPU lacks gives the best one below it; other values are ignored. Every
/// level gives the same results.
#[no_mangle]
pub extern "C" fn leveldb_bloom_simd_level() -> *const c_char {
    guard(ptr::null, || bloom::simd_level().as_ptr())
}

/// LevelDB's C++ `leveldb::NewBloomFilterPolicy(int)`, which LevelDB's own
/// `leveldb_filterpolicy_create_bloom` also calls through the dynamic linker. The
/// object is LevelDB's `leveldb_filterpolicy_t`, which derives from
/// `leveldb::FilterPolicy` alone, so the pointer is also the base's; `delete` frees it.
///
/// Only LevelDB can make this object, so when LevelDB is not in the process (a
/// program linked with `--as-needed` whose only LevelDB symbol is this one loses
/// `-lleveldb`), LevelDB is loaded by its soname. NULL only when that fails (said
/// once on stderr, with the fix), when memory runs out, or for a negative
/// `bits_per_key` (undefined in LevelDB).
///
/// cbindgen:ignore
#[export_name = "_ZN7leveldb20NewBloomFilterPolicyEi"]
pub extern "C" fn leveldb_bloom_cxx_new_bloom_filter_policy(bits_per_key: c_int) -> *const c_void {
    guard(ptr::null, || {
        ops::bits_per_key(bits_per_key, Format::Current)
            .map_or(ptr::null_mut(), dropin::new_cxx_policy)
            .cast_const()
            .cast()
    })
}

/// Set in `leveldb_bloom_swap_status` when `leveldb_filterpolicy_create_bloom`, as
/// the dynamic linker binds it for the program and for every object it loads, is
/// this library's.
pub const LEVELDB_BLOOM_SWAP_C_API: c_int = 1;
/// Set in `leveldb_bloom_swap_status` when `leveldb::NewBloomFilterPolicy`, as the
/// dynamic linker binds it for the program and for every object it loads (LevelDB's
/// own `leveldb_filterpolicy_create_bloom` included), is this library's.
pub const LEVELDB_BLOOM_SWAP_CXX_API: c_int = 2;

/// Whether the swap is in effect, read from inside the process: a bit mask of
/// `LEVELDB_BLOOM_SWAP_C_API` and `LEVELDB_BLOOM_SWAP_CXX_API`, each set when LevelDB
/// is loaded (linked, or `dlopen`ed privately by a Python extension, `ctypes` or a
/// plugin) and the name resolves to this library in the global scope, which every
/// object searches first.
///
/// - 3: both names are swapped: every bloom policy LevelDB makes, through either
///   API, builds and matches its filters here (`LD_PRELOAD`, or linked with
///   `-lleveldb_bloom` before `-lleveldb`).
/// - 2: only `leveldb::NewBloomFilterPolicy` is swapped; since LevelDB's own
///   `leveldb_filterpolicy_create_bloom` calls it, C programs are swapped too.
/// - 1: only the C name is swapped (not seen with a whole libleveldb_bloom).
/// - 0: nothing is swapped: LevelDB is not loaded (yet), LevelDB was linked before
///   this library, or this library was `dlopen`ed without `RTLD_GLOBAL`. Nothing
///   fails either: LevelDB uses its own policy.
///
/// The answer can change when LevelDB is loaded later.
#[no_mangle]
pub extern "C" fn leveldb_bloom_swap_status() -> c_int {
    guard(
        || 0,
        || dropin::swap_status(LEVELDB_BLOOM_SWAP_C_API, LEVELDB_BLOOM_SWAP_CXX_API),
    )
}

/// Alias of [`leveldb_bloom_policy_name`], under the name of LevelDB's C API family it
/// was first given. A future LevelDB could define that name; new code uses the
/// `leveldb_bloom_` one.
///
/// # Safety
/// As for `leveldb_bloom_policy_name`.
#[no_mangle]
pub unsafe extern "C" fn leveldb_filterpolicy_name(
    policy: *const leveldb_filterpolicy_t,
) -> *const c_char {
    // SAFETY: the caller's promise, passed on.
    unsafe { leveldb_bloom_policy_name(policy) }
}
