//! The exported functions that make, name and release policies, and tell about the
//! library: each one panic boundary around the layers below.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;

use super::super::dropin::{self, leveldb_bloom_string_append_t, Creator};
use super::super::registry::policy_of;
use super::super::{c_text, guard, leveldb_filterpolicy_t, simd};
use bloom::{BloomFilterPolicy, Format};

/// Creates a bloom filter policy, as LevelDB's `leveldb_filterpolicy_create_bloom`:
/// each key gets `bits_per_key` bits and k = bits_per_key × 0.69 probes (truncated,
/// clamped to 1..=30).
///
/// The policy is an object of this library's own with LevelDB's `FilterPolicy` ABI:
/// `leveldb_options_set_filter_policy` accepts it (with LevelDB linked, or loaded
/// privately by a Python extension, `ctypes` or a plugin), and so does every
/// function here. It needs nothing of LevelDB, and this library never loads one.
/// There is no limit on how many policies may be live.
///
/// Returns NULL when `bits_per_key` is negative (undefined in LevelDB) or memory
/// runs out (a NULL filter policy makes LevelDB run without filters: slower, never
/// wrong). Release the policy with `leveldb_filterpolicy_destroy`, after every
/// database using it is closed.
#[no_mangle]
#[cfg_attr(caller_asm, unsafe(naked))]
pub extern "C" fn leveldb_filterpolicy_create_bloom(
    bits_per_key: c_int,
) -> *mut leveldb_filterpolicy_t {
    loader::with_caller!(c_api_policy, 1, bits_per_key)
}

extern "C" fn c_api_policy(bits_per_key: c_int, caller: usize) -> *mut leveldb_filterpolicy_t {
    new_policy(bits_per_key, Format::Current, Creator::CApi, caller)
}

/// Creates a policy of the legacy filter format, `"leveldb.BuiltinBloomFilter"`, the
/// name goleveldb and LevelDB before 1.18 write: with it, LevelDB 1.23 uses the
/// filters of their tables (which it otherwise ignores), and the filters it writes
/// are read by goleveldb and by LevelDB before 1.18, on x86 and on ARM.
///
/// Those writers disagree on the hash of keys whose last `length % 4` bytes include
/// one ≥ 0x80 (signed on x86 before 1.18, unsigned elsewhere), so
/// for such keys this policy sets the probe bits of both readings and answers "may
/// match" when either finds all its bits set. Other keys are hashed once, and their
/// filters equal goleveldb's byte for byte. Same sizing and k as
/// `leveldb_filterpolicy_create_bloom`.
///
/// Same rules as `leveldb_filterpolicy_create_bloom` (an object LevelDB's options
/// accept; NULL for a negative `bits_per_key` or when memory runs out). Every
/// function here accepts it, with the legacy semantics; release it with
/// `leveldb_filterpolicy_destroy` or `leveldb_bloom_policy_destroy`.
#[no_mangle]
#[cfg_attr(caller_asm, unsafe(naked))]
pub extern "C" fn leveldb_bloom_legacy_policy_create(
    bits_per_key: c_int,
) -> *mut leveldb_filterpolicy_t {
    loader::with_caller!(own_legacy_policy, 1, bits_per_key)
}

extern "C" fn own_legacy_policy(bits_per_key: c_int, caller: usize) -> *mut leveldb_filterpolicy_t {
    new_policy(bits_per_key, Format::Legacy, Creator::Own, caller)
}

/// Creates a policy, exactly as `leveldb_filterpolicy_create_bloom`, under a name
/// LevelDB cannot shadow: whatever the link order, it is this library's. Release it
/// with `leveldb_bloom_policy_destroy`, which is this library's in every link order
/// too (a program's `leveldb_filterpolicy_destroy` may be LevelDB's, which releases
/// it as well).
#[no_mangle]
#[cfg_attr(caller_asm, unsafe(naked))]
pub extern "C" fn leveldb_bloom_policy_create(bits_per_key: c_int) -> *mut leveldb_filterpolicy_t {
    loader::with_caller!(own_policy, 1, bits_per_key)
}

extern "C" fn own_policy(bits_per_key: c_int, caller: usize) -> *mut leveldb_filterpolicy_t {
    new_policy(bits_per_key, Format::Current, Creator::Own, caller)
}

