//! What the integration tests of every crate share, written once: scratch
//! directories, where the release build is, the SKIPPED line of a test that
//! cannot run here (never a silent pass), the library's statistics ([`stats`]) and
//! the docs' sample outputs ([`samples`]).

pub mod samples;
pub mod stats;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory of its own under the system's temporary directory, not yet made,
/// removed with what it holds when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "leveldb-bloom-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        Self(dir)
    }

    /// A new scratch directory, made (empty).
    pub fn created() -> Self {
        let scratch = Self::new();
        std::fs::create_dir_all(scratch.dir()).expect("a scratch directory");
        scratch
    }

    pub fn dir(&self) -> &Path {
        &self.0
    }

    pub fn path(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temporary directory")
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Says on stderr that `test` did not run, and why: `SKIPPED: <test>: <why>`. Written
/// to the stream itself, past the test harness's capture (which takes only `print!`
/// and `eprint!`), so that the line shows in a passing run.
pub fn skipped(test: &str, why: &str) {
    let line = format!("SKIPPED: {test}: {why}\n");
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// Whether this process runs as root; otherwise `test` is [`skipped`], saying it
/// needs root for `what`.
pub fn root_for(test: &str, what: &str) -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        skipped(test, &format!("needs root ({what})"));
    }
    root
}

/// `target/release/deps`: the release build (`cargo build --release`, `make build`),
/// the C library as it ships, whatever profile the running test was built with
/// (`make test` builds the tests with the profile `release-tests`: see Cargo.toml).
/// The test executable is `target/<profile>/deps/<test>`.
pub fn release_deps_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let target = exe
        .ancestors()
        .nth(3)
        .expect("target/<profile>/deps/<test>");
    target.join("release/deps")
}
