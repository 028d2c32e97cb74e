//! LevelDB 1.23 built from Debian's source package by `tests/reach/build-leveldb`,
//! cached under `target/reach/leveldb` so that only the first run compiles.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use super::{cache_dir, lib_dir, once, repo, run};

/// The build directory of `variant` ("vendored", "old-abi" or "libcxx"), built or brought up
/// to date once per test run; its source is the sibling `src`.
pub fn leveldb(variant: &str) -> PathBuf {
    build(variant, None)
}

/// The old-ABI LevelDB cross-built for `multiarch` (aarch64-linux-gnu...), as
/// [`leveldb`] builds the others.
pub fn cross_old_abi_leveldb(multiarch: &str) -> PathBuf {
    build("old-abi", Some(multiarch))
}

fn build(variant: &str, multiarch: Option<&str>) -> PathBuf {
    // Every variant of every module's tests shares one download and one cache: one
    // build at a time in this process.
    static BUILDING: Mutex<()> = Mutex::new(());
    let key = format!(
        "leveldb-{variant}{}",
        multiarch.map(|m| format!("-{m}")).unwrap_or_default()
    );
    once(&key, || {
        let _one_at_a_time = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
        let mut command = super::command(repo().join("tests/reach/build-leveldb"));
        command.arg(cache_dir("reach/leveldb")).arg(variant);
        if variant == "vendored" {
            command.arg(repo()).arg(lib_dir());
        }
        command.args(multiarch);
        let started = std::time::Instant::now();
        let build = PathBuf::from(run(&mut command).trim());
        println!(
            "LevelDB {variant}: built or checked in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        build
    })
}

pub fn source_include(build: &Path) -> String {
    format!(
        "-I{}",
        build.with_file_name("src").join("include").display()
    )
}

/// DB::Open(const Options&, const std::string&, DB**) of the old ABI: `Ss`.
pub const OLD_ABI_DB_OPEN: &str = "_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_";

/// The old-ABI LevelDB's build directory, checked to be of the old ABI, and the
/// flags that link a program to it.
pub fn old_abi_leveldb() -> (PathBuf, Vec<String>) {
    let build = leveldb("old-abi");
    let exports = run(Command::new("nm")
        .arg("-D")
        .arg(build.join("libleveldb.so")));
    assert!(exports.contains(OLD_ABI_DB_OPEN), "not the old ABI");
    let flags = vec![
        source_include(&build),
        format!("-L{}", build.display()),
        format!("-Wl,-rpath,{}", build.display()),
        "-lleveldb".into(),
    ];
    (build, flags)
}
