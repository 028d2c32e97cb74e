//! The unit tests' scratch directories: one per test, fresh, removed when dropped.

use std::path::{Path, PathBuf};

/// A new empty directory under the system's temporary directory, named for the test
/// and this process; removed with what it holds when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    pub fn new(test: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("leveldb-bloom-cli-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Self(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
