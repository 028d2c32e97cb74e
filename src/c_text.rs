//! The static C strings the exports return, made when compiled from the core's
//! text: the policy names, the SIMD levels and the version, each written once.

use std::ffi::CStr;

use bloom::{Format, SimdLevel, LEGACY_POLICY_NAME, POLICY_NAME, SIMD_LEVELS};

/// Room for the longest text and its NUL.
const ROOM: usize = 32;

/// `text` and a NUL, padded with NULs (checked when compiled: no NUL in `text`,
/// which fits in [`ROOM`]).
const fn nul_padded(text: &str) -> [u8; ROOM] {
    let bytes = text.as_bytes();
    assert!(bytes.len() < ROOM, "a C string fits its room");
    let mut padded = [0; ROOM];
    let mut i = 0;
    while i < bytes.len() {
        assert!(bytes[i] != 0, "a C string has no NUL inside");
        padded[i] = bytes[i];
        i += 1;
    }
    padded
}

/// The C string at the start of `padded` (made by [`nul_padded`]).
const fn c_str(padded: &'static [u8; ROOM]) -> &'static CStr {
    match CStr::from_bytes_until_nul(padded) {
        Ok(text) => text,
        Err(_) => panic!("nul_padded ends with a NUL"),
    }
}

static POLICY_NAMES: [[u8; ROOM]; 2] = [nul_padded(POLICY_NAME), nul_padded(LEGACY_POLICY_NAME)];
static LEVELS: [[u8; ROOM]; SIMD_LEVELS.len()] = {
    let mut levels = [[0; ROOM]; SIMD_LEVELS.len()];
    let mut i = 0;
    while i < levels.len() {
        levels[i] = nul_padded(SIMD_LEVELS[i]);
        i += 1;
    }
    levels
};
static VERSION: [u8; ROOM] = nul_padded(env!("CARGO_PKG_VERSION"));

/// The name stored with filter blocks of `format`.
pub(crate) fn policy_name(format: Format) -> &'static CStr {
    c_str(match format {
        Format::Current => &POLICY_NAMES[0],
        Format::Legacy => &POLICY_NAMES[1],
    })
}

/// The name of `level`.
pub(crate) fn simd_level(level: SimdLevel) -> &'static CStr {
    let index = SIMD_LEVELS.iter().position(|name| *name == level.name());
    c_str(&LEVELS[index.unwrap_or(0)])
}

/// This library's version (its Cargo.toml's).
pub(crate) fn version() -> &'static CStr {
    c_str(&VERSION)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_text_as_a_c_string() {
        assert_eq!(policy_name(Format::Current).to_str(), Ok(POLICY_NAME));
        assert_eq!(policy_name(Format::Legacy).to_str(), Ok(LEGACY_POLICY_NAME));
        for name in SIMD_LEVELS {
            let level = SimdLevel::up_to(name).unwrap();
            assert_eq!(simd_level(level).to_str(), Ok(level.name()));
        }
        assert_eq!(version().to_str(), Ok(env!("CARGO_PKG_VERSION")));
    }
}
