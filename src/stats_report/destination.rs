//! Where the `LEVELDB_BLOOM_STATS` summary goes, chosen when the library starts and
//! written once at exit, safely in any process: nothing followed, nothing blocked on,
//! no SIGPIPE raised, and nothing written into a descriptor that is no longer the
//! one opened.

use std::ffi::{c_int, CStr};
use std::io;
use std::mem::MaybeUninit;

use super::stats_file::StatsFile;

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

/// How long a write waits for room in a full pipe or a stopped terminal: stderr's
/// open file is the program's, shared, so it cannot be made non-blocking (the files
/// this library opens are).
const WAIT_FOR_ROOM_MS: c_int = 100;

/// Whether `fd` takes a write now, or within [`WAIT_FOR_ROOM_MS`]. A pipe with room
/// for one more page takes the summary (shorter than `PIPE_BUF`) without blocking.
fn ready_to_write(fd: c_int) -> bool {
    let mut poll = libc::pollfd {
        fd,
        events: libc::POLLOUT,
        revents: 0,
    };
    loop {
        // SAFETY: one live pollfd.
        match unsafe { libc::poll(&mut poll, 1, WAIT_FOR_ROOM_MS) } {
            // POLLERR (a pipe without reader) and POLLHUP are ready too: the write
            // says what failed.
            1 => return poll.revents & (libc::POLLOUT | libc::POLLERR | libc::POLLHUP) != 0,
            0 => return false,
            _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => continue,
            _ => return false,
        }
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

/// Writes `bytes` (shorter than `PIPE_BUF`) to `fd` without blocking for more than
/// [`WAIT_FOR_ROOM_MS`] and without SIGPIPE.
pub(crate) fn write_unblocked(fd: c_int, bytes: &[u8]) -> io::Result<usize> {
    match ready_to_write(fd) {
        true => write_without_sigpipe(fd, bytes),
        false => Err(io::Error::from(io::ErrorKind::WouldBlock)),
    }
}

/// `write(2)`, repeated if a signal interrupts it, without a SIGPIPE for a pipe with
/// no reader: SIGPIPE is blocked on this thread around the write, and the one the
/// write raised, if any, is taken off the thread's pending signals before the mask
/// is restored (one already pending before is left there). The descriptor's own
/// flags decide whether it may block: the files this library opens are non-blocking.
fn write_without_sigpipe(fd: c_int, bytes: &[u8]) -> io::Result<usize> {
    let mut sigpipe = MaybeUninit::<libc::sigset_t>::uninit();
    let mut previous = MaybeUninit::<libc::sigset_t>::uninit();
    let mut pending = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: each set is initialised by sigemptyset or sigpending before it is read;
    // the pointers are to live local sets.
    let pending_before = unsafe {
        libc::sigemptyset(sigpipe.as_mut_ptr());
        libc::sigaddset(sigpipe.as_mut_ptr(), libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, sigpipe.as_ptr(), previous.as_mut_ptr());
        libc::sigpending(pending.as_mut_ptr()) == 0
            && libc::sigismember(pending.as_ptr(), libc::SIGPIPE) == 1
    };
    let written = loop {
        // SAFETY: a borrowed buffer of `bytes.len()` readable bytes.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        match n {
            0.. => break Ok(n as usize),
            _ => match io::Error::last_os_error() {
                error if error.kind() == io::ErrorKind::Interrupted => continue,
                error => break Err(error),
            },
        }
    };
    let broken_pipe = written
        .as_ref()
        .is_err_and(|error| error.raw_os_error() == Some(libc::EPIPE));
    // SAFETY: the sets were initialised above; a zero timeout never waits.
    unsafe {
        if broken_pipe && !pending_before {
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            libc::sigtimedwait(sigpipe.as_ptr(), std::ptr::null_mut(), &zero);
        }
        libc::pthread_sigmask(libc::SIG_SETMASK, previous.as_ptr(), std::ptr::null_mut());
    }
    written
}
