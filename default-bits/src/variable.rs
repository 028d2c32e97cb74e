//! `LEVELDB_BLOOM_DEFAULT_BITS`: read once, as the object starts (its ELF
//! constructor), and ignored in a secure-execution process (setuid, setgid, file
//! capabilities: `secure_getenv`); a bad value is said once, and only when a
//! database is opened, quoted cut to [`QUOTED`] characters.

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::OnceLock;

/// The variable.
pub(crate) const VARIABLE: &CStr = c"LEVELDB_BLOOM_DEFAULT_BITS";

/// How much of a bad value is quoted.
const QUOTED: usize = 32;

/// Its value, or 0 when it is unset, empty, ignored or bad.
static BITS: AtomicU32 = AtomicU32::new(0);
/// What to say at the first open: a bad value's line.
static BAD_VALUE: OnceLock<String> = OnceLock::new();

extern "C" {
    /// glibc's `getenv` that answers NULL in a secure-execution process.
    fn secure_getenv(name: *const std::ffi::c_char) -> *const std::ffi::c_char;
}

/// Reads the variable. Called once, from the object's ELF constructor, before any
/// thread of the program can change the environment.
pub(crate) fn read() {
    // SAFETY: a NUL-terminated name; the value is copied before this returns.
    let value = unsafe { secure_getenv(VARIABLE.as_ptr()) };
    if value.is_null() {
        return;
    }
    // SAFETY: a NUL-terminated string of the environment.
    let value = unsafe { CStr::from_ptr(value) }.to_string_lossy();
    match parse_bits(&value) {
        Ok(bits) => BITS.store(bits, Ordering::Relaxed),
        Err(None) => {}
        Err(Some(why)) => {
            let quoted: String = value.chars().take(QUOTED).collect();
            let cut = if quoted.len() < value.len() {
                "…"
            } else {
                ""
            };
            let _ = BAD_VALUE.set(format!(
                "leveldb-bloom: {}=\"{}{cut}\": {why}: ignored\n",
                VARIABLE.to_string_lossy(),
                quoted.escape_debug()
            ));
        }
    }
}

/// The bits per key to give databases opened without a policy, if any; at the
/// first call, says a bad value once.
pub(crate) fn bits() -> Option<u32> {
    static SAID: AtomicBool = AtomicBool::new(false);
    if let Some(line) = BAD_VALUE.get() {
        if !SAID.swap(true, Ordering::Relaxed) {
            loader::say(line);
        }
    }
    Some(BITS.load(Ordering::Relaxed)).filter(|&bits| bits != 0)
}

/// The variable's value as bits per key; `Err(None)` for an empty value (as unset),
/// else why it is refused.
fn parse_bits(value: &str) -> Result<u32, Option<&'static str>> {
    if value.is_empty() {
        return Err(None);
    }
    match value.parse::<u32>() {
        Ok(bits @ 1..=100) if value.bytes().all(|b| b.is_ascii_digit()) => Ok(bits),
        _ => Err(Some("not a whole number of bits per key from 1 to 100")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_bits;

    #[test]
    fn bits_from_1_to_100_and_nothing_else() {
        assert_eq!(parse_bits("10"), Ok(10));
        assert_eq!(parse_bits("1"), Ok(1));
        assert_eq!(parse_bits("100"), Ok(100));
        assert_eq!(parse_bits(""), Err(None));
        for refused in [
            "0",
            "101",
            "-5",
            "+5",
            " 10",
            "10 ",
            "ten",
            "1e1",
            "99999999999",
        ] {
            assert!(
                parse_bits(refused).is_err_and(|why| why.is_some()),
                "{refused}"
            );
        }
    }
}
