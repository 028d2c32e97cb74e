//! Where the `LEVELDB_BLOOM_STATS` summary goes, chosen when the library starts and
//! written once at exit, safely in any process: nothing followed, nothing blocked on,
//! no SIGPIPE raised, and nothing written into a descriptor that is no longer the
//! one opened.

use std::ffi::{c_int, CStr};
use std::io;
use std::mem::MaybeUninit;

use super::stats_file::StatsFile;
use loader::write_unblocked;

/// What a descriptor refers to, as `fstat` tells it: equal for the same open file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Identity {
    device: u64,
    inode: u64,
}

/// The identity and file type (`S_IFMT` bits) of what `fd` refers to.
fn identify(fd: c_int) -> io::Result<(Identity, libc::mode_t)> {
    let mut status = MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `status` is writable room for one `struct stat`.
    if unsafe { libc::fstat(fd, status.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat succeeded, so it filled `status` in.
    let status = unsafe { status.assume_init() };
    let identity = Identity {
        device: status.st_dev,
        inode: status.st_ino,
    };
    Ok((identity, status.st_mode & libc::S_IFMT))
}

/// Where the summary goes: descriptor 2 as it was at start (duplicated, so a later
/// close or reuse of descriptor 2 does not redirect the summary), kept from the
/// library's start to the exit; or a file, opened only at exit, when there is a
/// summary to write ([`StatsFile`]).
pub(super) enum Destination {
    Stderr { fd: c_int, identity: Identity },
    File(StatsFile),
}

impl Destination {
    /// What the variable's `value` names: `stderr`, or else a path, relative to the
    /// current directory, checked now and opened at exit. The error says why not.
    pub(super) fn open(value: &CStr) -> Result<Self, String> {
        if value != c"stderr" {
            return StatsFile::at_start(value).map(Self::File);
        }
        // SAFETY: duplicates a descriptor number; no memory is passed.
        let fd = unsafe { libc::fcntl(libc::STDERR_FILENO, libc::F_DUPFD_CLOEXEC, 3) };
        if fd < 0 {
            return Err(format!("stderr: {}", io::Error::last_os_error()));
        }
        match identify(fd) {
            Ok((identity, _)) => Ok(Self::Stderr { fd, identity }),
            Err(error) => {
                // SAFETY: opened above, and not kept.
                unsafe { libc::close(fd) };
                Err(format!("cannot examine: {error}"))
            }
        }
    }

    /// Writes `bytes`, if any, in one `write` (lines of processes appending to one
    /// file do not interleave), then closes what was opened; says why when not all
    /// was written. Without bytes, no file is opened or created.
    pub(super) fn finish(&self, bytes: Option<&[u8]>) -> Result<(), String> {
        match self {
            Self::Stderr { fd, identity } => finish_stderr(*fd, *identity, bytes),
            Self::File(file) => match bytes {
                None => Ok(()),
                Some(bytes) => {
                    let fd = file.open().map_err(|why| format!("not written: {why}"))?;
                    written(bytes.len(), write_unblocked(fd.0, bytes))
                }
            },
        }
    }
}

/// [`Destination::finish`] of the duplicate `fd` of stderr, which must still be the
/// file `identity` (the program may have closed it, and the number be another
/// file's now).
fn finish_stderr(fd: c_int, identity: Identity, bytes: Option<&[u8]>) -> Result<(), String> {
    if !identify(fd).is_ok_and(|(now, _)| now == identity) {
        return match bytes {
            Some(_) => Err("the descriptor opened at start was closed by the program".into()),
            None => Ok(()),
        };
    }
    let result = bytes.map(|bytes| written(bytes.len(), write_unblocked(fd, bytes)));
    // SAFETY: still the descriptor this library opened (checked above).
    unsafe { libc::close(fd) };
    result.unwrap_or(Ok(()))
}

/// What a write of `length` bytes that gave `result` means.
fn written(length: usize, result: io::Result<usize>) -> Result<(), String> {
    match result {
        Ok(n) if n == length => Ok(()),
        Ok(n) => Err(format!("{n} of {length} bytes written")),
        Err(error) => Err(format!("not written: {error}")),
    }
}

/// Descriptor 2 as it was when the library started, for messages at exit.
pub(super) struct Stderr(Option<Identity>);

impl Stderr {
    pub(super) fn now() -> Self {
        Self(
            identify(libc::STDERR_FILENO)
                .ok()
                .map(|(identity, _)| identity),
        )
    }

    /// Writes `message` on descriptor 2 if it still refers to what it did at start.
    pub(super) fn say(&self, message: &str) {
        let now = identify(libc::STDERR_FILENO)
            .ok()
            .map(|(identity, _)| identity);
        if self.0.is_some() && now == self.0 {
            let _ = write_unblocked(libc::STDERR_FILENO, message.as_bytes());
        }
    }
}
