//! `LEVELDB_BLOOM_SIMD`: the SIMD level this library hashes keys with, when it builds
//! filters and answers batches. The best the CPU has, unless the variable, read once
//! as the library starts, names a level (`scalar`, `avx2` or `avx512`): then the best
//! the CPU has at or below it, so that every level's code can be run and tested on a
//! CPU that has them all. Other values, and the variable in a secure-execution
//! process, are ignored (see `environment`). Every level gives the same results.

use std::ffi::CStr;
use std::sync::OnceLock;

use super::{environment, guard};
use bloom::{SimdLevel, SIMD_LEVELS};

const VARIABLE: &CStr = c"LEVELDB_BLOOM_SIMD";

/// The level, resolved once by the library's constructor (the variable read, the CPU
/// asked): every call then reads it without waiting. Never set only if the
/// constructor did not run; then each call resolves the best level itself.
static LEVEL: OnceLock<SimdLevel> = OnceLock::new();

/// The library's ELF constructor that reads the variable.
extern "C" fn read_variable() {
    guard(
        || (),
        || {
            // SAFETY: the library's ELF constructor, as `variable` requires.
            let value = unsafe { environment::variable(VARIABLE) };
            let named = value.and_then(|value| {
                SIMD_LEVELS
                    .iter()
                    .find(|name| name.as_bytes() == value.to_bytes())
            });
            let level = named.and_then(|name| SimdLevel::up_to(name));
            // Set once: nothing else sets it.
            let _ = LEVEL.set(level.unwrap_or_else(SimdLevel::best));
        },
    )
}

#[used]
#[link_section = ".init_array"]
static READ_VARIABLE: extern "C" fn() = read_variable;

/// The level this library hashes keys with: the core is told it at every call that
/// hashes in bulk.
#[inline]
pub(crate) fn level() -> SimdLevel {
    LEVEL.get().copied().unwrap_or_else(SimdLevel::best)
}
