//! The summary libleveldb_bloom writes at exit when `LEVELDB_BLOOM_STATS=FILE` is set
//! (`src/stats_report.rs`): how a test of any crate proves, from inside a program it
//! did not write, that this library built and queried the program's filters.

use std::path::{Path, PathBuf};

use crate::Scratch;

/// A file for `LEVELDB_BLOOM_STATS`, in a scratch directory of its own.
pub struct StatsFile {
    _dir: Scratch,
    path: PathBuf,
}

impl Default for StatsFile {
    fn default() -> Self {
        Self::new()
    }
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
        Summary::sum(&lines, text)
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
    /// The summary lines in a program's output (`LEVELDB_BLOOM_STATS=stderr`), summed;
    /// panics when there is none.
    pub fn in_output(output: &str) -> Self {
        let lines: Vec<Summary> = output
            .lines()
            .filter(|line| line.starts_with("leveldb-bloom stats (pid "))
            .map(Summary::parse)
            .collect();
        Self::sum(&lines, output.to_string())
    }

    /// `lines` added up; `text` is what they were read from.
    fn sum(lines: &[Summary], text: String) -> Self {
        assert!(!lines.is_empty(), "no statistics line in: {text}");
        Summary {
            queries: lines.iter().map(|s| s.queries).sum(),
            absent: lines.iter().map(|s| s.absent).sum(),
            may_match: lines.iter().map(|s| s.may_match).sum(),
            filters_built: lines.iter().map(|s| s.filters_built).sum(),
            text,
        }
    }

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
