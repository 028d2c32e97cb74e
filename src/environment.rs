//! The environment variables this library reads (`LEVELDB_BLOOM_STATS`,
//! `LEVELDB_BLOOM_SIMD`): each once, as the library
//! starts (an ELF constructor), and none in a secure-execution process (setuid,
//! setgid, file capabilities: `AT_SECURE`), where the environment is another user's
//! say.

use std::ffi::{CStr, CString};

/// `LEVELDB_BLOOM_DEFAULT_BITS` (`libleveldb_bloom_default_bits.so`'s), named by the
/// statistics.
pub(crate) const DEFAULT_BITS: &CStr = c"LEVELDB_BLOOM_DEFAULT_BITS";

/// The value of the variable `name`, when it is set and not empty and the process is
/// not in secure execution.
///
/// # Safety
/// Only from this library's ELF constructors, as it starts: no other thread of this
/// library runs, and the value is copied before anything of it can change the
/// environment.
pub(crate) unsafe fn variable(name: &CStr) -> Option<CString> {
    // SAFETY: getauxval reads the auxiliary vector the kernel gave the process.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        return None;
    }
    // SAFETY: a NUL-terminated name, read as the library starts (the caller's
    // promise); the value is copied before this returns.
    let value = unsafe { libc::getenv(name.as_ptr()) };
    if value.is_null() {
        return None;
    }
    // SAFETY: getenv returns a NUL-terminated string.
    let value = unsafe { CStr::from_ptr(value) };
    (!value.is_empty()).then(|| value.to_owned())
}