/// Creates a policy, as `leveldb_bloom_policy_create`, for a C++ program that gives it
/// to LevelDB's C++ API itself (`Options::filter_policy`): the C++ header's
/// `leveldb_bloom::NewBloomFilterPolicy` calls it. The policy is this library's own
/// object with LevelDB's `FilterPolicy` ABI; its `CreateFilter` grows the caller's
/// `std::string` with `append`, a function compiled in the program with the
/// program's own `std::string` (see `leveldb_bloom_string_append_t`), so it needs no
/// evidence of the ABI: it works in every program, LevelDB and the C++ library
/// linked statically, `-static`, either libstdc++ ABI or libc++.
///
/// Give the policy only to a LevelDB whose `std::string` is the one `append` grows:
/// through the program's own `Options` it is (LevelDB's C++ names carry the ABI, so a
/// program links only with a LevelDB of its own).
///
/// Returns NULL when `append` is NULL, `bits_per_key` is negative (undefined in
/// LevelDB) or memory runs out. Release the policy with C++ `delete` (as a policy of
/// LevelDB's own), or with `leveldb_bloom_policy_destroy`, after every database using
/// it is closed; every function here accepts it.
///
/// # Safety
/// `append` must be NULL or behave as `leveldb_bloom_string_append_t` says for every
/// `std::string` the policy's `CreateFilter` is given.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_cxx_policy_create(
    bits_per_key: c_int,
    append: leveldb_bloom_string_append_t,
) -> *mut leveldb_filterpolicy_t {
    // SAFETY: the caller's promise about `append`.
    new_policy_with(bits_per_key, Format::Current, |bloom| unsafe {
        dropin::new_cxx_policy(bloom, append)
    })
}

/// The same for the legacy filter format (see `leveldb_bloom_legacy_policy_create`):
/// the C++ header's `leveldb_bloom::NewLegacyBloomFilterPolicy` calls it. Same
/// results and ownership as `leveldb_bloom_cxx_policy_create`.
///
/// # Safety
/// As for `leveldb_bloom_cxx_policy_create`.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_cxx_legacy_policy_create(
    bits_per_key: c_int,
    append: leveldb_bloom_string_append_t,
) -> *mut leveldb_filterpolicy_t {
    // SAFETY: the caller's promise about `append`.
    new_policy_with(bits_per_key, Format::Legacy, |bloom| unsafe {
        dropin::new_cxx_policy(bloom, append)
    })
}

/// The entry points whose policy's `CreateFilter` appends to the string of the
/// LevelDB their caller (the code at `caller`) binds to: [`dropin::new_policy`].
fn new_policy(
    bits_per_key: c_int,
    format: Format,
    creator: Creator,
    caller: usize,
) -> *mut leveldb_filterpolicy_t {
    new_policy_with(bits_per_key, format, |bloom| {
        dropin::new_policy(bloom, creator, caller)
    })
}

/// Every entry point that makes a policy: one panic boundary around `make`, given the
/// checked arguments.
fn new_policy_with(
    bits_per_key: c_int,
    format: Format,
    make: impl FnOnce(BloomFilterPolicy) -> *mut leveldb_filterpolicy_t,
) -> *mut leveldb_filterpolicy_t {
    guard(ptr::null_mut, || {
        // A negative bits per key is undefined in LevelDB.
        u32::try_from(bits_per_key).map_or(ptr::null_mut(), |bits_per_key| {
            make(BloomFilterPolicy::with_format(bits_per_key, format))
        })
    })
}

/// Creates a policy, as `leveldb_bloom_policy_create`, for the LevelDB whose code
/// lies at `leveldb_code` (any address in it: one of its functions), for a library
/// that hands databases a policy they were opened without
/// (`libleveldb_bloom_default_bits.so`): this library's object where that LevelDB's
/// exported names show one of libstdc++'s two `std::string` ABIs, else that
/// LevelDB's own bloom policy (its own `NewBloomFilterPolicy`), else NULL. Programs
/// use the other creators. Release it with `leveldb_filterpolicy_destroy` (or C++
/// `delete`), after every database using it is closed.
#[no_mangle]
pub extern "C" fn leveldb_bloom_policy_create_for(
    bits_per_key: c_int,
    leveldb_code: *const c_void,
) -> *mut leveldb_filterpolicy_t {
    new_policy_with(bits_per_key, Format::Current, |bloom| {
        dropin::new_policy_for(bloom, leveldb_code as usize)
    })
}

