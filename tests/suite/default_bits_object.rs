//! Default bits live in their own object, `libleveldb_bloom_default_bits.so`
//! (`default-bits/`), which interposes LevelDB's open functions only where a user
//! preloads it, forwards each call as the linker would bind it without the object,
//! and never writes the caller's `Options` (issue 56: each case as an attacker ran
//! it against the open functions the library itself used to define). Stock beside
//! the object, each prints and exits as stock.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::default_bits::preload_both;
use common::as_stock::host;
use common::{lib_path, once, Lang, Program, Scratch};

const VARIABLE: &str = "LEVELDB_BLOOM_DEFAULT_BITS";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `command` under a timeout, with `preload` and the variable at `bits` if given.
fn run(command: &Command, preload: Option<&str>, bits: Option<&str>) -> Output {
    let mut timed = common::command("timeout");
    timed
        .arg("120")
        .arg(command.get_program())
        .args(command.get_args());
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            timed.env(key, value);
        }
    }
    if let Some(preload) = preload {
        timed.env("LD_PRELOAD", preload);
    }
    if let Some(bits) = bits {
        timed.env(VARIABLE, bits);
    }
    timed.output().expect("runs")
}

/// Stock and with both objects preloaded (with and without the variable): the
/// same exit status and output, which is returned.
fn as_stock(command: impl Fn() -> Command) -> String {
    let stock = run(&command(), None, None);
    assert!(stock.status.success(), "{stock:?}");
    for bits in [None, Some("10")] {
        let swapped = run(&command(), Some(&preload_both()), bits);
        assert_eq!(swapped.status.code(), stock.status.code(), "{swapped:?}");
        assert_eq!(text(&swapped.stdout), text(&stock.stdout), "{swapped:?}");
    }
    text(&stock.stdout)
}

fn plugin(name: &str, source: &str) -> PathBuf {
    once(name, || {
        ["-shared", "-fPIC", "-lleveldb", "-lpthread", "-ldl"]
            .into_iter()
            .fold(Program::new(name, Lang::C99, &[source]), Program::arg)
            .build()
    })
}

#[test]
fn constructor_opening_a_database_on_a_worker_it_joins() {
    let plugin = plugin("default_bits_ctor_open.so", "c_tests/ctor_open.c");
    let dir = Scratch::new();
    let shown = as_stock(|| {
        let mut command = common::command(host());
        command.arg(&plugin).env("CTOR_OPEN_DIR", dir.path());
        command
    });
    assert_eq!(shown, "database opened by a constructor's worker: yes\n");
}

fn options_program() -> PathBuf {
    once("default_bits_options_untouched", || {
        Program::new(
            "default_bits_options_untouched",
            Lang::Cxx11,
            &["c_tests/options_untouched.cc"],
        )
        .arg("-lleveldb")
        .build()
    })
}

fn options_mode(mode: &str) -> String {
    let exe = options_program();
    let scratch = Scratch::new();
    std::fs::create_dir_all(scratch.dir()).unwrap();
    let counter = std::cell::Cell::new(0);
    as_stock(|| {
        counter.set(counter.get() + 1);
        let dir = scratch.dir().join(format!("run{}", counter.get()));
        let mut command = common::command(&exe);
        command.arg(mode).arg(dir);
        command
    })
}

#[test]
fn read_only_options_are_never_written() {
    assert_eq!(
        options_mode("readonly"),
        "opened with read-only options: yes\n"
    );
}

#[test]
fn an_open_that_throws_leaves_the_options_as_they_were() {
    assert_eq!(
        options_mode("throws"),
        "thrown: yes; filter policy left in the options: no\nopened again: yes\n"
    );
}

#[test]
fn an_open_inside_an_open_on_one_thread() {
    assert_eq!(
        options_mode("nested"),
        "outer open: yes; nested open: yes\n"
    );
}

