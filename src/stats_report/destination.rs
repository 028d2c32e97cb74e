//! Where the `LEVELDB_BLOOM_STATS` summary goes, opened when the library starts and
//! written once at exit, safely in any process: nothing followed, nothing blocked on,
//! no SIGPIPE raised, and nothing written into a descriptor that is no longer the
//! one opened.

use std::ffi::{c_int, CStr};
use std::io;
use std::mem::MaybeUninit;

/// What a descriptor refers to, as `fstat` tells it: equal for the same open file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
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

/// The summary's descriptor, kept from the library's start to the exit.
pub(super) struct Destination {
    fd: c_int,
    identity: Identity,
}

/// Permissions of a file the summary creates (before the umask): the counts are no
/// secret, and a user reads them with ordinary tools.
const CREATED_MODE: libc::c_uint = 0o644;

impl Destination {
    /// Opens what the variable's `value` names: `stderr`, the process's descriptor 2
    /// as it is now (duplicated, so a later close or reuse of descriptor 2 does not
    /// redirect the summary), or else a path, relative to the current directory,
    /// opened for appending, created if missing. Only a regular file or a FIFO with
    /// a reader is accepted; the error says why not.
    pub(super) fn open(value: &CStr) -> Result<Self, String> {
        let fd = if value == c"stderr" {
            // SAFETY: duplicates a descriptor number; no memory is passed.
            let fd = unsafe { libc::fcntl(libc::STDERR_FILENO, libc::F_DUPFD_CLOEXEC, 3) };
            if fd < 0 {
                return Err(format!("stderr: {}", io::Error::last_os_error()));
            }
            fd
        } else {
            // SAFETY: a NUL-terminated path; the mode is passed as open(2) expects.
            let fd = unsafe {
                libc::open(
                    value.as_ptr(),
                    libc::O_WRONLY
                        | libc::O_APPEND
                        | libc::O_CREAT
                        | libc::O_NOFOLLOW
                        | libc::O_NONBLOCK
                        | libc::O_CLOEXEC,
                    CREATED_MODE,
                )
            };
            if fd < 0 {
                let error = io::Error::last_os_error();
                return Err(match error.raw_os_error() {
                    Some(libc::ELOOP) => "a symbolic link, not followed".into(),
                    Some(libc::ENXIO) => "a FIFO without a reader".into(),
                    _ => format!("cannot open: {error}"),
                });
            }
            fd
        };
        let destination = match identify(fd) {
            Ok((identity, kind)) => {
                let writable = value == c"stderr" || [libc::S_IFREG, libc::S_IFIFO].contains(&kind);
                writable
                    .then_some(Self { fd, identity })
                    .ok_or_else(|| "neither a regular file nor a FIFO".to_string())
            }
            Err(error) => Err(format!("cannot examine: {error}")),
        };
        if destination.is_err() {
            // SAFETY: opened above, and not kept.
            unsafe { libc::close(fd) };
        }
        destination
    }

    /// Writes `bytes`, if any, in one `write` (lines of processes appending to one
    /// file do not interleave), then closes the descriptor; says why when not all was
    /// written.
    pub(super) fn finish(&self, bytes: Option<&[u8]>) -> Result<(), String> {
        if !identify(self.fd).is_ok_and(|(now, _)| now == self.identity) {
            // The program closed it, and the number may now be another file's.
            return match bytes {
                Some(_) => Err("the descriptor opened at start was closed by the program".into()),
                None => Ok(()),
            };
        }
        let written = bytes.map(|bytes| (bytes.len(), write_unblocked(self.fd, bytes)));
        // SAFETY: still the descriptor this library opened (checked above).
        unsafe { libc::close(self.fd) };
        match written {
            None => Ok(()),
            Some((length, Ok(n))) if n == length => Ok(()),
            Some((length, Ok(n))) => Err(format!("{n} of {length} bytes written")),
            Some((_, Err(error))) => Err(format!("not written: {error}")),
        }
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
