//! `leveldb-bloom run`: real programs swapped through it. Debian's python3 with
//! python3-plyvel writes and reads a database under a relocated install (the tool and
//! library copied to a scratch prefix), the statistics proving that this library built
//! and queried its filters; `--print-env` lines `eval`ed by a shell do the same; the
//! command's exit status, signals and process are its own; the user's `LD_PRELOAD` is
//! kept; a tool installed alone, or without the default-bits object, says so; a
//! program the swap cannot reach is named once before it runs.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use test_support::stats::{StatsFile, Summary};
use test_support::Scratch;

use crate::common::{succeed, PYTHON, REPO};

const DEFAULT_BITS_OBJECT: &str = "libleveldb_bloom_default_bits.so";

/// The release build's directory (`cargo build --release --workspace`): the library
/// and objects as they ship.
fn release_dir() -> PathBuf {
    let deps = test_support::release_deps_dir();
    deps.parent().expect("target/release").to_path_buf()
}

/// A scratch prefix holding the tool in `bin` and, when `library`, the release
/// library in `lib` under its soname (plus, when `object`, the default-bits object):
/// `make install`'s layout, somewhere no build knew of.
struct Install {
    prefix: Scratch,
}

impl Install {
    fn new(library: bool, object: bool) -> Self {
        let prefix = Scratch::created();
        let (bin, lib) = (prefix.dir().join("bin"), prefix.dir().join("lib"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::copy(
            env!("CARGO_BIN_EXE_leveldb-bloom"),
            bin.join("leveldb-bloom"),
        )
        .unwrap();
        let release = release_dir();
        let built = release.join("libleveldb_bloom.so");
        if library {
            assert!(
                built.exists(),
                "{} missing: run cargo build --release --workspace",
                built.display()
            );
            std::fs::copy(&built, lib.join("libleveldb_bloom.so.0")).unwrap();
        }
        if object {
            std::fs::copy(
                release.join(DEFAULT_BITS_OBJECT),
                lib.join(DEFAULT_BITS_OBJECT),
            )
            .unwrap();
        }
        Self { prefix }
    }

    fn tool(&self) -> PathBuf {
        self.prefix.dir().join("bin/leveldb-bloom")
    }

    fn library(&self) -> PathBuf {
        self.prefix.dir().join("lib/libleveldb_bloom.so.0")
    }

    /// `leveldb-bloom run ARGS...` of this install.
    fn run(&self, args: &[&str]) -> Command {
        let mut command = Command::new(self.tool());
        command.arg("run").args(args).env_remove("LD_PRELOAD");
        command
    }
}

/// `tests/loaders/python_db.py plyvel MODE DIR` through Debian's python3-plyvel.
fn python_db(mode: &str, dir: &Scratch) -> Vec<String> {
    let script = Path::new(REPO).join("tests/loaders/python_db.py");
    vec![
        PYTHON.into(),
        script.to_str().unwrap().into(),
        "plyvel".into(),
        mode.into(),
        dir.path().into(),
    ]
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn plyvel_is_swapped_under_a_relocated_install_and_by_print_env() {
    let install = Install::new(true, false);
    let db = Scratch::new();
    let stats = StatsFile::new();
    let dest = format!("--stats={}", stats.path().display());
    let write = succeed(install.run(&[&dest, "--"]).args(python_db("write", &db)));
    assert!(!stderr(&write).contains("WARNING"), "{}", stderr(&write));
    stats.summary().assert_built();

    // The same install's lines, eval'ed by a shell, swap the read: its statistics on
    // stderr.
    let script = format!(
        "eval \"$('{}' run --print-env --stats)\" && exec \"$@\"",
        install.tool().display()
    );
    let read = succeed(
        Command::new("sh")
            .args(["-c", &script, "sh"])
            .args(python_db("read", &db))
            .env_remove("LD_PRELOAD"),
    );
    let shown = String::from_utf8_lossy(&read.stdout);
    assert!(shown.contains(", 0 wrong"), "{shown}");
    Summary::in_output(&stderr(&read)).assert_rejected(15_000);
}

#[test]
fn print_env_names_the_library_beside_the_tool() {
    let install = Install::new(true, false);
    let lib = install.library().display().to_string();
    let printed = |args: &[&str]| {
        let output = succeed(install.run(args).env("LD_PRELOAD", "libm.so.6"));
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(
        printed(&["--print-env", "--stats=/var/log/100% \"bloom\"", "--simd", "scalar"]),
        format!(
            "export LD_PRELOAD='{lib} libm.so.6'\nexport LEVELDB_BLOOM_STATS='/var/log/100% \"bloom\"'\n\
             export LEVELDB_BLOOM_SIMD='scalar'\n"
        )
    );
    // A service's LD_PRELOAD is not this shell's; systemd expands % specifiers.
    assert_eq!(
        printed(&["--print-env=systemd", "--stats=/var/log/100% \"bloom\""]),
        format!(
            "Environment=\"LD_PRELOAD={lib}\"\nEnvironment=\"LEVELDB_BLOOM_STATS=/var/log/100%% \\\"bloom\\\"\"\n"
        )
    );

    // A tool built in the repository finds the library cargo left beside it.
    let built = Command::new(release_dir().join("leveldb-bloom"))
        .args(["run", "--print-env"])
        .env_remove("LD_PRELOAD")
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&built.stdout);
    assert!(
        line.starts_with(&format!(
            "export LD_PRELOAD='{}/libleveldb_bloom.so",
            release_dir().display()
        )),
        "{line}{}",
        stderr(&built)
    );
}

#[test]
fn the_command_gets_the_variables_and_the_user_s_preloads_stay() {
    let install = Install::new(true, false);
    let output = succeed(
        install
            .run(&["--stats=stderr", "--simd", "scalar", "--", "sh", "-c"])
            .arg("printf '%s\\n' \"$LD_PRELOAD\" \"$LEVELDB_BLOOM_STATS\" \"$LEVELDB_BLOOM_SIMD\"")
            .env("LD_PRELOAD", "libm.so.6"),
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!(
            "{} libm.so.6\nstderr\nscalar\n",
            install.library().display()
        )
    );
}

#[test]
fn the_exit_status_signals_and_process_are_the_command_s() {
    let install = Install::new(true, false);
    let status = install.run(&["--", "sh", "-c", "exit 7"]).status().unwrap();
    assert_eq!(status.code(), Some(7));
    let killed = install
        .run(&["sh", "-c", "kill -TERM $$"])
        .status()
        .unwrap();
    assert_eq!(killed.signal(), Some(libc::SIGTERM), "{killed:?}");

    // The tool became the command (same process), which starts with SIGPIPE at its
    // default (Rust's runtime ignores it): `yes` into a closed pipe dies of it.
    let mut yes = install
        .run(&["yes"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    drop(yes.stdout.take());
    assert_eq!(yes.wait().unwrap().signal(), Some(libc::SIGPIPE));
    let pid = install
        .run(&["sh", "-c", "echo $$"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let id = pid.id();
    let shown = pid.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&shown.stdout).trim(),
        id.to_string()
    );

    let missing = install
        .run(&["--", "no-such-command-here"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(127), "{}", stderr(&missing));
    assert!(
        stderr(&missing).contains("no-such-command-here: "),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn a_tool_installed_alone_says_how_to_get_the_library() {
    let alone = Install::new(false, false);
    let output = alone.run(&["--", "true"]).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let said = stderr(&output);
    assert!(
        said.contains("no libleveldb_bloom.so.0 installed beside this tool")
            && said.contains("pip install leveldb-bloom")
            && said.contains(
                &alone
                    .prefix
                    .dir()
                    .join("lib/libleveldb_bloom.so.0")
                    .display()
                    .to_string()
            ),
        "{said}"
    );
}

/// Without the default-bits object, `--default-bits` fails naming it; with it,
/// plyvel with default options gets filters.
#[test]
fn default_bits_preloads_its_object_or_says_it_is_missing() {
    let without = Install::new(true, false);
    let output = without
        .run(&["--default-bits", "10", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr(&output).contains(&format!("{DEFAULT_BITS_OBJECT}: missing")),
        "{}",
        stderr(&output)
    );

    assert!(
        release_dir().join(DEFAULT_BITS_OBJECT).exists(),
        "no {DEFAULT_BITS_OBJECT} in the release build: cargo build --release --workspace"
    );
    let with = Install::new(true, true);
    let (db, stats) = (Scratch::new(), StatsFile::new());
    let dest = format!("--stats={}", stats.path().display());
    let script = Path::new(REPO).join("tests/loaders/plyvel_default_options.py");
    succeed(
        with.run(&["--default-bits", "10", &dest, PYTHON])
            .arg(script)
            .arg(db.dir()),
    );
    let summary = stats.summary();
    summary.assert_built();
    assert!(
        summary.text.contains("LEVELDB_BLOOM_DEFAULT_BITS=10"),
        "{}",
        summary.text
    );
}

/// A C++ program with Debian's LevelDB linked statically: `reach` says LD_PRELOAD
/// cannot reach it, and `run` says so once, then runs it all the same.
#[test]
fn a_program_the_swap_cannot_reach_is_named_once() {
    let static_a = format!("/usr/lib/{}-linux-gnu/libleveldb.a", std::env::consts::ARCH);
    assert!(
        Path::new(&static_a).exists(),
        "{static_a}: install libleveldb-dev (make deps)"
    );
    let program =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("run_static.{}", std::process::id()));
    succeed(
        Command::new("g++")
            .args(["-std=c++17", "-O1"])
            .arg(Path::new(REPO).join("c_tests/dropin_cxx.cc"))
            .arg(&static_a)
            .args(["-lsnappy", "-lpthread", "-o"])
            .arg(&program),
    );
    let install = Install::new(true, false);
    let db = Scratch::new();
    let output = succeed(&mut install.run(&[program.to_str().unwrap(), "write", db.path(), "100"]));
    let said = stderr(&output);
    let warnings: Vec<&str> = said
        .lines()
        .filter(|line| line.contains("WARNING"))
        .collect();
    assert_eq!(warnings.len(), 1, "{said}");
    assert!(
        warnings[0].contains("linked statically") && warnings[0].contains("route: "),
        "{said}"
    );
    std::fs::remove_file(program).unwrap();
}
