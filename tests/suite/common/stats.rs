//! The summary this library writes at exit when `LEVELDB_BLOOM_STATS=FILE` is set
//! (read by [`StatsFile`] and [`Summary`], shared with the tool's tests in
//! test-support), and a host program for the statistics destinations' tests.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use super::Scratch;
pub use test_support::stats::{StatsFile, Summary};

/// `c_tests/stats_host.c`, built once per test binary: a host program linked to the
/// library, for the statistics destinations' tests.
pub fn stats_host() -> PathBuf {
    super::once("stats_host", || {
        super::Program::new("stats_host", super::Lang::C99, &["c_tests/stats_host.c"])
            .link_bloom()
            .build()
    })
}

/// A scratch directory that exists, and that `nobody` may enter.
pub fn open_scratch() -> Scratch {
    use std::os::unix::fs::PermissionsExt;
    let scratch = Scratch::new();
    std::fs::create_dir_all(scratch.dir()).unwrap();
    std::fs::set_permissions(scratch.dir(), std::fs::Permissions::from_mode(0o755)).unwrap();
    scratch
}

/// Starts `host` (a [`stats_host`] run that waits for its stdin to close), and
/// returns it once the first line it prints is `first` ("counting: …"): the
/// library has read its variable and opened what it names.
pub fn spawn_counting(host: &mut Command, first: &[u8]) -> Child {
    let mut child = host
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut printed = vec![0u8; first.len()];
    let stdout = child.stdout.as_mut().unwrap();
    stdout.read_exact(&mut printed).unwrap();
    assert_eq!(
        String::from_utf8_lossy(&printed),
        String::from_utf8_lossy(first)
    );
    child
}
