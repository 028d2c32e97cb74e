//! `LEVELDB_BLOOM_SIMD`: the SIMD level this library hashes keys with, when it builds
//! filters and answers batches. The best the CPU has, unless the variable, read once
//! as the library starts, names a level (`scalar`, `avx2` or `avx512`): then the best
//! the CPU has at or below it, so that every level's code can be run and tested on a
//! CPU that has them all. Other values, and the variable in a secure-execution
//! process, are ignored (see `environment`). Every level gives the same results.

use std::ffi::CStr;
use std::sync::atomic::{AtomicU8, Ordering};

use super::{environment, guard};
use bloom::{SimdLevel, SIMD_LEVELS};

const VARIABLE: &CStr = c"LEVELDB_BLOOM_SIMD";

/// The index in [`SIMD_LEVELS`] of the level the variable named, or [`BEST`]. An
/// atomic rather than a `OnceLock`: set once, before any call, and never waited for.
static REQUESTED: AtomicU8 = AtomicU8::new(BEST);
const BEST: u8 = u8::MAX;

/// The library's ELF constructor that reads the variable.
extern "C" fn read_variable() {
    guard(
        || (),
        || {
            // SAFETY: the library's ELF constructor, as `variable` requires.
            let Some(value) = (unsafe { environment::variable(VARIABLE) }) else {
                return;
            };
            let named = SIMD_LEVELS
                .iter()
                .position(|name| name.as_bytes() == value.to_bytes());
            if let Some(index) = named {
                REQUESTED.store(index as u8, Ordering::Relaxed);
            }
        },
    )
}

#[used]
#[link_section = ".init_array"]
static READ_VARIABLE: extern "C" fn() = read_variable;

/// The level this library hashes keys with: the core is told it at every call that
/// hashes in bulk.
pub(crate) fn level() -> SimdLevel {
    SIMD_LEVELS
        .get(usize::from(REQUESTED.load(Ordering::Relaxed)))
        .and_then(|name| SimdLevel::up_to(name))
        .unwrap_or_else(SimdLevel::best)
}
