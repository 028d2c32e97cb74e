//! goleveldb (Debian's golang-github-syndtr-goleveldb-dev) as a writer and reader of
//! the tests' databases: tests/goleveldb built once per test process.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{succeed, REPO};

/// Writes a goleveldb database in `db` (goleveldb's own bloom filters, under the legacy
/// name) holding the keys of `keys`, a file of [`keys_file`]'s format.
pub fn goleveldb_write(db: &Path, keys: &Path) {
    succeed(
        Command::new(goleveldb_tool())
            .arg("write")
            .arg(db)
            .arg(keys),
    );
}

/// Reads the database `db` with goleveldb (its bloom filter at 10 bits per key):
/// every key of the file `keys` with its value, none of `absent`; its report line.
pub fn goleveldb_read(db: &Path, keys: &Path, absent: &Path) -> String {
    let output = succeed(
        Command::new(goleveldb_tool())
            .arg("read")
            .arg(db)
            .arg(keys)
            .arg(absent),
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The goleveldb tool (tests/goleveldb), built in GOPATH mode from Debian's packages
/// into target/tmp, once per test process (its tests share the build): under a name
/// of this process, then renamed into place, so that test processes building it at
/// once never run a half-written file.
pub fn goleveldb_tool() -> PathBuf {
    static TOOL: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    TOOL.get_or_init(build_goleveldb_tool).clone()
}

fn build_goleveldb_tool() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let (building, out) = (
        dir.join(format!("goleveldb-tool.{}", std::process::id())),
        dir.join("goleveldb-tool"),
    );
    succeed(
        Command::new("go")
            .args(["build", "-o"])
            .arg(&building)
            .arg(".")
            .current_dir(Path::new(REPO).join("tests/goleveldb"))
            .env("GOPATH", "/usr/share/gocode")
            .env("GO111MODULE", "off")
            .env(
                "GOCACHE",
                std::env::temp_dir().join("leveldb-bloom-gocache"),
            ),
    );
    std::fs::rename(&building, &out).unwrap();
    out
}
