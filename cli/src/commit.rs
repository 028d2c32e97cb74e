//! Committing a new version of a closed database as LevelDB commits one: its `LOCK`
//! held the whole time, new files created (never over an existing file or through a
//! symlink) and `fsync`ed, then `CURRENT` replaced atomically: a temporary file,
//! `fsync`, `rename`, `fsync` of the directory. Until that rename nothing LevelDB
//! reads has changed, and every file made so far is removed on failure.

use anyhow::{anyhow, bail, Result};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The database's `LOCK`, held as LevelDB holds it (an `fcntl` write lock) and as
/// goleveldb does (`flock`), until dropped.
pub struct DbLock {
    _file: File,
}

impl DbLock {
    /// Takes the lock of the database in `dir`; an error when a program holds it.
    pub fn acquire(dir: &Path) -> Result<Self> {
        let path = dir.join("LOCK");
        let named = |e: io::Error| anyhow!("{}: {e}", path.display());
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
            .open(&path)
            .map_err(named)?;
        if !file.metadata().map_err(named)?.is_file() {
            bail!("{}: not a regular file", path.display());
        }
        let held = || {
            let who = crate::lock::holder(dir).map_or(String::new(), |h| format!(": {h}"));
            anyhow!(
                "{}: held by another process (a program has the database open{who}): close it first",
                path.display()
            )
        };
        // SAFETY: `flock` is plain old data, for which all zeroes is a valid value.
        let mut lock: libc::flock = unsafe { std::mem::zeroed() };
        lock.l_type = libc::F_WRLCK as libc::c_short;
        lock.l_whence = libc::SEEK_SET as libc::c_short;
        // SAFETY: `file` is an open descriptor and `lock` a valid `struct flock` that
        // lives across the call; F_SETLK only reads it.
        if unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&file), libc::F_SETLK, &lock) } != 0
        {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EAGAIN | libc::EACCES) => held(),
                _ => named(e),
            });
        }
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => Err(held()),
            Err(std::fs::TryLockError::Error(e)) => Err(named(e)),
        }
    }
}

/// The files of one commit: each one created new, removed again unless the commit
/// completes.
pub struct Commit {
    dir: PathBuf,
    created: Vec<PathBuf>,
    done: bool,
}

impl Commit {
    pub fn new(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
            created: Vec::new(),
            done: false,
        }
    }

    /// Creates `name` in the database directory for writing; an error if anything
    /// by that name exists (a symlink included).
    pub fn create(&mut self, name: &str) -> Result<(PathBuf, File)> {
        let path = self.dir.join(name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        self.created.push(path.clone());
        Ok((path, file))
    }

    /// Makes `file` (at `path`) durable, with a crash point before and after.
    pub fn sync(&self, path: &Path, file: &File) -> Result<()> {
        crash_point();
        file.sync_all()
            .map_err(|e| anyhow!("{}: fsync: {e}", path.display()))?;
        crash_point();
        Ok(())
    }

    /// Points `CURRENT` at `manifest` (a file name), as LevelDB's `SetCurrentFile`:
    /// `NNNNNN.dbtmp` (the MANIFEST's number) written and synced, renamed over
    /// `CURRENT`, the directory synced. The commit is complete once the rename is:
    /// a directory sync failing after it is a warning, not an error.
    pub fn replace_current(mut self, manifest: &str, number: u64) -> Result<Option<anyhow::Error>> {
        // The new files' names made durable first, as LevelDB syncs the directory of
        // a new MANIFEST before pointing CURRENT at it.
        self.sync_dir("after the new files were written")?;
        crash_point();
        let (temp, mut file) = self.create(&format!("{number:06}.dbtmp"))?;
        file.write_all(format!("{manifest}\n").as_bytes())
            .map_err(|e| anyhow!("{}: {e}", temp.display()))?;
        self.sync(&temp, &file)?;
        let current = self.dir.join("CURRENT");
        std::fs::rename(&temp, &current).map_err(|e| anyhow!("{}: {e}", current.display()))?;
        self.done = true;
        crash_point();
        let warning = self.sync_dir("after CURRENT was replaced").err();
        crash_point();
        Ok(warning)
    }

    fn sync_dir(&self, when: &str) -> Result<()> {
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(|e| anyhow!("{}: fsync of the directory {when}: {e}", self.dir.display()))
    }
}

impl Drop for Commit {
    fn drop(&mut self) {
        if !self.done {
            for path in &self.created {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// The bytes free to an unprivileged writer on the file system of `dir`.
pub fn free_bytes(dir: &Path) -> Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let failed = |e: io::Error| anyhow!("{}: statvfs: {e}", dir.display());
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| failed(io::ErrorKind::InvalidInput.into()))?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::uninit();
    // SAFETY: `path` is a NUL-terminated string and `stat` points to writable memory
    // of the size of `struct statvfs`, which the call fills when it returns 0.
    if unsafe { libc::statvfs(path.as_ptr(), stat.as_mut_ptr()) } != 0 {
        return Err(failed(io::Error::last_os_error()));
    }
    // SAFETY: statvfs returned 0: it filled `stat`.
    let stat = unsafe { stat.assume_init() };
    Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
}

/// A step of the commit at which the crash test kills the process: with the
/// `crash-points` feature (the tests' build only), the N-th call sends the process
/// SIGKILL when `LEVELDB_BLOOM_REFILTER_CRASH_AT` is N (ignored in a setuid
/// process). Without the feature, nothing.
pub fn crash_point() {
    #[cfg(feature = "crash-points")]
    {
        use std::sync::atomic::{AtomicU32, Ordering};
        static STEP: AtomicU32 = AtomicU32::new(0);
        let step = STEP.fetch_add(1, Ordering::Relaxed) + 1;
        // SAFETY: getauxval only reads the process's auxiliary vector.
        let secure = unsafe { libc::getauxval(libc::AT_SECURE) } != 0;
        let target = std::env::var("LEVELDB_BLOOM_REFILTER_CRASH_AT")
            .ok()
            .and_then(|n| n.parse::<u32>().ok());
        if !secure && target == Some(step) {
            // SAFETY: kill with this process's own id and a valid signal number.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
    }
}
