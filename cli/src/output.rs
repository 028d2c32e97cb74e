//! Where the tool's words go: text made safe for a terminal, stdout and stderr
//! written without a panic whatever they are (closed, a closed pipe, a full disk),
//! and the page `show` writes opened without following a symlink or waiting on a
//! FIFO.

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

/// Prints `leveldb-bloom: ERROR message` on stderr, made terminal-safe; a stderr
/// that cannot be written to (closed, a closed pipe) is passed over, never a panic.
pub fn print_error(message: &str) {
    let line = format!("leveldb-bloom: ERROR {}\n", terminal_safe(message));
    let _ = io::stderr().lock().write_all(line.as_bytes());
}

/// Whether stdout was closed when the tool started (see [`guard_standard_streams`]).
static STDOUT_WAS_CLOSED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// Opens `/dev/null` on each of descriptors 0, 1 and 2 that is closed, so that no
/// file the tool opens takes its number (a report written to "stdout" must never
/// land in a table it has open); a closed stdout is remembered, and writing the
/// report then fails (see [`write_stdout`]).
pub fn guard_standard_streams() {
    for fd in 0..=2 {
        // SAFETY: fcntl(F_GETFD) on a descriptor number only queries its flags.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1 {
            continue;
        }
        if fd == 1 {
            STDOUT_WAS_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        // SAFETY: open(2) with a NUL-terminated literal path; the lowest free
        // descriptor, this one, is taken and deliberately kept for the whole run.
        unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
    }
}

/// Writes `text` to stdout. A closed pipe (`| head`) is the reader's choice and no
/// error; a stdout that was closed or cannot take the text (a full disk) is an
/// error naming it, for an exit status that is not success.
pub fn write_stdout(text: &str) -> Result<(), String> {
    if STDOUT_WAS_CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        return Err("stdout is closed: the output was not written".into());
    }
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(format!("stdout: {e}: the output was not written in full"))
        }
        _ => Ok(()),
    }
}

/// Writes `contents` to the file `path`: created if missing (mode 0644 less the
/// umask), never through a symlink (`O_NOFOLLOW`), never waiting on a FIFO
/// (`O_NONBLOCK`), and only over a regular file, truncated once it is known to be
/// one.
pub fn write_file(path: &Path, contents: &[u8]) -> Result<(), String> {
    let fail = |e: io::Error| format!("{}: {e}", path.display());
    let mut file = File::options()
        .write(true)
        .create(true)
        .mode(0o644)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => format!("{}: a symlink: not followed", path.display()),
            Some(libc::ENXIO) => format!("{}: a FIFO with no reader", path.display()),
            _ => fail(e),
        })?;
    if !file.metadata().map_err(fail)?.is_file() {
        return Err(format!("{}: not a regular file", path.display()));
    }
    file.set_len(0).map_err(fail)?;
    file.write_all(contents).map_err(fail)
}
