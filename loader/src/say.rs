//! Writing a short line to a descriptor the program shares (its stderr) or one a
//! library opened: never blocking for long, never raising SIGPIPE in the host.

use std::ffi::c_int;
use std::io;
use std::mem::MaybeUninit;

/// Writes `line` on stderr: never blocking for long, never raising SIGPIPE.
pub fn say(line: &str) {
    let _ = write_unblocked(libc::STDERR_FILENO, line.as_bytes());
}

/// Writes `bytes` (shorter than `PIPE_BUF`) to `fd` without blocking for more than
/// `WAIT_FOR_ROOM_MS` and without SIGPIPE.
pub fn write_unblocked(fd: c_int, bytes: &[u8]) -> io::Result<usize> {
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
