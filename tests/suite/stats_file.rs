//! The `LEVELDB_BLOOM_STATS` file as issue 48 attacked it: created only by a process
//! that used the library (a shell under `LD_PRELOAD` that changes directory leaves
//! no file anywhere), opened only at exit, a device node never opened (inotify
//! sees no open of it), a symlink in the path not followed.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::stats::{open_scratch as scratch, spawn_counting, stats_host as host};
use common::{command, lib_path};

const VARIABLE: &str = "LEVELDB_BLOOM_STATS";

/// The host asking 10 keys, with the variable set to `value`, in `cwd`.
fn host_run(value: &Path, cwd: &Path) -> Output {
    command("timeout")
        .arg("20")
        .arg(host())
        .args(["plain", "10"])
        .env(VARIABLE, value)
        .current_dir(cwd)
        .output()
        .unwrap()
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn a_shell_that_changes_directory_creates_no_file() {
    let scratch = scratch();
    std::fs::create_dir(scratch.dir().join("sub")).unwrap();
    std::fs::write(scratch.dir().join("sub/listed"), "").unwrap();
    for value in ["s.txt".to_string(), format!("{}/abs.txt", scratch.path())] {
        let run = command("timeout")
            .args(["20", "sh", "-c", "cd sub; ls"])
            .env("LD_PRELOAD", lib_path())
            .env(VARIABLE, &value)
            .current_dir(scratch.dir())
            .output()
            .unwrap();
        assert!(run.status.success(), "{run:?}");
        assert_eq!(String::from_utf8_lossy(&run.stdout), "listed\n");
        assert_eq!(String::from_utf8_lossy(&run.stderr), "");
        assert_eq!(
            files_under(scratch.dir()),
            [scratch.dir().join("sub/listed")],
            "{value}: no statistics file"
        );
    }
}

/// The file appears only when the process exits, in the directory it started in.
#[test]
fn the_file_is_created_at_exit_only() {
    let scratch = scratch();
    let mut run = command("timeout");
    run.arg("20")
        .arg(host())
        .args(["wait", "10"])
        .env(VARIABLE, "s.txt")
        .current_dir(scratch.dir());
    // The variable took effect.
    let mut child = spawn_counting(&mut run, b"counting: yes\n");
    assert!(!scratch.dir().join("s.txt").exists(), "not before the exit");
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    let text = std::fs::read_to_string(scratch.dir().join("s.txt")).unwrap();
    assert!(text.contains(" 10 filter queries"), "{text}");
}

/// Watches `dir` for opens (inotify's IN_OPEN, which an `O_PATH` open does not
/// raise).
struct Opens(std::os::fd::OwnedFd);

impl Opens {
    fn watch(dir: &Path) -> Self {
        use std::os::fd::FromRawFd;
        use std::os::unix::ffi::OsStrExt;
        // SAFETY: plain system calls on a descriptor this test owns and a
        // NUL-terminated path.
        unsafe {
            let fd = libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC);
            assert!(fd >= 0);
            let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).unwrap();
            assert!(libc::inotify_add_watch(fd, path.as_ptr(), libc::IN_OPEN) >= 0);
            Self(std::os::fd::OwnedFd::from_raw_fd(fd))
        }
    }

    /// Whether anything in the directory was opened since the watch began.
    fn any(&self) -> bool {
        use std::os::fd::AsRawFd;
        let mut events = [0u8; 4096];
        // SAFETY: a live buffer of the size passed.
        unsafe { libc::read(self.0.as_raw_fd(), events.as_mut_ptr().cast(), events.len()) > 0 }
    }
}

/// A copy of /dev/null (a device whose open has no effect of its own, standing for
/// one whose open has): refused at start by its type, never opened.
#[test]
fn a_device_node_is_refused_without_being_opened() {
    if !test_support::root_for("a_device_node_is_refused_without_being_opened", "mknod") {
        return;
    }
    let scratch = scratch();
    let node = scratch.dir().join("device");
    let status = Command::new("mknod")
        .args(["-m", "666"])
        .arg(&node)
        .args(["c", "1", "3"])
        .status()
        .unwrap();
    assert!(status.success());
    let opens = Opens::watch(scratch.dir());
    let run = host_run(&node, scratch.dir());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.contains("neither a regular file nor a FIFO, nor a terminal: not opened"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&run.stdout).contains("counting: no"));
    assert!(!opens.any(), "the device node was opened");
}

/// Whether this kernel has `openat2` (Linux 5.6), which refuses symlinks in every
/// component of a path.
fn kernel_has_openat2() -> bool {
    // SAFETY: all zeroes is a valid `open_how`; the path is NUL-terminated.
    let fd = unsafe {
        let mut how: libc::open_how = std::mem::zeroed();
        how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c"/".as_ptr(),
            &how,
            std::mem::size_of::<libc::open_how>(),
        )
    };
    if fd >= 0 {
        // SAFETY: opened just above.
        unsafe { libc::close(fd as i32) };
    }
    fd >= 0
}

#[test]
fn a_symlink_in_the_path_is_not_followed() {
    if !kernel_has_openat2() {
        test_support::skipped(
            "a_symlink_in_the_path_is_not_followed",
            "no openat2 in this kernel (docs/statistics.md)",
        );
        return;
    }
    let scratch = scratch();
    std::fs::create_dir(scratch.dir().join("real")).unwrap();
    std::os::unix::fs::symlink("real", scratch.dir().join("link")).unwrap();
    for value in ["link/s.txt", &format!("{}/link/s.txt", scratch.path())] {
        let run = host_run(Path::new(value), scratch.dir());
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(run.status.success(), "{stderr}");
        assert!(
            stderr.lines().count() == 1
                && stderr.contains("a symbolic link in its path, not followed"),
            "{value}: {stderr}"
        );
        assert!(
            !scratch.dir().join("real/s.txt").exists(),
            "{value}: followed"
        );
    }
}

/// A FIFO that has no reader when the process exits: one line then, no hang.
#[test]
fn a_fifo_without_a_reader_at_exit_says_so_then() {
    let scratch = scratch();
    let fifo = scratch.dir().join("fifo");
    assert!(command("mkfifo").arg(&fifo).status().unwrap().success());
    let run = host_run(&fifo, scratch.dir());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(
        stderr.lines().count() == 1 && stderr.contains("a FIFO without a reader"),
        "{stderr}"
    );
}

/// A pseudo-terminal (known by its device number, opened without becoming the
/// process's controlling terminal) gets the summary.
#[test]
fn a_terminal_gets_the_summary() {
    use std::os::fd::FromRawFd;
    let (mut master, mut replica) = (0, 0);
    let mut name = [0 as libc::c_char; 64];
    // SAFETY: room for both descriptors and a name of 64 bytes; no settings given.
    let made = unsafe {
        libc::openpty(
            &mut master,
            &mut replica,
            name.as_mut_ptr(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(made, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: fresh descriptors, each owned once.
    let (master, _replica) = unsafe {
        (
            std::fs::File::from_raw_fd(master),
            std::os::fd::OwnedFd::from_raw_fd(replica),
        )
    };
    // SAFETY: openpty wrote a NUL-terminated name.
    let name = unsafe { std::ffi::CStr::from_ptr(name.as_ptr()) };
    let scratch = scratch();
    let run = host_run(Path::new(name.to_str().unwrap()), scratch.dir());
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert_eq!(stderr, "");
    let mut text = vec![0; 4096];
    let n = (&master).read(&mut text).unwrap();
    let text = String::from_utf8_lossy(&text[..n]);
    assert!(text.contains(" 10 filter queries"), "{text}");
}
