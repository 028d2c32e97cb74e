//! Whether a running program has a database open: LevelDB holds a write lock (fcntl,
//! `F_SETLK`) on the database's `LOCK` file for as long as it has the database open.
//! The lock is tested with `F_GETLK`, never taken, so the test cannot get in the way
//! of the program; it sees POSIX and open-file-description locks of other processes.

use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The process holding a database's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Holder {
    /// Its process id; `None` for an open-file-description lock, which has none.
    pub pid: Option<u32>,
}

impl std::fmt::Display for Holder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.pid {
            Some(pid) => write!(f, "process {pid} holds LevelDB's LOCK"),
            None => write!(f, "a process holds LevelDB's LOCK"),
        }
    }
}

/// The process that has the database in `dir` open now, if any. `None` also when
/// `LOCK` is missing or is not a regular file (it is opened without following a
/// symlink and without blocking, so a FIFO or a device is never waited on).
pub fn holder(dir: &Path) -> Option<Holder> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(dir.join("LOCK"))
        .ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    holder_of(&file)
}

/// The process, other than this one, holding a lock on the open `LOCK` file `file`.
pub fn holder_of(file: &File) -> Option<Holder> {
    // SAFETY: `flock` is plain old data, for which all zeroes is a valid value.
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = libc::F_WRLCK as libc::c_short;
    lock.l_whence = libc::SEEK_SET as libc::c_short;
    // SAFETY: the descriptor is open for as long as `file` lives, and `lock` is a
    // valid, writable `struct flock`, which F_GETLK fills in.
    let tested = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut lock) };
    if tested != 0 || lock.l_type == libc::F_UNLCK as libc::c_short {
        return None;
    }
    Some(Holder {
        pid: u32::try_from(lock.l_pid).ok().filter(|&pid| pid > 0),
    })
}
