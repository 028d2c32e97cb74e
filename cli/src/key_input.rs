//! Keys as the command line gives them: text, or hex with `--hex`, and the
//! playground's keys file, read only when it is a regular file or stdin, and only
//! up to a bound.

use std::io::Read;
use std::path::Path;

/// The largest keys file read (`--keys-file`): 64 MiB, millions of keys.
pub const MAX_KEYS_FILE_LEN: u64 = 64 << 20;

/// `text` as bytes, or, with `hex`, its pairs of hex digits (`0-9a-fA-F` only: no
/// sign, no space, an even count).
pub fn key_bytes(text: &str, hex: bool) -> Result<Vec<u8>, String> {
    if !hex {
        return Ok(text.as_bytes().to_vec());
    }
    let digits = text.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("{text:?}: an odd number of hex digits"));
    }
    let digit = |d: u8| char::from(d).to_digit(16);
    digits
        .chunks(2)
        .map(|pair| match (digit(pair[0]), digit(pair[1])) {
            (Some(high), Some(low)) => Ok((high * 16 + low) as u8),
            _ => Err(format!("{text:?}: not hex")),
        })
        .collect()
}

/// The bytes of the keys file `path` (`-`: stdin), at most [`MAX_KEYS_FILE_LEN`]
/// bytes. A FIFO, device or directory is refused unread (`/dev/zero` never
/// fills memory; a FIFO never blocks).
pub fn read_keys_file(path: &Path) -> Result<Vec<u8>, String> {
    let fail = |e: std::io::Error| format!("{}: {e}", path.display());
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
        return Err(format!(
            "{}: longer than {MAX_KEYS_FILE_LEN} bytes, the most a keys file may hold",
            path.display()
        ));
    }
    Ok(bytes)
}
