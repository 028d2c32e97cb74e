//! A database directory opened once, for writing: every later operation (opening,
//! creating, renaming, removing, syncing, listing) is relative to that handle, so
//! a directory swapped for another (or for a symlink) after the open changes
//! nothing of what `refilter` reads or writes. No name is ever followed through a
//! symlink: a symlinked file is refused, and what it points to is never shown.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

/// The flags of every open here: never through a symlink, never blocking on a FIFO,
/// never a controlling terminal, never inherited.
const SAFE: OFlags = OFlags::NOFOLLOW
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// The database directory's handle, and its path for messages only.
pub struct DbDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The owner and permissions a file of the database has, which a file replacing it
/// takes (never wider).
#[derive(Clone, Copy, Debug)]
pub struct Ownership {
    mode: u32,
    uid: u32,
    gid: u32,
}

impl DbDir {
    /// Opens `path`, which must be a directory itself, not a symlink to one.
    pub fn open(path: &Path) -> io::Result<Self> {
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | SAFE,
            Mode::empty(),
        )
        .map_err(|e| match e {
            rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR if is_symlink(path) => {
                refused("a symbolic link, not a directory (name the directory itself)")
            }
            e => e.into(),
        })?;
        Ok(Self {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// The path of `name` in the directory, for messages.
    pub fn display(&self, name: &str) -> String {
        self.path.join(name).display().to_string()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `name` for reading if it is a regular file; a symlink, FIFO, device,
    /// socket or directory is an error saying only what it is.
    pub fn open_regular(&self, name: &str) -> io::Result<File> {
        let fd = rustix::fs::openat(&self.fd, name, OFlags::RDONLY | SAFE, Mode::empty())
            .map_err(|e| self.not_followed(name, e))?;
        check_regular(&fd)?;
        Ok(File::from(fd))
    }

    /// Opens `name` for reading and writing, creating it (`mode`) if missing. A
    /// symlink or anything but a regular file is an error.
    pub fn open_or_create(&self, name: &str, mode: u32) -> io::Result<File> {
        let flags = OFlags::RDWR | SAFE;
        let fd = match rustix::fs::openat(
            &self.fd,
            name,
            flags | OFlags::CREATE | OFlags::EXCL,
            Mode::from_raw_mode(mode),
        ) {
            Ok(fd) => fd,
            Err(rustix::io::Errno::EXIST) => {
                rustix::fs::openat(&self.fd, name, flags, Mode::empty())
                    .map_err(|e| self.not_followed(name, e))?
            }
            Err(e) => return Err(self.not_followed(name, e)),
        };
        check_regular(&fd)?;
        Ok(File::from(fd))
    }

    /// Creates `name` for writing (and reading back), with the permissions and owner of `like` (as far
    /// as this process may give them; the umask narrows them further); an error
    /// if anything by that name exists, a symlink included.
    pub fn create(&self, name: &str, like: Ownership) -> io::Result<File> {
        let fd = rustix::fs::openat(
            &self.fd,
            name,
            OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | SAFE,
            Mode::from_raw_mode(like.mode),
        )?;
        let now = rustix::fs::fstat(&fd)?;
        if (now.st_uid, now.st_gid) != (like.uid, like.gid) {
            // Root writing a user's database gives the new file to that user, who
            // could not otherwise read it; anyone else keeps it (the call fails).
            let _ = rustix::fs::fchown(
                &fd,
                Some(rustix::fs::Uid::from_raw(like.uid)),
                Some(rustix::fs::Gid::from_raw(like.gid)),
            );
        }
        Ok(File::from(fd))
    }

    /// Whether `name` exists (as anything, a symlink included).
    pub fn exists(&self, name: &str) -> io::Result<bool> {
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => Ok(true),
            Err(rustix::io::Errno::NOENT) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Renames `from` over `to`, both in the directory.
    pub fn rename(&self, from: &str, to: &str) -> io::Result<()> {
        Ok(rustix::fs::renameat(&self.fd, from, &self.fd, to)?)
    }

    /// Removes the file `name` of the directory.
    pub fn remove(&self, name: &str) -> io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.fd, name, AtFlags::empty())?)
    }

    /// Makes the directory's entries durable.
    pub fn sync(&self) -> io::Result<()> {
        Ok(rustix::fs::fsync(&self.fd)?)
    }

    /// The bytes free to an unprivileged writer on the directory's file system.
    pub fn free_bytes(&self) -> io::Result<u64> {
        let stat = rustix::fs::fstatvfs(&self.fd)?;
        Ok(stat.f_bavail.saturating_mul(stat.f_frsize))
    }

    /// The names of the directory's entries.
    pub fn names(&self) -> io::Result<Vec<OsString>> {
        let mut names = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd)? {
            let name = entry?.file_name().to_bytes().to_vec();
            if name != b"." && name != b".." {
                names.push(OsString::from_vec(name));
            }
        }
        Ok(names)
    }

    /// The error of opening `name`: one that a symlink caused says so, and nothing
    /// of where it points.
    fn not_followed(&self, name: &str, e: rustix::io::Errno) -> io::Error {
        let symlink = || {
            rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink)
        };
        match e {
            rustix::io::Errno::LOOP if symlink() => {
                refused("a symbolic link, not a regular file (not followed)")
            }
            e => e.into(),
        }
    }
}

impl leveldb_table::db::manifest::DatabaseFiles for DbDir {
    fn path(&self) -> &Path {
        &self.path
    }

    fn open_regular(&self, name: &str) -> io::Result<File> {
        DbDir::open_regular(self, name)
    }

    fn is_symlink(&self, _name: &str) -> bool {
        // Never opened: a symlink is refused before it is read.
        false
    }
}

/// The permissions and owner of the open file `file`.
pub fn ownership(file: &File) -> io::Result<Ownership> {
    let stat = rustix::fs::fstat(file.as_fd())?;
    Ok(Ownership {
        mode: stat.st_mode & 0o777,
        uid: stat.st_uid,
        gid: stat.st_gid,
    })
}

/// An error if `fd` is not a regular file, saying what it is.
fn check_regular(fd: &OwnedFd) -> io::Result<()> {
    let what = match FileType::from_raw_mode(rustix::fs::fstat(fd)?.st_mode) {
        FileType::RegularFile => return Ok(()),
        FileType::Directory => "a directory",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        _ => "not a file",
    };
    Err(refused(&format!("{what}, not a regular file")))
}

fn refused(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("{what}: refused"))
}

fn is_symlink(path: &Path) -> bool {
    path.symlink_metadata().is_ok_and(|m| m.is_symlink())
}
