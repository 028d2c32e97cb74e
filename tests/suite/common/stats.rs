//! The summary this library writes at exit when `LEVELDB_BLOOM_STATS=FILE` is set
//! (`src/stats_report.rs`): how a test proves, from inside a program it did not
//! write, that this library built and queried the program's filters.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::Scratch;

/// A file for `LEVELDB_BLOOM_STATS`, in a scratch directory of its own.
pub struct StatsFile {
    _dir: Scratch,
    path: PathBuf,
}

impl StatsFile {
    pub fn new() -> Self {
        let dir = Scratch::new();
        std::fs::create_dir_all(dir.dir()).expect("a scratch directory");
        let path = dir.dir().join("stats");
        Self { _dir: dir, path }
    }

    /// The value for `LEVELDB_BLOOM_STATS`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The counts of every process that wrote here, summed; panics when none did
    /// (this library was not loaded, or the process did not exit normally).
    pub fn summary(&self) -> Summary {
        let text = std::fs::read_to_string(&self.path).unwrap_or_else(|e| {
            panic!(
                "no filter statistics in {} ({e}): was libleveldb_bloom loaded?",
                self.path.display()
            )
        });
        // Beside the summaries: the lines naming LevelDBs the swap cannot reach.
        let lines: Vec<Summary> = text
            .lines()
            .filter(|line| !line.starts_with("leveldb-bloom: "))
            .map(Summary::parse)
            .collect();
        assert!(!lines.is_empty(), "an empty statistics file");
        Summary {
            queries: lines.iter().map(|s| s.queries).sum(),
            absent: lines.iter().map(|s| s.absent).sum(),
            may_match: lines.iter().map(|s| s.may_match).sum(),
            filters_built: lines.iter().map(|s| s.filters_built).sum(),
            text,
        }
    }
}

/// Counts of a summary (see `src/stats_report.rs` for the line).
#[derive(Debug)]
pub struct Summary {
    pub queries: u64,
    pub absent: u64,
    pub may_match: u64,
    pub filters_built: u64,
    /// The lines as written.
    pub text: String,
}

impl Summary {
    /// One line `leveldb-bloom stats (pid N): Q filter queries, A answered absent
    /// (...), ...; F filters built, ...`.
    pub fn parse(line: &str) -> Self {
        assert!(line.starts_with("leveldb-bloom stats (pid "), "{line}");
        let count = |label: &str| -> u64 {
            let end = line
                .find(label)
                .unwrap_or_else(|| panic!("{label:?} in {line}"));
            line[..end]
                .rsplit(' ')
                .next()
                .and_then(|number| number.parse().ok())
                .unwrap_or_else(|| panic!("a count before {label:?} in {line}"))
        };
        Self {
            queries: count(" filter queries"),
            absent: count(" answered absent"),
            may_match: count(" may match"),
            filters_built: count(" filters built"),
            text: line.to_string(),
        }
    }

    /// This library built filters (a write).
    pub fn assert_built(&self) {
        assert!(
            self.filters_built > 0,
            "no filter built here: {}",
            self.text
        );
    }

    /// This library's filters answered "absent" at least `absent` times (a read of
    /// absent keys: at 10 bits per key, all but about 1% of them).
    pub fn assert_rejected(&self, absent: u64) {
        assert!(
            self.absent >= absent && self.queries >= self.absent,
            "fewer than {absent} queries answered absent: {}",
            self.text
        );
    }
}

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
