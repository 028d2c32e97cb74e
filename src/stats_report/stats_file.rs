//! The file `LEVELDB_BLOOM_STATS` names: its path made absolute when the library
//! starts (a relative one against the start directory), checked then without
//! opening anything, and opened only when there is a summary to write.
//!
//! Nothing is opened before its type is known: the path is first opened `O_PATH`
//! (which opens no device, creates nothing and follows no symlink) and `fstat`ed;
//! only a regular file, a FIFO or a terminal is then opened for writing, through
//! that very handle (`/proc/self/fd`), so what is opened is what was checked.
//! Symlinks in any component are refused where the kernel offers `openat2`'s
//! `RESOLVE_NO_SYMLINKS` (Linux 5.6); before it, only a symlink as the last
//! component is.

use std::ffi::{c_int, CStr, CString};
use std::io;
use std::mem::MaybeUninit;

/// Permissions of a file the summary creates (before the umask): the counts are no
/// secret, and a user reads them with ordinary tools.
const CREATED_MODE: u64 = 0o644;

/// The flags of the open that writes the summary.
const WRITE_FLAGS: c_int = libc::O_WRONLY
    | libc::O_APPEND
    | libc::O_NOFOLLOW
    | libc::O_NONBLOCK
    | libc::O_NOCTTY
    | libc::O_CLOEXEC;

/// The absolute path of the statistics file.
pub(super) struct StatsFile(CString);

impl StatsFile {
    /// `value` made absolute and checked, at start: it must be, or be creatable as,
    /// a regular file, a FIFO or a terminal, reached without a symlink.
    pub(super) fn at_start(value: &CStr) -> Result<Self, String> {
        let path = absolute(value)?;
        match open_path(&path, 0) {
            Ok(handle) => {
                let status = examine(&handle)?;
                writable_kind(&status)?;
                if status.st_mode & libc::S_IFMT == libc::S_IFREG {
                    check_may_write(&path)?;
                }
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                // Created at exit: its directory must be there.
                open_path(&parent(&path), libc::O_DIRECTORY).map_err(|e| cannot_open(&e))?;
            }
            Err(e) => return Err(cannot_open(&e)),
        }
        Ok(Self(path))
    }

    /// Opens the file for appending, created if missing, checked again as at start.
    pub(super) fn open(&self) -> Result<Fd, String> {
        // Another process may create the file between the two opens (a forked
        // sibling's summary); a file made and removed again and again is given up.
        for _ in 0..3 {
            match open_path(&self.0, 0) {
                Ok(handle) => {
                    writable_kind(&examine(&handle)?)?;
                    return reopen(&handle, &self.0);
                }
                Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                    match open_resolved(&self.0, WRITE_FLAGS | libc::O_CREAT | libc::O_EXCL) {
                        Ok(fd) => return Ok(fd),
                        // Made meanwhile: open that one.
                        Err(e) if e.raw_os_error() == Some(libc::EEXIST) => continue,
                        Err(e) => return Err(cannot_open(&e)),
                    }
                }
                Err(e) => return Err(cannot_open(&e)),
            }
        }
        Err("created and removed again while it was opened".into())
    }
}

/// A descriptor closed when dropped.
pub(super) struct Fd(pub(super) c_int);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: a descriptor this library opened and owns.
        unsafe { libc::close(self.0) };
    }
}

/// `value`, or the start directory joined with it when it is relative.
fn absolute(value: &CStr) -> Result<CString, String> {
    if value.to_bytes().starts_with(b"/") {
        return Ok(value.to_owned());
    }
    let mut start = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: `start` is writable room for PATH_MAX bytes, the size passed.
    if unsafe { libc::getcwd(start.as_mut_ptr().cast(), start.len()) }.is_null() {
        return Err(format!(
            "the start directory has no path: {}",
            io::Error::last_os_error()
        ));
    }
    let end = start.iter().position(|&b| b == 0).unwrap_or(start.len());
    start.truncate(end);
    if !start.ends_with(b"/") {
        start.push(b'/');
    }
    start.extend_from_slice(value.to_bytes());
    CString::new(start).map_err(|_| "a path with a NUL byte".to_string())
}

/// The directory part of the absolute `path` (`/` for a file at the root).
fn parent(path: &CStr) -> CString {
    let bytes = path.to_bytes();
    let slash = bytes.iter().rposition(|&b| b == b'/').unwrap_or(0);
    CString::new(&bytes[..slash.max(1)]).expect("a part of a C string")
}

/// `path` opened `O_PATH` with `flags`, without following any symlink.
fn open_path(path: &CStr, flags: c_int) -> io::Result<Fd> {
    open_resolved(
        path,
        libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC | flags,
    )
}

