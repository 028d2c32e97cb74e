//! Keys as the command line gives them: text, or hex with `--hex`, and a keys file
//! (`show`'s playground, `explain`), read only when it is a regular file or stdin, and only
//! up to a bound.

use std::io::Read;
use std::path::Path;

use anyhow::{anyhow, bail, Result};

use crate::hex::parse_hex;

/// The largest keys file read (`--keys-file`): 64 MiB, millions of keys.
pub const MAX_KEYS_FILE_LEN: u64 = 64 << 20;

/// `text` as bytes, or, with `hex`, its pairs of hex digits (`0-9a-fA-F` only: no
/// sign, no space, an even count).
pub fn key_bytes(text: &str, hex: bool) -> Result<Vec<u8>> {
    if !hex {
        return Ok(text.as_bytes().to_vec());
    }
    parse_hex(text).map_err(|why| anyhow!("{text:?}: {why}"))
}

/// The keys given as arguments (`keys`), then those of the keys file `file`, one a
/// line: as text, or, with `hex`, as hex digits.
pub fn keys_given(keys: &[String], file: Option<&Path>, hex: bool) -> Result<Vec<Vec<u8>>> {
    let mut given: Vec<Vec<u8>> = keys
        .iter()
        .map(|key| key_bytes(key, hex))
        .collect::<Result<_>>()?;
    if let Some(file) = file {
        let text = read_keys_file(file)?;
        let parse = |line: &str| key_bytes(line, true);
        given.extend(crate::hints::keys_of_file(file, &text, hex, parse)?);
    }
    Ok(given)
}

/// The bytes of the keys file `path` (`-`: stdin), at most [`MAX_KEYS_FILE_LEN`]
/// bytes. A FIFO, device or directory is refused unread (`/dev/zero` never
/// fills memory; a FIFO never blocks).
pub fn read_keys_file(path: &Path) -> Result<Vec<u8>> {
    let fail = |e: std::io::Error| anyhow!("{}: {e}", path.display());
    let mut bytes = Vec::new();
    if path == Path::new("-") {
        std::io::stdin()
            .lock()
            .take(MAX_KEYS_FILE_LEN + 1)
            .read_to_end(&mut bytes)
            .map_err(fail)?;
    } else {
        leveldb_table::open_regular_file(path)
            .and_then(|file| file.take(MAX_KEYS_FILE_LEN + 1).read_to_end(&mut bytes))
            .map_err(fail)?;
    }
    if bytes.len() as u64 > MAX_KEYS_FILE_LEN {
        bail!(
            "{}: longer than {MAX_KEYS_FILE_LEN} bytes, the most a keys file may hold",
            path.display()
        );
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_text_unless_hex_is_asked_for() {
        assert_eq!(key_bytes("user:1", false).unwrap(), b"user:1");
        assert_eq!(key_bytes("00ff", false).unwrap(), b"00ff");
        assert_eq!(key_bytes("00ff", true).unwrap(), [0, 0xff]);
    }

    #[test]
    fn bad_hex_is_an_error_quoting_the_key() {
        let odd = key_bytes("abc", true).unwrap_err().to_string();
        assert_eq!(odd, "\"abc\": an odd number of hex digits");
        let not_hex = key_bytes("zz", true).unwrap_err().to_string();
        assert_eq!(not_hex, "\"zz\": not hex");
    }
}
