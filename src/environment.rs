//! The library's environment variables (`LEVELDB_BLOOM_STATS`,
//! `LEVELDB_BLOOM_DEFAULT_BITS`): read once, by the library's ELF constructors, and
//! ignored in a secure-execution process (setuid, setgid, file capabilities:
//! `AT_SECURE`), where they are another user's say.

use std::ffi::CStr;

/// `LEVELDB_BLOOM_DEFAULT_BITS` (`default_bits`), also named by the statistics.
pub(crate) const DEFAULT_BITS: &CStr = c"LEVELDB_BLOOM_DEFAULT_BITS";

/// The value of `name`, unless it is unset or the process runs with secure
/// execution. For the library's constructors only: at start no other thread of this
/// library runs, and the value is used before anything can change the environment.
pub(crate) fn variable(name: &CStr) -> Option<&'static CStr> {
    // SAFETY: getauxval reads the auxiliary vector the kernel gave the process.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        return None;
    }
    // SAFETY: a NUL-terminated name; see above for the environment.
    let value = unsafe { libc::getenv(name.as_ptr()) };
    // SAFETY: getenv returns NULL or a NUL-terminated string, which stays as long as
    // nothing changes the environment.
    (!value.is_null()).then(|| unsafe { CStr::from_ptr(value) })
}