/// `openat2(path, flags, RESOLVE_NO_SYMLINKS)`; `open(path, flags)` where the
/// kernel has no `openat2`.
fn open_resolved(path: &CStr, flags: c_int) -> io::Result<Fd> {
    // SAFETY: `open_how` is plain old data, for which all zeroes is a valid value
    // (and what the kernel expects of fields this code does not know).
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = flags as u64;
    how.mode = if flags & libc::O_CREAT != 0 {
        CREATED_MODE
    } else {
        0
    };
    how.resolve = libc::RESOLVE_NO_SYMLINKS;
    // SAFETY: a NUL-terminated path and a live `open_how` of the size passed.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            path.as_ptr(),
            &how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd >= 0 {
        return Ok(Fd(fd as c_int));
    }
    let error = io::Error::last_os_error();
    if error.raw_os_error() != Some(libc::ENOSYS) {
        return Err(error);
    }
    // SAFETY: a NUL-terminated path; the mode is passed as open(2) expects.
    let fd = unsafe { libc::open(path.as_ptr(), flags, CREATED_MODE as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(Fd(fd))
}

/// The status of what `fd` refers to.
fn stat(fd: c_int) -> io::Result<libc::stat> {
    let mut status = MaybeUninit::<libc::stat>::uninit();
    // SAFETY: `status` is writable room for one `struct stat`.
    if unsafe { libc::fstat(fd, status.as_mut_ptr()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fstat succeeded, so it filled `status` in.
    Ok(unsafe { status.assume_init() })
}

/// The status of the `O_PATH` descriptor `handle`: what it is, read without
/// opening it.
fn examine(handle: &Fd) -> Result<libc::stat, String> {
    stat(handle.0).map_err(|e| format!("cannot examine: {e}"))
}

/// An error unless `status` is a regular file's, a FIFO's or a terminal's.
fn writable_kind(status: &libc::stat) -> Result<(), String> {
    match status.st_mode & libc::S_IFMT {
        libc::S_IFREG | libc::S_IFIFO => Ok(()),
        libc::S_IFLNK => Err("a symbolic link, not followed".into()),
        libc::S_IFDIR => Err(cannot_open(&io::Error::from_raw_os_error(libc::EISDIR))),
        libc::S_IFCHR if is_terminal(status.st_rdev) => Ok(()),
        _ => Err("neither a regular file nor a FIFO, nor a terminal: not opened".into()),
    }
}

/// Whether the character device `device` is a terminal, by Linux's device numbers:
/// the virtual consoles and serial lines, `/dev/tty` and `/dev/console`, and
/// pseudo-terminals.
fn is_terminal(device: libc::dev_t) -> bool {
    let (major, minor) = (libc::major(device), libc::minor(device));
    major == 4 || (major == 5 && minor <= 1) || (136..=143).contains(&major)
}

/// An error unless this process may write the existing file `path`, as the open
/// at exit will (its effective ids).
fn check_may_write(path: &CStr) -> Result<(), String> {
    // SAFETY: a NUL-terminated path; faccessat only reads it.
    let allowed = unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            path.as_ptr(),
            libc::W_OK,
            libc::AT_EACCESS | libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if allowed != 0 {
        return Err(cannot_open(&io::Error::last_os_error()));
    }
    Ok(())
}

/// Opens for writing the file `handle` (an `O_PATH` descriptor of `path`) refers
/// to, through `/proc/self/fd`; where `/proc` is not mounted, `path` again, checked
/// to be the same file.
fn reopen(handle: &Fd, path: &CStr) -> Result<Fd, String> {
    let via_proc = CString::new(format!("/proc/self/fd/{}", handle.0)).expect("no NUL");
    // SAFETY: a NUL-terminated path; no mode without O_CREAT.
    let fd = unsafe { libc::open(via_proc.as_ptr(), WRITE_FLAGS & !libc::O_NOFOLLOW) };
    let fd = if fd >= 0 {
        Fd(fd)
    } else {
        let error = io::Error::last_os_error();
        if error.raw_os_error() != Some(libc::ENOENT) {
            return Err(opened_error(&error));
        }
        let fd = open_resolved(path, WRITE_FLAGS).map_err(|e| opened_error(&e))?;
        let (before, now) = (stat(handle.0), stat(fd.0));
        let same =
            matches!((before, now), (Ok(a), Ok(b)) if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino));
        if !same {
            return Err("replaced while it was opened: not written".into());
        }
        fd
    };
    Ok(fd)
}

/// What an error opening the checked file means.
fn opened_error(error: &io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::ENXIO) => "a FIFO without a reader".into(),
        _ => cannot_open(error),
    }
}

fn cannot_open(error: &io::Error) -> String {
    match error.raw_os_error() {
        Some(libc::ELOOP) => "a symbolic link in its path, not followed".into(),
        Some(libc::EXDEV) => "its path leaves the file system through a link: not followed".into(),
        _ => format!("cannot open: {error}"),
    }
}
