//! The swap in every way real programs load LevelDB, beyond a program linked to it
//! (tests/dropin.rs): Debian's python3-plyvel and LevelDB's C API through `ctypes`
//! (both load libleveldb `RTLD_LOCAL`), a plugin linked to LevelDB opened by a host
//! with `dlopen`'s default flags, a C++ program whose linker dropped `-lleveldb`
//! (`--as-needed`), and a `dlclose` of this library while a database uses its
//! policy. Each test proves this library's code ran, from inside the process
//! (`leveldb_bloom_swap_status()`, the dynamic linker's bindings, or the counting
//! shim), and that every key reads back.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{lib_dir, lib_path, once, Lang, Program, Scratch};

/// Debian's python3, which has python3-plyvel (the first python3 on PATH may not).
const PYTHON: &str = "/usr/bin/python3";

/// Runs `command` and returns its output, panicking unless it exits 0.
fn succeed(command: &mut Command) -> Output {
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

fn tail(text: &str) -> &str {
    &text[text.len().saturating_sub(4000)..]
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// `tests/loaders/python_db.py BINDING MODE DIR`, with this library preloaded (and
/// named to the script, which reads the swap status from inside) when `swapped`.
fn python(binding: &str, mode: &str, dir: &Scratch, swapped: bool) -> Output {
    let mut command = Command::new(PYTHON);
    command
        .arg(common::repo().join("tests/loaders/python_db.py"))
        .args([binding, mode, dir.path()]);
    if swapped {
        command
            .env("LD_PRELOAD", lib_path())
            .env("LEVELDB_BLOOM_LIB", lib_path())
            .env("LD_DEBUG", "bindings");
    }
    succeed(&mut command)
}

/// Whether the dynamic linker bound some object's `symbol` to this library.
fn bound_to_us(output: &Output, symbol: &str) -> bool {
    let stderr = String::from_utf8_lossy(&output.stderr);
    stderr
        .lines()
        .any(|line| line.contains("libleveldb_bloom.so") && line.ends_with(&format!("`{symbol}'")))
}

/// A Python program's database written stock and swapped: the same tables, with
/// filters; the swap in effect from inside the process; each database read back
/// right by the other.
fn prove_python_swap(binding: &str) {
    let (stock_db, swapped_db) = (Scratch::new(), Scratch::new());
    let stock = python(binding, "write", &stock_db, false);
    assert!(stdout(&stock).contains("swap status: absent"));
    let swapped = python(binding, "write", &swapped_db, true);
    assert!(
        stdout(&swapped).contains("swap status: 3\n"),
        "{}",
        stdout(&swapped)
    );
    assert!(
        bound_to_us(&swapped, "_ZN7leveldb20NewBloomFilterPolicyEi"),
        "{binding}: LevelDB's bloom policy was not this library's"
    );
    assert!(
        common::tables_with_filters(&stock_db) == common::tables_with_filters(&swapped_db),
        "{binding}: tables differ from stock"
    );
    for (dir, swapped) in [(&stock_db, true), (&swapped_db, false)] {
        let read = stdout(&python(binding, "read", dir, swapped));
        assert!(read.contains(", 0 wrong"), "{read}");
        assert!(read.contains("read: 18000 present"), "{read}");
        if swapped {
            assert!(read.contains("swap status: 3\n"), "{read}");
        }
    }
}

#[test]
fn python_plyvel_extension_module() {
    prove_python_swap("plyvel");
}

#[test]
fn python_ctypes_on_leveldb_c_api() {
    prove_python_swap("ctypes");
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

/// Python `multiprocessing` with the fork start method under the swap: threads of
/// the parent create and destroy bloom policies through LevelDB's C API (ctypes)
/// while the main thread forks 200 plyvel workers, each with a database of its own.
/// Every worker finishes with every key found, the swap active inside it; stock
/// LevelDB, the same program, as the control.
#[test]
fn python_multiprocessing_workers_forked_during_policy_churn() {
    for swapped in [false, true] {
        let dir = Scratch::new();
        let mut command = Command::new(PYTHON);
        command
            .arg(common::repo().join("tests/loaders/fork_workers.py"))
            .args(["200", dir.path()]);
        if swapped {
            command
                .env("LD_PRELOAD", lib_path())
                .env("LEVELDB_BLOOM_LIB", lib_path());
        }
        let out = stdout(&succeed(&mut command));
        print!("{}: {out}", if swapped { "swapped" } else { "stock" });
        assert!(
            out.contains("workers: 200 started, 200 passed, 0 hung, 0 failed"),
            "{out}"
        );
        let expected = if swapped { "3" } else { "absent" };
        assert!(
            out.contains(&format!("swap status in workers: {expected} in 200\n")),
            "{out}"
        );
    }
}

/// The summary `LEVELDB_BLOOM_STATS=FILE` makes this library write at exit, from a
/// Python program run with it preloaded: `script` with `args`.
fn python_stats_summary(args: &[&str]) -> String {
    let scratch = Scratch::new();
    std::fs::create_dir_all(scratch.dir()).expect("a scratch directory");
    let file = scratch.dir().join("stats");
    succeed(
        Command::new(PYTHON)
            .args(args)
            .env("LD_PRELOAD", lib_path())
            .env("LEVELDB_BLOOM_STATS", &file),
    );
    std::fs::read_to_string(&file).expect("the summary was written at exit")
}

/// Filter statistics of an unmodified plyvel program: reading every key of a
/// database and as many absent ones, the filters answered "absent" for nearly every
/// absent key, and the summary says so.
#[test]
fn python_plyvel_filter_statistics_at_exit() {
    let db = Scratch::new();
    python("plyvel", "write", &db, false);
    let script = common::repo().join("tests/loaders/python_db.py");
    let script = script.to_str().unwrap();
    let summary = python_stats_summary(&[script, "plyvel", "read", db.path()]);
    print!("{summary}");
    let count = |label: &str| -> u64 {
        let end = summary.find(label).expect(label);
        summary[..end]
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .expect(label)
    };
    let (queries, absent) = (count(" filter queries"), count(" answered absent"));
    // python_db.py reads 18,000 present keys and about 20,000 absent ones.
    assert!(queries >= 36_000, "{summary}");
    assert!(absent >= 19_000, "{summary}");
    assert!(summary.contains(" 0 filters built"), "{summary}");
}

/// A program whose tables carry no filters, read with the bloom policy set: the
/// policy's filters are never queried, and the summary says so.
#[test]
fn python_plyvel_statistics_show_filters_never_queried() {
    let db = Scratch::new();
    let program = "import plyvel, sys\n\
        db = plyvel.DB(sys.argv[1], create_if_missing=True)\n\
        for i in range(20000): db.put(b'key%d' % i, b'value')\n\
        db.compact_range(); db.close()\n\
        db = plyvel.DB(sys.argv[1], bloom_filter_bits=10)\n\
        assert all(db.get(b'absent%d' % i) is None for i in range(1000))\n\
        db.close()\n";
    let summary = python_stats_summary(&["-c", program, db.path()]);
    print!("{summary}");
    assert!(summary.contains(": 0 filter queries"), "{summary}");
    assert!(
        summary.contains("no filter was built or queried"),
        "{summary}"
    );
}
