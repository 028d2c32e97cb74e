//! Bytes read from a file, shown in a message: short, and safe on a terminal.

/// The bytes a message may show of what a file holds.
pub const EXCERPT_LEN: usize = 40;

/// A short excerpt of bytes read from a file, for a message: at most its first
/// [`EXCERPT_LEN`] bytes, quoted, every control character and invalid byte escaped
/// (a terminal never receives an escape sequence from a file), "…" if cut.
pub fn excerpt(bytes: &[u8]) -> String {
    let cut = bytes.len() > EXCERPT_LEN;
    let mut shown = String::from("\"");
    shown.extend(
        bytes[..bytes.len().min(EXCERPT_LEN)]
            .utf8_chunks()
            .flat_map(|chunk| {
                let valid = chunk.valid().chars().flat_map(char::escape_debug);
                let invalid = chunk
                    .invalid()
                    .iter()
                    .flat_map(|&b| std::ascii::escape_default(b).map(char::from));
                valid.chain(invalid).collect::<Vec<_>>()
            }),
    );
    shown.push('"');
    if cut {
        shown.push('…');
    }
    shown
}
