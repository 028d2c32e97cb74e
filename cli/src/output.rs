//! Where the tool's words go: text made safe for a terminal, stdout and stderr
//! written without a panic whatever they are (closed, a closed pipe, a full disk),
//! and the page `show` writes opened without following a symlink or waiting on a
//! FIFO.

use anyhow::{anyhow, bail, Result};
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// `text` with every control character but the newline escaped (`\u{1b}`), so that
/// names and bytes taken from files (a filter block's name, a path) cannot move the
/// cursor, retitle the window or write to the clipboard of the terminal showing it.
pub fn terminal_safe(text: &str) -> String {
    let mut safe = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() && c != '\n' {
            safe.extend(c.escape_debug());
        } else {
            safe.push(c);
        }
    }
    safe
}

/// A JSON document with every control character left in it (JSON escapes only
/// those below 0x20: DEL and the C1 controls pass) written as `\uXXXX`: the same
/// document, safe on a terminal.
pub fn json_safe(json: &str) -> String {
    let mut safe = String::with_capacity(json.len());
    for c in json.chars() {
        if c.is_control() && c != '\n' {
            safe.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            safe.push(c);
        }
    }
    safe
}

/// Prints `leveldb-bloom: ERROR message` on stderr, made terminal-safe: a run's
/// failures, printed by [`crate::exit::report_failure`] only.
pub(crate) fn print_error(message: &str) {
    print_stderr(&format!("leveldb-bloom: ERROR {message}"));
}

/// Prints `leveldb-bloom: WARNING message` on stderr, made terminal-safe: what went
/// wrong without failing the run.
pub fn print_warning(message: &str) {
    print_stderr(&format!("leveldb-bloom: WARNING {message}"));
}

/// Prints `leveldb-bloom: note: message` on stderr, made terminal-safe: what the
/// reader of stdout should know (stdout keeps the documented text and JSON).
pub fn print_note(message: &str) {
    print_stderr(&format!("leveldb-bloom: note: {message}"));
}

/// Prints `hint: message` on stderr, made terminal-safe: after an error, the way that
/// works.
pub fn print_hint(message: &str) {
    print_stderr(&format!("hint: {message}"));
}

/// The one printer of stderr: `line` made terminal-safe and ended; a stderr that
/// cannot be written to (closed, a closed pipe) is passed over, never a panic.
fn print_stderr(line: &str) {
    let line = terminal_safe(line) + "\n";
    let _ = io::stderr().lock().write_all(line.as_bytes());
}

/// Writes `text` to stdout. A closed pipe (`| head`) is the reader's choice and no
/// error; a stdout that cannot take the text (a full disk) is an error naming it,
/// for an exit status that is not success. (A stdout closed when the tool started
/// is `/dev/null`: Rust's runtime opens it there, so that no file the tool opens
/// takes its number.)
pub fn write_stdout(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(anyhow!("stdout: {e}: the output was not written in full"))
        }
        _ => Ok(()),
    }
}

/// Writes `contents` to the file `path`: created if missing (mode 0644 less the
/// umask), never through a symlink (`O_NOFOLLOW`), never waiting on a FIFO
/// (`O_NONBLOCK`), and only over a regular file, truncated once it is known to be
/// one.
pub fn write_file(path: &Path, contents: &[u8]) -> Result<()> {
    let fail = |e: io::Error| anyhow!("{}: {e}", path.display());
    let mut file = File::options()
        .write(true)
        .create(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => anyhow!("{}: a symlink: not followed", path.display()),
            Some(libc::ENXIO) => anyhow!("{}: a FIFO with no reader", path.display()),
            _ => fail(e),
        })?;
    if !file.metadata().map_err(fail)?.is_file() {
        bail!("{}: not a regular file", path.display());
    }
    file.set_len(0).map_err(fail)?;
    file.write_all(contents).map_err(fail)
}
