//! Building and running the C and C++ harnesses of `c_tests/` from `cargo test`.
//!
//! Each harness is compiled with the `cc` crate's compiler and the project's strict
//! flags (-Wall -Wextra -Werror -pedantic), linked to the freshly built
//! `libleveldb_bloom.so`, and run; a harness passes when it exits 0 and reports `NAME: N checks, 0 failed`
//! ([`harness`], the shared runner).

pub mod as_stock;
pub mod harness;
mod program;
pub mod source_leveldb;
pub mod stats;

pub use program::{Lang, Program};
pub use test_support::Scratch;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub const SONAME: &str = "libleveldb_bloom.so.0";

/// The directory holding the shared and static libraries of the release build (the
/// library as it ships, whatever profile built the tests), with the soname link the
/// loader looks for: `target/release/deps`. (Cargo copies them up to
/// `target/release` only for `cargo build`, so the copies there may be missing or
/// from another build.)
pub fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = test_support::release_deps_dir();
        let lib = dir.join("libleveldb_bloom.so");
        assert!(
            lib.exists(),
            "{} was not built: `cargo test` does not build the C library; run `cargo build \
             --release` (or `make test`, which does) first",
            lib.display()
        );
        let link = dir.join(SONAME);
        let _ = std::fs::remove_file(&link);
        // Another test process may have made the same link in between: fine.
        match std::os::unix::fs::symlink("libleveldb_bloom.so", &link) {
            Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => panic!("soname link: {e}"),
            _ => {}
        }
        dir
    })
}

pub fn lib_path() -> PathBuf {
    lib_dir().join("libleveldb_bloom.so")
}

/// `libleveldb_bloom_default_bits.so` of the release build, beside the library.
pub fn default_bits_path() -> PathBuf {
    let path = lib_dir().join("libleveldb_bloom_default_bits.so");
    assert!(
        path.exists(),
        "{} was not built: run `cargo build --release --workspace`",
        path.display()
    );
    path
}

pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `target/<what>`: what the tests download and build once and keep between runs
/// (`scripts/ensure-leveldb` installs there too).
pub fn cache_dir(what: &str) -> PathBuf {
    let target = lib_dir().ancestors().nth(2).expect("target/<profile>/deps");
    target.join(what)
}

/// This build's command-line tool, `target/<profile>/leveldb-bloom` (`cargo build
/// --workspace` makes it; `make test` does).
pub fn tool() -> PathBuf {
    let tool = lib_dir()
        .parent()
        .expect("target/<profile>")
        .join("leveldb-bloom");
    assert!(
        tool.exists(),
        "{} missing: run cargo build --release --workspace",
        tool.display()
    );
    tool
}

/// A command for a harness or tool. `cargo test` puts `target/<profile>` on
/// `LD_LIBRARY_PATH`, where a `libleveldb_bloom.so` left by an earlier `make build`
/// would shadow the library this run built; the harnesses find theirs by rpath.
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    command.env_remove("LD_LIBRARY_PATH");
    command
}

/// `leveldb-bloom reach FILES`: its exit status and stdout.
pub fn reach(files: &[&Path]) -> (i32, String) {
    let output = command(tool())
        .arg("reach")
        .args(files)
        .output()
        .expect("the tool runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    (output.status.code().expect("an exit status"), stdout)
}

/// Runs a command and panics, showing its stdout and the end of its stderr, unless
/// it exits 0; returns its output.
pub fn succeed(command: &mut Command) -> Output {
    let output = command
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({})\nstdout:\n{}\nstderr (end):\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        tail(&String::from_utf8_lossy(&output.stderr)),
    );
    output
}

/// Runs a command as [`succeed`] does; returns its stdout.
pub fn run(command: &mut Command) -> String {
    String::from_utf8_lossy(&succeed(command).stdout).into_owned()
}

/// The last 4,000 bytes or so of `text`, starting at a character.
pub fn tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(4000);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Runs a program built with [`Program::sanitize`]: any sanitizer report, leaks
/// included, fails the run. A failed allocation returns NULL, as C promises and as
/// the library's out-of-memory paths expect, instead of aborting the program.
pub fn sanitized(program: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .env(
            "ASAN_OPTIONS",
            "detect_leaks=1:allocator_may_return_null=1:halt_on_error=1",
        )
        .env("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1");
    command
}

/// `program args…` under valgrind's memcheck: any error or definite/indirect/possible
/// leak fails the run.
pub fn valgrind(program: &Path) -> Command {
    valgrind_failing_on(program, "definite,indirect,possible")
}

/// `program args…` under valgrind's memcheck: any error, or a leak of the given kinds
/// (valgrind's `--errors-for-leak-kinds` list), fails the run. Programs on LevelDB
/// need "definite,indirect": its background thread is still running at exit.
pub fn valgrind_failing_on(program: &Path, leak_kinds: &str) -> Command {
    let mut command = command("valgrind");
    command.args(["--quiet", "--error-exitcode=99", "--leak-check=full"]);
    command.arg(format!("--errors-for-leak-kinds={leak_kinds}"));
    command.arg(format!("--show-leak-kinds={leak_kinds}"));
    command.arg(program);
    command
}

