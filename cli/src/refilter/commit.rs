//! Committing a new version of a closed database as LevelDB commits one: its `LOCK`
//! held the whole time, new files created (never over an existing file or through a
//! symlink) and `fsync`ed, then `CURRENT` replaced atomically: a temporary file,
//! `fsync`, `rename`, `fsync` of the directory. Until that rename nothing LevelDB
//! reads has changed, and every file made so far is removed on failure. Every
//! operation is relative to the directory handle opened once ([`DbDir`]).

use anyhow::{anyhow, bail, Result};
use std::fs::File;
use std::io::{self, Write};

use crate::refilter::db_dir::{DbDir, Ownership};

/// The database's `LOCK`, held as LevelDB holds it (an `fcntl` write lock) and as
/// goleveldb does (`flock`), until dropped. Never removed, even when this run made
/// it and changed nothing: LevelDB never deletes its `LOCK`, since a program that
/// opened it just before an unlink would lock a deleted file while the next opener
/// made a fresh one, and two writers would share the database.
pub struct DbLock {
    _file: File,
}

/// `LOCK`'s permissions when it is created, as LevelDB creates it (before the umask).
const LOCK_MODE: u32 = 0o644;

impl DbLock {
    /// Takes the lock of the database in `dir`; an error when a program holds it.
    pub fn acquire(dir: &DbDir) -> Result<Self> {
        let path = dir.display("LOCK");
        let named = |e: io::Error| anyhow!("{path}: {e}");
        let file = dir.open_or_create("LOCK", LOCK_MODE).map_err(named)?;
        let lock = Self { _file: file };
        let held = || {
            let who =
                crate::lock::holder_of(&lock._file).map_or(String::new(), |h| format!(": {h}"));
            anyhow!(
                "{path}: held by another process (a program has the database open{who}): close it first"
            )
        };
        // SAFETY: `flock` is plain old data, for which all zeroes is a valid value.
        let mut request: libc::flock = unsafe { std::mem::zeroed() };
        request.l_type = libc::F_WRLCK as libc::c_short;
        request.l_whence = libc::SEEK_SET as libc::c_short;
        let fd = std::os::fd::AsRawFd::as_raw_fd(&lock._file);
        // SAFETY: `fd` is open while `lock` lives, and `request` a valid `struct
        // flock` that lives across the call; F_SETLK only reads it.
        if unsafe { libc::fcntl(fd, libc::F_SETLK, &request) } != 0 {
            let e = io::Error::last_os_error();
            return Err(match e.raw_os_error() {
                Some(libc::EAGAIN | libc::EACCES) => held(),
                _ => named(e),
            });
        }
        match lock._file.try_lock() {
            Ok(()) => Ok(lock),
            Err(std::fs::TryLockError::WouldBlock) => Err(held()),
            Err(std::fs::TryLockError::Error(e)) => Err(named(e)),
        }
    }
}

/// The files of one commit: each one created new, removed again unless the commit
/// completes.
pub struct Commit<'d> {
    dir: &'d DbDir,
    created: Vec<String>,
    done: bool,
}

impl<'d> Commit<'d> {
    pub fn new(dir: &'d DbDir) -> Self {
        Self {
            dir,
            created: Vec::new(),
            done: false,
        }
    }

    /// Creates `name` in the database directory for writing, with the permissions
    /// (and, for root, the owner) of the file `like` it replaces; an error if
    /// anything by that name exists (a symlink included).
    pub fn create(&mut self, name: &str, like: Ownership) -> Result<File> {
        let file = self
            .dir
            .create(name, like)
            .map_err(|e| anyhow!("{}: {e}", self.dir.display(name)))?;
        self.created.push(name.to_string());
        Ok(file)
    }

    /// Makes `file` (named `name`) durable, with a crash point before and after.
    pub fn sync(&self, name: &str, file: &File) -> Result<()> {
        sync(self.dir, name, file)
    }

