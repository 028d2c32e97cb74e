//! The swap in every way real programs load LevelDB, beyond a program linked to it
//! (tests/suite/dropin.rs) and Python (tests/suite/python.rs): a plugin linked to LevelDB opened
//! by a host with `dlopen`'s default flags (LevelDB `RTLD_LOCAL`), a C++ program
//! whose linker dropped `-lleveldb` (`--as-needed`), and a `dlclose` of this library
//! while a database uses its policy. Each test proves this library's code ran, from
//! inside the process (`leveldb_bloom_swap_status()` or the counting shim), and that
//! every key reads back.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{lib_dir, lib_path, once, succeed, tail, Lang, Program, Scratch};

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn plugin() -> PathBuf {
    once("plugin.so", || {
        Program::new("plugin.so", Lang::C99, &["c_tests/plugin.c"])
            .arg("-shared")
            .arg("-fPIC")
            .arg("-lleveldb")
            .build()
    })
}

fn plugin_host() -> PathBuf {
    once("plugin_host", || {
        Program::new("plugin_host", Lang::C99, &["c_tests/plugin_host.c"])
            .arg("-ldl")
            .build()
    })
}

/// A plugin linked to LevelDB, opened `RTLD_LOCAL` by a host that is not: with this
/// library preloaded, the plugin's bloom policies are swapped (70,000 of them live
/// at once, none NULL), its database reads back, and its own custom policy is
/// destroyed by LevelDB when it calls `leveldb_filterpolicy_destroy`.
#[test]
fn plugin_opened_rtld_local() {
    let dir = Scratch::new();
    let mut command = Command::new(plugin_host());
    command
        .args([plugin().to_str().unwrap(), dir.path(), "20000", "70000"])
        .env("LD_PRELOAD", lib_path());
    let shown = stdout(&succeed(&mut command));
    common::harness::assert_report("plugin", &shown);
    assert!(shown.contains("swap status: 3\n"), "{shown}");
    assert!(
        shown.contains("leveldb_filterpolicy_create_bloom: ")
            && shown.contains("libleveldb_bloom.so\n"),
        "{shown}"
    );
    assert!(
        shown.contains("read: 20000 present, 20000 absent"),
        "{shown}"
    );
    assert!(shown.contains("custom policy destroyed: yes"), "{shown}");
    let tables = std::fs::read_dir(dir.dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ldb"))
        .map(|path| std::fs::read(path).unwrap())
        .collect::<Vec<_>>();
    assert!(!tables.is_empty());
    let name = b"filter.leveldb.BuiltinBloomFilter2";
    assert!(tables
        .iter()
        .all(|t| t.windows(name.len()).any(|w| w == name)));
}

/// The same plugin under valgrind: no memory error, and no definite or indirect leak
/// beyond stock's. (When the host `dlclose`s the plugin, LevelDB, which only the
/// plugin needed, is unloaded with it and its process-wide objects are lost, swapped
/// or not: this library no longer keeps any LevelDB loaded.)
#[test]
fn plugin_opened_rtld_local_under_valgrind() {
    let leaks = |swapped: bool| {
        let dir = Scratch::new();
        let mut command = common::command("valgrind");
        command
            .args([
                "--error-exitcode=99",
                "--leak-check=full",
                "--errors-for-leak-kinds=none",
            ])
            .arg(plugin_host())
            .args([plugin().to_str().unwrap(), dir.path(), "2000", "1000"]);
        if swapped {
            command.env("LD_PRELOAD", lib_path());
        }
        let output = succeed(&mut command);
        common::harness::assert_report("plugin", &stdout(&output));
        let summary: Vec<String> = String::from_utf8_lossy(&output.stderr)
            .lines()
            .filter_map(|line| {
                let (_, kind) = line.split_once("== ")?;
                let kind = kind.trim_start();
                (kind.starts_with("definitely lost:") || kind.starts_with("indirectly lost:"))
                    .then(|| kind.to_string())
            })
            .collect();
        assert_eq!(summary.len(), 2, "valgrind's leak summary");
        summary
    };
    assert_eq!(leaks(true), leaks(false));
}

/// `c_tests/as_needed.cc` linked as `link` says.
fn as_needed_program(name: &str, bloom: bool) -> PathBuf {
    once(name, || {
        let program = Program::new(name, Lang::Cxx11, &["c_tests/as_needed.cc"]);
        let program = if bloom { program.link_bloom() } else { program };
        program.arg("-lleveldb").arg("-ldl").build()
    })
}

fn needed_libraries(exe: &Path) -> String {
    stdout(&succeed(Command::new("readelf").arg("-d").arg(exe)))
        .lines()
        .filter(|line| line.contains("(NEEDED)"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Linked `-lleveldb_bloom -lleveldb` under the default `--as-needed`, a program
/// whose only LevelDB symbol is `leveldb::NewBloomFilterPolicy` loses libleveldb;
/// the policy is this library's own object, which needs no LevelDB: the program
/// gets a working policy that builds the stock program's filter, silently, and no
/// LevelDB is ever loaded (the program asks the loader), not even when every soname
/// leads to a file that is not a library.
#[test]
fn as_needed_program_without_libleveldb_gets_a_working_policy() {
    let relinked = as_needed_program("as_needed_relinked", true);
    let needed = needed_libraries(&relinked);
    assert!(!needed.contains("libleveldb.so"), "{needed}");
    assert!(needed.contains("libleveldb_bloom.so"), "{needed}");

    let decoys = Scratch::new();
    std::fs::create_dir_all(decoys.dir()).unwrap();
    for soname in ["libleveldb.so.1d", "libleveldb.so.1", "libleveldb.so"] {
        std::fs::write(decoys.dir().join(soname), b"not a library").unwrap();
    }
    let stock = stdout(&succeed(&mut Command::new(as_needed_program(
        "as_needed_stock",
        false,
    ))));
    assert!(stock.contains("leveldb loaded before: yes\n"), "{stock}");
    common::harness::assert_report("as_needed", &stock);
    let filter = |shown: &str| {
        shown
            .lines()
            .find(|line| line.starts_with("filter:"))
            .expect("a filter")
            .to_string()
    };
    for decoyed in [false, true] {
        let mut command = Command::new(&relinked);
        if decoyed {
            command.env("LD_LIBRARY_PATH", decoys.dir());
        }
        let output = succeed(&mut command);
        let shown = stdout(&output);
        assert!(shown.contains("leveldb loaded before: no\n"), "{shown}");
        assert!(shown.contains("leveldb loaded after: no\n"), "{shown}");
        // No LevelDB in the process, so nothing to swap.
        assert!(shown.contains("swap status: 0\n"), "{shown}");
        assert!(shown.contains("missed: 0"), "{shown}");
        common::harness::assert_report("as_needed", &shown);
        assert_eq!(filter(&shown), filter(&stock));
        // "leveldb loaded after: no" above: the program asked the loader itself.
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.is_empty(), "{}", tail(&stderr));
    }
    // The soname link the program finds this library by is still found.
    assert!(lib_dir().join(common::SONAME).exists());
}

/// This library `dlopen`ed and `dlclose`d while a database still uses its policy:
/// it stays mapped (NODELETE), so further Gets, Puts and a compaction work, and the
/// counting shim shows the policy's callbacks, in this library, still answering.
#[test]
fn dlclose_while_a_database_uses_the_policy() {
    let dynamic = stdout(&succeed(Command::new("readelf").arg("-d").arg(lib_path())));
    assert!(dynamic.contains("NODELETE"), "{dynamic}");
    let exe = once("dlclose_db", || {
        Program::new("dlclose_db", Lang::C99, &["c_tests/dlclose_db.c"])
            .arg("-lleveldb")
            .arg("-ldl")
            .build()
    });
    let dir = Scratch::new();
    let output = succeed(
        Command::new(exe)
            .args([lib_path().to_str().unwrap(), dir.path(), "20000"])
            .env("LD_PRELOAD", common::count_shim()),
    );
    common::harness::assert_report("dlclose_db", &stdout(&output));
    let calls = common::filter_calls(&String::from_utf8_lossy(&output.stderr));
    assert!(
        calls["callbacks_in"].contains("libleveldb_bloom"),
        "{calls:?}"
    );
    let count = |key: &str| calls[key].parse::<u64>().unwrap();
    assert!(count("key_may_match") >= 20_000, "{calls:?}");
    assert!(count("said_no") > 0, "{calls:?}");
    assert!(count("create_filter") > 0, "{calls:?}");
}