#[test]
fn the_swap_library_defines_no_leveldb_open() {
    let exe = once("default_bits_weak_leveldb", || {
        Program::new(
            "default_bits_weak_leveldb",
            Lang::C99,
            &["c_tests/weak_leveldb.c"],
        )
        .build()
    });
    let alone = run(
        &common::command(&exe),
        Some(&lib_path().display().to_string()),
        Some("10"),
    );
    assert_eq!(text(&alone.stdout), "leveldb_open: absent\n");
    assert_eq!(text(&alone.stderr), "");
}

/// The default-options C program (`c_tests/dropin_c.c`, no policy).
fn default_options_program() -> PathBuf {
    once("default_bits_object_c_0", || {
        ["-lleveldb", "-ldl", "-DDROPIN_BITS_PER_KEY=0"]
            .into_iter()
            .fold(
                Program::new(
                    "default_bits_object_c_0",
                    Lang::C99,
                    &["c_tests/dropin_c.c"],
                ),
                Program::arg,
            )
            .build()
    })
}

/// Whether the tables under `dir` carry bloom filter blocks.
fn carries_filters(dir: &Scratch) -> bool {
    let name = b"filter.leveldb.BuiltinBloomFilter2";
    std::fs::read_dir(dir.dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ldb"))
        .any(|path| {
            let table = std::fs::read(path).unwrap();
            table.windows(name.len()).any(|window| window == name)
        })
}

/// The default-options program with `preload`, the variable at 10: it must work,
/// and its tables carry filters exactly when `filters`.
fn writes_with(preload: &str, filters: bool) {
    let dir = Scratch::new();
    let mut command = common::command(default_options_program());
    command.args(["write", dir.path(), "2000"]);
    let output = run(&command, Some(preload), Some("10"));
    assert!(output.status.success(), "{preload}: {output:?}");
    assert_eq!(carries_filters(&dir), filters, "{preload}");
}

#[test]
fn without_the_object_the_variable_changes_nothing() {
    writes_with(&lib_path().display().to_string(), false);
}

#[test]
fn wrappers_and_renamed_copies_never_loop() {
    let wrapper = once("libdefault_bits_open_wrapper.so", || {
        ["-shared", "-fPIC", "-ldl"]
            .into_iter()
            .fold(
                Program::new(
                    "libdefault_bits_open_wrapper.so",
                    Lang::C99,
                    &["c_tests/open_wrapper.c"],
                ),
                Program::arg,
            )
            .build()
    });
    let copies = Scratch::new();
    std::fs::create_dir_all(copies.dir()).unwrap();
    let copy = |name: &str| -> PathBuf {
        let path = copies.dir().join(name);
        std::fs::copy(common::default_bits_path(), &path).unwrap();
        path
    };
    let (first, second) = (copy("libcopy_one.so"), copy("libcopy_two.so"));
    let shown = |paths: &[&Path]| {
        paths
            .iter()
            .map(|path| path.display().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let swap = lib_path();
    for order in [
        [&wrapper, &first, &second, &swap],
        [&first, &wrapper, &second, &swap],
        [&first, &second, &swap, &wrapper],
    ] {
        writes_with(&shown(&order.map(PathBuf::as_path)), true);
    }
}

#[test]
fn a_bad_value_is_said_once_short_and_only_where_a_database_opens() {
    let huge = "9".repeat(100_000);
    let mut command = common::command(default_options_program());
    let dir = Scratch::new();
    command.args(["write", dir.path(), "100"]);
    let output = run(&command, Some(&preload_both()), Some(&huge));
    assert!(output.status.success(), "{output:?}");
    let said = text(&output.stderr);
    let lines: Vec<&str> = said
        .lines()
        .filter(|line| line.contains(VARIABLE))
        .collect();
    assert_eq!(lines.len(), 1, "{said}");
    assert!(
        lines[0].len() < 200 && lines[0].contains(&"9".repeat(32)),
        "{}",
        lines[0]
    );
    let mut shell = Command::new("sh");
    shell.args(["-c", "true; ls / >/dev/null; cat </dev/null"]);
    let quiet = run(&shell, Some(&preload_both()), Some("ten"));
    assert!(quiet.status.success(), "{quiet:?}");
    assert_eq!(text(&quiet.stderr), "");
}
