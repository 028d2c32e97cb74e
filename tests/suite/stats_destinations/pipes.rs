//! `LEVELDB_BLOOM_STATS` at a FIFO, and `stderr` at a pipe: with and without a
//! reader, closed, full. The summary is written while someone reads; otherwise one
//! line or nothing, never a hang or a SIGPIPE.

use std::io::Read;
use std::path::Path;
use std::process::Stdio;

use super::{output, passed, stderr_of, summaries, under_timeout};
use crate::common::command;
use crate::common::stats::{open_scratch as scratch, spawn_counting, stats_host as host};

/// A FIFO with a reader gets the summary; when the reader has gone by the exit, the
/// write fails with EPIPE: one line on stderr, no SIGPIPE, exit status 0.
#[test]
fn a_fifo_gets_the_summary_while_it_has_a_reader() {
    let scratch = scratch();
    let fifo = scratch.dir().join("fifo");
    assert!(command("mkfifo").arg(&fifo).status().unwrap().success());
    for reader_stays in [true, false] {
        let mut reader = Some(open_fifo_reader(&fifo));
        let mut run = under_timeout(&host(), &["wait", "10"], fifo.to_str().unwrap());
        // The destination is opened by then.
        let mut child = spawn_counting(run.stderr(Stdio::piped()), b"counting: ");
        if !reader_stays {
            drop(reader.take());
        }
        drop(child.stdin.take());
        let run = child.wait_with_output().unwrap();
        let stderr = stderr_of(&run);
        assert!(run.status.success(), "{} {stderr}", run.status);
        match reader {
            Some(mut reader) => {
                let mut text = String::new();
                reader.read_to_string(&mut text).unwrap();
                assert_eq!(summaries(&text), [10]);
                assert_eq!(stderr, "");
            }
            None => assert!(
                stderr.lines().count() == 1
                    && stderr.contains("statistics summary not written: a FIFO without a reader"),
                "{stderr}"
            ),
        }
    }
}

/// Opens `fifo` for reading without waiting for a writer.
fn open_fifo_reader(fifo: &Path) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .unwrap()
}

/// A pipe: (read end, write end).
fn pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: room for the two descriptors.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: fresh descriptors, each owned once.
    unsafe {
        (
            std::os::fd::OwnedFd::from_raw_fd(fds[0]),
            std::os::fd::OwnedFd::from_raw_fd(fds[1]),
        )
    }
}

/// `=stderr` with stderr a pipe whose reader is gone: exit status 0, not death by
/// SIGPIPE (141 from `timeout`).
#[test]
fn a_closed_pipe_as_stderr_is_no_sigpipe() {
    let (reader, writer) = pipe();
    drop(reader);
    let run =
        output(under_timeout(&host(), &["plain", "10"], "stderr").stderr(Stdio::from(writer)));
    assert!(passed(&run), "the variable took effect");
}

/// `=stderr` with stderr a full pipe (blocking, as a program's stderr is) that
/// nobody reads: the exit waits a moment, then goes on without the summary; no hang.
#[test]
fn a_full_pipe_as_stderr_is_no_hang() {
    use std::os::fd::AsRawFd;
    let (_reader, writer) = pipe();
    let fd = writer.as_raw_fd();
    // SAFETY: fcntl and write on a descriptor this test owns, from a live buffer.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        let page = [b'x'; 4096];
        while libc::write(fd, page.as_ptr().cast(), page.len()) > 0 {}
        while libc::write(fd, page.as_ptr().cast(), 1) > 0 {}
        libc::fcntl(fd, libc::F_SETFL, flags);
    }
    // A hang is `timeout`'s kill, which `passed` refuses; no clock is read here.
    let run =
        output(under_timeout(&host(), &["plain", "10"], "stderr").stderr(Stdio::from(writer)));
    assert!(passed(&run), "the variable took effect");
}