/// The allocation-failure shim `c_tests/failmalloc.c`, built once per test binary, for
/// `LD_PRELOAD`: a program finds its controls with `failmalloc_load()`
/// (`c_tests/failmalloc.h`).
pub fn failmalloc_shim() -> &'static Path {
    static SHIM: OnceLock<PathBuf> = OnceLock::new();
    SHIM.get_or_init(|| {
        Program::new("libfailmalloc.so", Lang::C99, &["c_tests/failmalloc.c"])
            .arg("-shared")
            .arg("-fPIC")
            .build()
    })
}

/// `build()` once per name in this test binary, whichever test asks first; the
/// others wait for it.
pub fn once(name: &str, build: impl FnOnce() -> PathBuf) -> PathBuf {
    use std::collections::BTreeMap;
    use std::sync::{Arc, Mutex};
    static BUILT: Mutex<BTreeMap<String, Arc<OnceLock<PathBuf>>>> = Mutex::new(BTreeMap::new());
    let cell = Arc::clone(BUILT.lock().unwrap().entry(name.to_string()).or_default());
    cell.get_or_init(build).clone()
}

/// The contents of a database's table files, sorted (names and creation order do
/// not matter, bytes do), after checking there are several and each carries a
/// `filter.leveldb.BuiltinBloomFilter2` block.
pub fn tables_with_filters(dir: &Scratch) -> Vec<Vec<u8>> {
    let tables = tables(dir);
    for table in &tables {
        let name = b"filter.leveldb.BuiltinBloomFilter2";
        assert!(
            table.windows(name.len()).any(|window| window == name),
            "a table without a bloom filter block"
        );
    }
    tables
}

/// The contents of a database's table files, sorted, after checking there are
/// several.
pub fn tables(dir: &Scratch) -> Vec<Vec<u8>> {
    let mut tables: Vec<Vec<u8>> = std::fs::read_dir(dir.dir())
        .expect("the database directory")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ldb"))
        .map(|path| std::fs::read(path).unwrap())
        .collect();
    tables.sort();
    assert!(
        tables.len() >= 2,
        "expected several tables, found {}",
        tables.len()
    );
    tables
}

/// The counting shim `c_tests/count_filter_calls.cc`, for `LD_PRELOAD` ahead of this
/// library: it counts the calls LevelDB makes to the filter policies the program
/// gives it, and reports them on stderr at exit (see [`filter_calls`]).
pub fn count_shim() -> PathBuf {
    once("count_filter_calls.so", || {
        Program::new(
            "count_filter_calls.so",
            Lang::Cxx11,
            &["c_tests/count_filter_calls.cc"],
        )
        .arg("-shared")
        .arg("-fPIC")
        .arg("-ldl")
        .build()
    })
}

/// The counting shim's report in a program's stderr: `policies`, `create_filter`,
/// `key_may_match`, `said_no` (counts) and `callbacks_in` (a path).
pub fn filter_calls(stderr: &str) -> std::collections::BTreeMap<String, String> {
    let report = stderr
        .lines()
        .find_map(|line| line.strip_prefix("filter calls: "))
        .expect("the counting shim reports");
    report
        .split(' ')
        .filter_map(|pair| pair.split_once('='))
        .map(|(key, value)| (key.to_string(), value.to_string()))
        .collect()
}

/// This build's `libleveldb_bloom.so`, opened privately (`RTLD_LOCAL`; LevelDB is not
/// loaded with it), and the function `name` (NUL-terminated) from it, as the function
/// pointer type `F`: for tests that call the exported functions in their own process.
pub fn our_function<F: Copy>(name: &str) -> F {
    static LIBRARY: OnceLock<usize> = OnceLock::new();
    let library = *LIBRARY.get_or_init(|| {
        let path = std::ffi::CString::new(lib_path().into_os_string().into_encoded_bytes())
            .expect("a path without NUL");
        // SAFETY: a NUL-terminated path; the library stays loaded for the process.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!handle.is_null(), "cannot dlopen {}", lib_path().display());
        handle as usize
    });
    assert!(name.ends_with('\0'), "{name:?} is not NUL-terminated");
    // SAFETY: a live handle and a NUL-terminated name.
    let symbol = unsafe { libc::dlsym(library as *mut libc::c_void, name.as_ptr().cast()) };
    assert!(!symbol.is_null(), "{name} is not exported");
    assert_eq!(
        std::mem::size_of::<F>(),
        std::mem::size_of::<*mut libc::c_void>()
    );
    // SAFETY: F is the function pointer type the caller declares for `name`, the size
    // of a pointer (checked), and the symbol is that function.
    unsafe { std::mem::transmute_copy(&symbol) }
}

/// Declares this library's exported functions for a test, as an `extern "C"` block
/// would, each found with [`our_function`] in the library this build made.
#[macro_export]
macro_rules! our_functions {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;)*) => {
        $(
            /// # Safety
            /// As the C function of this name requires.
            unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
                let function: unsafe extern "C" fn($($ty),*) $(-> $ret)? =
                    $crate::common::our_function(concat!(stringify!($name), "\0"));
                // SAFETY: the caller's promises, passed on.
                unsafe { function($($arg),*) }
            }
        )*
    };
}