    /// Points `CURRENT` at `manifest` (a file name), as LevelDB's `SetCurrentFile`:
    /// `NNNNNN.dbtmp` (the MANIFEST's number) written and synced with `CURRENT`'s
    /// permissions (`current`), renamed over `CURRENT`, the directory synced. The
    /// commit is complete once the rename is: a directory sync failing after it is
    /// a warning, not an error.
    pub fn replace_current(
        mut self,
        manifest: &str,
        number: u64,
        current: Ownership,
    ) -> Result<Option<anyhow::Error>> {
        // The new files' names made durable first, as LevelDB syncs the directory of
        // a new MANIFEST before pointing CURRENT at it.
        self.sync_dir("after the new files were written")?;
        crash_point();
        let temp = format!("{number:06}.dbtmp");
        let mut file = self.create(&temp, current)?;
        file.write_all(format!("{manifest}\n").as_bytes())
            .map_err(|e| anyhow!("{}: {e}", self.dir.display(&temp)))?;
        self.sync(&temp, &file)?;
        self.dir
            .rename(&temp, "CURRENT")
            .map_err(|e| anyhow!("{}: {e}", self.dir.display("CURRENT")))?;
        self.done = true;
        crash_point();
        let warning = self.sync_dir("after CURRENT was replaced").err();
        crash_point();
        Ok(warning)
    }

    fn sync_dir(&self, when: &str) -> Result<()> {
        self.dir.sync().map_err(|e| {
            anyhow!(
                "{}: fsync of the directory {when}: {e}",
                self.dir.path().display()
            )
        })
    }
}

impl Drop for Commit<'_> {
    fn drop(&mut self) {
        if !self.done {
            for name in &self.created {
                let _ = self.dir.remove(name);
            }
        }
    }
}

/// Makes `file` (named `name` in `dir`) durable, with a crash point before and
/// after; callable from any thread.
pub fn sync(dir: &DbDir, name: &str, file: &File) -> Result<()> {
    crash_point();
    file.sync_all()
        .map_err(|e| anyhow!("{}: fsync: {e}", dir.display(name)))?;
    crash_point();
    Ok(())
}

/// Refuses a directory without room for `needed` bytes.
pub fn check_room(dir: &DbDir, needed: u64) -> Result<()> {
    let free = dir
        .free_bytes()
        .map_err(|e| anyhow!("{}: statvfs: {e}", dir.path().display()))?;
    if free < needed {
        bail!(
            "{}: {free} bytes free, about {needed} needed for the new tables: nothing written",
            dir.path().display()
        );
    }
    Ok(())
}

/// A step of the commit at which the tests stop the process: with the
/// `crash-points` feature (the tests' build only), the N-th call sends the process
/// SIGKILL when `LEVELDB_BLOOM_REFILTER_CRASH_AT` is N, and SIGSTOP when
/// `LEVELDB_BLOOM_REFILTER_PAUSE_AT` is N (the test then changes the directory and
/// continues it); both ignored in a setuid process. Without the feature, nothing.
pub fn crash_point() {
    #[cfg(feature = "crash-points")]
    {
        use std::sync::atomic::{AtomicU32, Ordering};
        static STEP: AtomicU32 = AtomicU32::new(0);
        let step = STEP.fetch_add(1, Ordering::Relaxed) + 1;
        // SAFETY: getauxval only reads the process's auxiliary vector.
        if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
            return;
        }
        let at = |variable| {
            std::env::var(variable)
                .ok()
                .and_then(|n| n.parse::<u32>().ok())
                == Some(step)
        };
        for (variable, signal) in [
            ("LEVELDB_BLOOM_REFILTER_CRASH_AT", libc::SIGKILL),
            ("LEVELDB_BLOOM_REFILTER_PAUSE_AT", libc::SIGSTOP),
        ] {
            if at(variable) {
                // SAFETY: kill with this process's own id and a valid signal number.
                unsafe { libc::kill(libc::getpid(), signal) };
            }
        }
    }
}

#[cfg(test)]
mod tests;