/// Releases a policy. NULL is ignored. A pointer this library did not return is
/// released as LevelDB's own `leveldb_filterpolicy_destroy` releases it, by C++
/// `delete` through its virtual destructor, when it is such an object of a loaded
/// library (a policy LevelDB made itself: its own bloom policy, or one from
/// `leveldb_filterpolicy_create`); anything else is ignored.
///
/// # Safety
/// `policy` must be NULL or a live policy (this library's or LevelDB's), not used by
/// any open database, and not used again afterwards; any other pointer must be
/// readable for a pointer.
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
        unsafe { policy_of(policy) }.map_or(ptr::null(), |policy| {
            c_text::policy_name(policy.bloom.format()).as_ptr()
        })
    })
}

/// This library's version, `"MAJOR.MINOR.PATCH"` (Cargo.toml's), a static string,
/// never freed. The header's `LEVELDB_BLOOM_VERSION` is the version it was generated
/// for; a program can compare the two at start-up.
#[no_mangle]
pub extern "C" fn leveldb_bloom_version() -> *const c_char {
    guard(ptr::null, || c_text::version().as_ptr())
}

/// The SIMD level this process hashes keys with in `leveldb_bloom_key_may_match_batch`
/// and when building filters: `"avx512"`, `"avx2"` or `"scalar"`, a static string.
///
/// It is the best the CPU has, unless the environment variable `LEVELDB_BLOOM_SIMD`
/// (read once, as the library starts; ignored in a setuid or setgid process) names a
/// lower level: `scalar`, `avx2` or `avx512`. A level the CPU lacks gives the best
/// one below it; other values are ignored. Every level gives the same results.
#[no_mangle]
pub extern "C" fn leveldb_bloom_simd_level() -> *const c_char {
    guard(ptr::null, || c_text::simd_level(simd::level()).as_ptr())
}

/// LevelDB's C++ `leveldb::NewBloomFilterPolicy(int)`, which LevelDB's own
/// `leveldb_filterpolicy_create_bloom` also calls through the dynamic linker: what
/// the LevelDB its caller binds to would return, as this library's object whenever
/// it can write that LevelDB's `std::string` (see `docs/swap.md`). NULL when memory
/// runs out, or for a negative `bits_per_key` (undefined in LevelDB).
///
/// cbindgen:ignore
#[unsafe(export_name = "_ZN7leveldb20NewBloomFilterPolicyEi")]
#[cfg_attr(caller_asm, unsafe(naked))]
pub extern "C" fn leveldb_bloom_cxx_new_bloom_filter_policy(bits_per_key: c_int) -> *const c_void {
    loader::with_caller!(cxx_api_policy, 1, bits_per_key)
}

extern "C" fn cxx_api_policy(bits_per_key: c_int, caller: usize) -> *const c_void {
    new_policy(bits_per_key, Format::Current, Creator::CxxApi, caller)
        .cast_const()
        .cast()
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
/// `LEVELDB_BLOOM_SWAP_C_API` and `LEVELDB_BLOOM_SWAP_CXX_API`, each set when the
/// name resolves to this library in the global scope, which every object searches
/// first, and LevelDB is in the process: in the global scope (linked, or loaded
/// `RTLD_GLOBAL`), or in a loaded object that defines its API (a LevelDB loaded
/// privately by a Python extension, `ctypes` or a plugin, or built into another
/// library that exports it).
///
/// - 3: both names are swapped: every bloom policy LevelDB makes, through either
///   API, builds and matches its filters here (`LD_PRELOAD`, or linked with
///   `-lleveldb_bloom` before `-lleveldb`).
/// - 2: only `leveldb::NewBloomFilterPolicy` is swapped; since LevelDB's own
///   `leveldb_filterpolicy_create_bloom` calls it, C programs are swapped too.
/// - 1: only the C name is swapped (not seen with a whole libleveldb_bloom).
/// - 0: nothing is swapped, or nothing shows it: LevelDB is not in the process
///   (yet), LevelDB was linked before this library, this library was `dlopen`ed
///   without `RTLD_GLOBAL`, or it was linked statically (the linker chose then, and
///   `nm` shows it). Nothing fails either: LevelDB uses its own policy.
///
/// The answer can change when LevelDB is loaded later.
#[no_mangle]
pub extern "C" fn leveldb_bloom_swap_status() -> c_int {
    guard(
        || 0,
        || dropin::swap_status(LEVELDB_BLOOM_SWAP_C_API, LEVELDB_BLOOM_SWAP_CXX_API),
    )
}
