//! What the tests of the packages `make dist` builds share: finding them in
//! `target/dist`, installing from a registry (a SKIPPED line when it cannot be reached,
//! never a silent pass), and the tables of a database by name.

use std::path::{Path, PathBuf};
use std::process::Output;

/// `target/dist`, where `make dist` (scripts/build-dist) leaves the wheels and tarballs.
pub fn dir() -> PathBuf {
    let release = test_support::release_deps_dir();
    release
        .ancestors()
        .nth(2)
        .expect("target/release/deps")
        .join("dist")
}

/// The file `name` of `target/dist`; when `make dist` could not install its packaging
/// tools (PyPI unreachable: it said SKIPPED), `test` is skipped, saying so (None).
pub fn artifact(test: &str, name: &str) -> Option<PathBuf> {
    let path = dir().join(name);
    if path.is_file() {
        return Some(path);
    }
    let maturin = dir().with_file_name("dist-tools").join("bin/maturin");
    if !maturin.exists() {
        test_support::skipped(
            test,
            &format!("{name}: not built: make dist could not install maturin (PyPI)"),
        );
        return None;
    }
    panic!(
        "{} missing: run `make dist` (make test does)",
        path.display()
    );
}

/// This version's name for a package file: `{name}` with `VERSION` replaced.
pub fn versioned(name: &str) -> String {
    name.replace("VERSION", env!("CARGO_PKG_VERSION"))
}

/// Whether an install from a registry (`pip`, `npm`) went through: a failure to reach
/// the registry is a SKIPPED line for `test` (false); any other failure panics.
pub fn installed(test: &str, what: &str, output: &Output) -> bool {
    if output.status.success() {
        return true;
    }
    let said = String::from_utf8_lossy(&output.stderr);
    let unreachable = [
        "Temporary failure in name resolution",
        "NewConnectionError",
        "Network is unreachable",
        "ENOTFOUND",
        "EAI_AGAIN",
        "ETIMEDOUT",
        "ECONNREFUSED",
    ];
    if unreachable.iter().any(|sign| said.contains(sign)) {
        test_support::skipped(test, &format!("the registry for {what} cannot be reached"));
        return false;
    }
    panic!("installing {what} failed: {output:?}\n{said}");
}

/// The table files (`*.ldb`) of a database, by name, with their bytes.
pub fn tables(db: &Path) -> Vec<(String, Vec<u8>)> {
    let mut tables: Vec<(String, Vec<u8>)> = std::fs::read_dir(db)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "ldb"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect();
    tables.sort();
    assert!(!tables.is_empty(), "no table in {}", db.display());
    tables
}
