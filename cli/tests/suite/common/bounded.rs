//! Running the tool as an attacker's input would: under an address-space limit
//! (`RLIMIT_AS`, as `prlimit --as`), killed after a timeout, with its peak resident
//! memory measured, stdin, stdout and stderr as the case sets them.

use std::ffi::OsStr;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The address space every bounded run gets: the tool's own mappings (rayon's
/// threads' stacks included) and a few hundred megabytes of data.
pub const ADDRESS_SPACE: u64 = 1 << 30;

/// A finished run: exit code (`None`: killed by a signal), output, time, peak memory.
pub struct Run {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub seconds: f64,
    /// The processor time it used (user and system): what its work cost, however
    /// busy the machine was.
    pub cpu_seconds: f64,
    pub max_rss_kib: i64,
}

impl Run {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Prints what the case cost; fails if it panicked, was killed, or kept more
    /// than `rss_mib` resident.
    pub fn check(&self, case: &str, rss_mib: i64) {
        eprintln!(
            "{case}: exit {:?}, {:.2} s, {} KiB peak",
            self.code(),
            self.seconds,
            self.max_rss_kib
        );
        assert!(!self.stderr.contains("panicked"), "{case}: {}", self.stderr);
        assert!(
            self.code().is_some(),
            "{case}: killed by signal {:?}",
            self.status.signal()
        );
        assert_ne!(self.code(), Some(101), "{case}: a panic");
        assert!(
            self.max_rss_kib < rss_mib << 10,
            "{case}: {} KiB",
            self.max_rss_kib
        );
    }
}

/// The tool with `args`, set up by `setup` (its stdio), under [`ADDRESS_SPACE`]
/// and killed after `timeout`: a hang fails the test, never blocks it.
pub fn run_tool<S: AsRef<OsStr>>(
    args: &[S],
    timeout: Duration,
    setup: impl FnOnce(&mut Command),
) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"));
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    setup(&mut command);
    // SAFETY: between fork and exec only setrlimit(2), async-signal-safe, runs, on a
    // limit struct on this stack.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let start = Instant::now();
    let child = command.spawn().expect("the tool runs");
    let pid = child.id() as libc::pid_t;
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(timeout);
        // SAFETY: kill(2) with a pid and a signal number has no memory effects; if
        // the child was reaped already the pid names nothing of ours (or is reused,
        // a risk accepted in a test that failed by hanging anyway).
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let (status, stdout, stderr, usage) = wait_with_output_rusage(child);
    drop(watchdog);
    assert_ne!(
        status.signal(),
        Some(libc::SIGKILL),
        "hung: {:?}",
        args.iter().map(|a| a.as_ref()).collect::<Vec<_>>()
    );
    Run {
        status,
        stdout,
        stderr,
        seconds: start.elapsed().as_secs_f64(),
        cpu_seconds: [usage.ru_utime, usage.ru_stime]
            .iter()
            .map(|t| t.tv_sec as f64 + t.tv_usec as f64 / 1e6)
            .sum(),
        max_rss_kib: usage.ru_maxrss,
    }
}

/// `wait_with_output`, reaping with wait4(2) to get the child's own resource usage.
pub fn wait_with_output_rusage(mut child: Child) -> (ExitStatus, String, String, libc::rusage) {
    use std::io::Read;
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let err = read(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let out = read(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 writes the status and usage of our own child into the two
    // valid, exclusively borrowed out-parameters.
    let reaped = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(reaped, child.id() as libc::pid_t);
    (
        ExitStatus::from_raw(status),
        out.join().unwrap(),
        err.join().unwrap(),
        usage,
    )
}
