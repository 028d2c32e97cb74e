//! Bytes as the tool shows them and takes them: pairs of lowercase hex digits.

/// `bytes` in hex, two lowercase digits a byte.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The first `max` bytes of `bytes` in hex, "…" after them if there are more.
pub fn hex_cut(bytes: &[u8], max: usize) -> String {
    let mut shown = hex(&bytes[..bytes.len().min(max)]);
    if bytes.len() > max {
        shown.push('…');
    }
    shown
}

/// The bytes the hex digits of `text` spell (`0-9a-fA-F` only: no sign, no space,
/// an even count).
pub fn parse_hex(text: &str) -> Result<Vec<u8>, HexError> {
    let digits = text.as_bytes();
    if !digits.len().is_multiple_of(2) {
        return Err(HexError::OddLength);
    }
    let digit = |d: u8| char::from(d).to_digit(16);
    digits
        .chunks(2)
        .map(|pair| match (digit(pair[0]), digit(pair[1])) {
            (Some(high), Some(low)) => Ok((high * 16 + low) as u8),
            _ => Err(HexError::NotHex),
        })
        .collect()
}

/// Why text is not hex.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HexError {
    OddLength,
    NotHex,
}

impl std::fmt::Display for HexError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::OddLength => "an odd number of hex digits",
            Self::NotHex => "not hex",
        })
    }
}

impl std::error::Error for HexError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_two_lowercase_digits_each() {
        assert_eq!(hex(&[]), "");
        assert_eq!(hex(&[0, 0x0f, 0xab, 0xff]), "000fabff");
    }

    #[test]
    fn cut_keys_end_with_an_ellipsis_only_when_cut() {
        assert_eq!(hex_cut(b"abc", 3), "616263");
        assert_eq!(hex_cut(b"abcd", 3), "616263…");
        assert_eq!(hex_cut(b"", 0), "");
    }

    #[test]
    fn hex_reads_back_and_rejects_what_is_not_hex() {
        assert_eq!(parse_hex("00FFab"), Ok(vec![0, 0xff, 0xab]));
        assert_eq!(parse_hex(""), Ok(vec![]));
        assert_eq!(parse_hex("abc"), Err(HexError::OddLength));
        assert_eq!(parse_hex("zz"), Err(HexError::NotHex));
        assert_eq!(parse_hex("+1"), Err(HexError::NotHex));
        assert_eq!(parse_hex(" 1"), Err(HexError::NotHex));
        assert_eq!(hex(&parse_hex("c3a9").unwrap()), "c3a9");
    }
}
