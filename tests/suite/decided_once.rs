//! The swap decides once, when a policy is made, as the dynamic linker would have
//! answered its caller (src/dropin/decide.rs), and never where stock works does it
//! abort, return NULL or hang (issue 55: each case as an attacker ran it against the
//! per-call decision). Each program runs stock and swapped: the same output and
//! tables, every key right, this library's filters built where it can build them.
//!
//! - LevelDB's documented wrapper policy in a small library that does no
//!   `std::string` work of its own, and in a `-static-libstdc++` program;
//! - `CreateFilter` called from JIT code (an anonymous executable mapping);
//! - a shim defining `leveldb_open` with no string ABI beside the real LevelDB, and
//!   the same shim alone; a renamed copy of this library loaded too;
//! - 100 children forked while a thread loads and unloads a library;
//! - a constructor joining a worker that makes a policy while `dlopen` holds the
//!   loader lock;
//! - a swapped fill making no more `rt_sigprocmask` calls than stock;
//! - a policy made where nothing proves a string, its `CreateFilter` called
//!   anyway: never written (SIGABRT, said).

use crate::common;

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::as_stock::{host, prove_as_stock, run, text};
use common::harness::assert_report;
use common::stats::StatsFile;
use common::{lib_path, once, Lang, Program, Scratch};

/// `c_tests/dropin_cxx.cc` built as `name` with `flags`.
fn dropin_cxx(name: &str, sources: &[&str], flags: &[&str]) -> PathBuf {
    once(name, || {
        let sources: Vec<&str> = ["c_tests/dropin_cxx.cc"]
            .iter()
            .chain(sources)
            .copied()
            .collect();
        flags
            .iter()
            .fold(
                Program::new(name, Lang::Cxx11, &sources),
                |program, flag| program.arg(*flag),
            )
            .build()
    })
}

/// Runs `exe MODE DIR KEYS`, with `preload` (beside this library when swapped).
fn direct<'a>(
    exe: &'a Path,
    preload: Option<&'a Path>,
) -> impl Fn(&str, &Scratch, &str) -> Command + 'a {
    move |mode, dir, keys| {
        let mut command = common::command(exe);
        command.args([mode, dir.path(), keys]);
        if let Some(preload) = preload {
            command.env("LD_PRELOAD", preload);
        }
        command
    }
}

/// A small shared library of `source`, linked with `flags`.
fn small_library(name: &str, lang: Lang, source: &str, flags: &[&str]) -> PathBuf {
    once(name, || {
        ["-shared", "-fPIC"]
            .iter()
            .chain(flags)
            .fold(Program::new(name, lang, &[source]), |program, flag| {
                program.arg(*flag)
            })
            .build()
    })
}

/// Whether the dynamic symbols of `object` name a `std::string`.
fn shows_a_string(object: &Path) -> bool {
    let symbols = common::run(Command::new("nm").arg("-D").arg(object));
    symbols.contains("basic_string") || symbols.contains("_ZNSs") || symbols.contains("_ZNKSs")
}

#[test]
fn documented_wrapper_policy_in_a_small_library() {
    let wrapper = small_library(
        "libwrapper_policy.so",
        Lang::Cxx11,
        "c_tests/wrapper_policy.cc",
        &["-lleveldb"],
    );
    assert!(!shows_a_string(&wrapper), "the wrapper shows a std::string");
    let dir = wrapper.parent().unwrap().display().to_string();
    let exe = dropin_cxx(
        "decided_wrapper_in_library",
        &[],
        &[
            "-DWRAPPED_POLICY",
            &format!("-L{dir}"),
            &format!("-Wl,-rpath,{dir}"),
            "-l:libwrapper_policy.so",
            "-lleveldb",
        ],
    );
    prove_as_stock(direct(&exe, None), "dropin_cxx", "3");
}

#[test]
fn documented_wrapper_policy_in_a_static_libstdcxx_program() {
    let exe = dropin_cxx(
        "decided_wrapper_static_libstdcxx",
        &["c_tests/wrapper_policy.cc"],
        &["-DWRAPPED_POLICY", "-static-libstdc++", "-lleveldb"],
    );
    prove_as_stock(direct(&exe, None), "dropin_cxx", "3");
}

#[test]
fn create_filter_called_from_jit_code() {
    if !cfg!(target_arch = "x86_64") {
        println!("SKIPPED: CreateFilter from JIT code: the JIT code is x86-64's");
        return;
    }
    let exe = once("decided_jit", || {
        Program::new(
            "decided_jit",
            Lang::Cxx11,
            &["c_tests/jit_create_filter.cc"],
        )
        .arg("-lleveldb")
        .arg("-ldl")
        .build()
    });
    let stock = text(&run(common::command(&exe), None).stdout);
    assert_report("jit_create_filter", &stock);
    assert!(stock.contains("policy from: /"), "{stock}");
    let stats = StatsFile::new();
    let swapped = text(&run(common::command(&exe), Some(&stats)).stdout);
    assert_report("jit_create_filter", &swapped);
    assert!(
        swapped.contains("libleveldb_bloom"),
        "not swapped: {swapped}"
    );
    stats.summary().assert_built();
}

/// A shim defining `leveldb_open`, with no `std::string` in its symbols.
fn leveldb_open_shim() -> PathBuf {
    small_library(
        "libleveldb_open_shim.so",
        Lang::C99,
        "c_tests/leveldb_open_shim.c",
        &[],
    )
}

#[test]
fn shim_defining_leveldb_open_beside_leveldb() {
    let shim = leveldb_open_shim();
    let exe = dropin_cxx("decided_plain_cxx", &[], &["-lleveldb"]);
    prove_as_stock(direct(&exe, Some(&shim)), "dropin_cxx", "3");
}

#[test]
fn renamed_copy_of_this_library_loaded_too() {
    let copy = Scratch::new();
    std::fs::create_dir_all(copy.dir()).unwrap();
    let renamed = copy.dir().join("librenamed_bloom.so");
    std::fs::copy(lib_path(), &renamed).unwrap();
    let exe = dropin_cxx("decided_plain_cxx", &[], &["-lleveldb"]);
    prove_as_stock(direct(&exe, Some(&renamed)), "dropin_cxx", "3");
}

/// A plugin that defines `leveldb_open` (no LevelDB of its own) and makes two
/// policies with `leveldb_filterpolicy_create_bloom`: no LevelDB binds them, and its
/// code shows no string, so they are this library's, for its C functions; nothing
/// is said.
#[test]
fn shim_alone_still_gets_policies() {
    let plugin = small_library(
        "decided_unproven_plugin.so",
        Lang::C99,
        "c_tests/unproven_leveldb.c",
        &[],
    );
    let mut command = common::command(host());
    command.arg(&plugin);
    let output = run(command, Some(&StatsFile::new()));
    assert_eq!(text(&output.stdout), "policies: made, made\n");
    assert_eq!(text(&output.stderr), "");
}

#[test]
fn children_forked_while_a_library_is_loaded_and_unloaded() {
    let exe = once("decided_fork_dlopen", || {
        Program::new("decided_fork_dlopen", Lang::C99, &["c_tests/fork_dlopen.c"])
            .arg("-lleveldb")
            .arg("-lpthread")
            .arg("-ldl")
            .build()
    });
    let churned = leveldb_open_shim();
    for swapped in [false, true] {
        let dir = Scratch::new();
        std::fs::create_dir_all(dir.dir()).unwrap();
        let mut command = common::command(&exe);
        command.arg(&churned).arg(dir.path()).arg("100");
        let stats = StatsFile::new();
        let output = text(&run(command, swapped.then_some(&stats)).stdout);
        assert_report("fork_dlopen", &output);
        assert!(
            output.contains("children: 100, hung: 0, failed: 0"),
            "{output}"
        );
    }
}

/// A plugin whose constructor joins a worker making a policy: as stock, it returns.
#[test]
fn constructor_joining_a_worker_that_makes_a_policy() {
    let plugin = small_library(
        "decided_ctor_join.so",
        Lang::C99,
        "c_tests/ctor_join.c",
        &["-lleveldb", "-lpthread"],
    );
    let command = || {
        let mut command = common::command(host());
        command.arg(&plugin);
        command
    };
    let stock = run(command(), None);
    let swapped = run(command(), Some(&StatsFile::new()));
    assert_eq!(
        text(&stock.stdout),
        "policy made by a constructor's worker: yes\n"
    );
    assert_eq!(text(&swapped.stdout), text(&stock.stdout));
}

/// `rt_sigprocmask` calls of a fill of 50,000 keys (`c_tests/dropin_c.c`), by
/// strace.
fn signal_mask_calls(swapped: bool) -> usize {
    let exe = once("decided_dropin_c", || {
        Program::new("decided_dropin_c", Lang::C99, &["c_tests/dropin_c.c"])
            .arg("-lleveldb")
            .arg("-ldl")
            .build()
    });
    let (dir, log) = (Scratch::new(), Scratch::new());
    std::fs::create_dir_all(log.dir()).unwrap();
    let log = log.dir().join("strace");
    let mut command = common::command("strace");
    command
        .args(["-f", "-qq", "-e", "trace=rt_sigprocmask", "-o"])
        .arg(&log)
        .arg(&exe)
        .args(["write", dir.path(), "50000"]);
    if swapped {
        command.env("LD_PRELOAD", lib_path());
    }
    common::run(&mut command);
    std::fs::read_to_string(&log).unwrap().lines().count()
}

#[test]
fn a_swapped_fill_masks_signals_no_more_than_stock() {
    if Command::new("strace").arg("-V").output().is_err() {
        println!("SKIPPED: rt_sigprocmask calls of a fill: needs strace (make deps)");
        return;
    }
    let (stock, swapped) = (signal_mask_calls(false), signal_mask_calls(true));
    println!("rt_sigprocmask calls of a fill: stock {stock}, swapped {swapped}");
    assert!(swapped <= stock, "swapped {swapped} > stock {stock}");
}

/// `CreateFilter` of a policy made where nothing proves a string (a C program
/// without LevelDB, `leveldb_bloom_policy_create`), called through its vtable with a
/// read-only page as the string: the process ends with SIGABRT, said on stderr, and
/// the page is never written (that would be SIGSEGV).
#[test]
fn create_filter_without_a_known_string_never_writes() {
    let exe = once("decided_unproven_caller", || {
        Program::new(
            "decided_unproven_caller",
            Lang::C99,
            &["c_tests/unproven_caller.c"],
        )
        .link_bloom()
        .build()
    });
    let output = common::command(&exe).output().unwrap();
    assert_eq!(output.status.signal(), Some(libc::SIGABRT), "{output:?}");
    assert_eq!(text(&output.stdout), "");
    let said = text(&output.stderr);
    assert!(said.contains("string of unknown layout"), "{said}");
}

/// A LevelDB built with clang against libc++, without its C API, and a program on
/// it (`c_tests/dropin_cxx.cc`): its `std::string` is one this library cannot
/// write, so the swapped program keeps LevelDB's own policy, as stock, said once on
/// stderr; nothing aborts, and the tables are stock's.
#[test]
fn libcxx_leveldb_without_its_c_api_keeps_its_own_policy() {
    let clang = Command::new("clang++").arg("--version").output();
    if clang.is_err() || !Path::new("/usr/include/c++/v1/string").exists() {
        println!("SKIPPED: a LevelDB of libc++: needs clang and libc++-dev (make deps)");
        return;
    }
    let build = common::source_leveldb::leveldb("libcxx");
    let exports = common::run(
        Command::new("nm")
            .arg("-D")
            .arg(build.join("libleveldb.so")),
    );
    assert!(
        exports.contains("_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt3__1"),
        "not libc++'s"
    );
    assert!(!exports.contains(" T leveldb_open"), "it has a C API");
    let exe = once("decided_libcxx", || {
        let exe = common::lib_dir().join("c_tests/decided_libcxx");
        common::run(
            common::command("clang++")
                .args(["-std=c++11", "-stdlib=libc++", "-Wall", "-Werror", "-O1"])
                .arg(common::source_leveldb::source_include(&build))
                .arg("c_tests/dropin_cxx.cc")
                .arg("-o")
                .arg(&exe)
                .arg(format!("-L{}", build.display()))
                .arg(format!("-Wl,-rpath,{}", build.display()))
                .args(["-lleveldb", "-ldl"])
                .current_dir(common::repo()),
        );
        exe
    });
    let (stock_db, swapped_db) = (Scratch::new(), Scratch::new());
    let write = |dir: &Scratch, stats: Option<&StatsFile>| {
        run(
            direct(&exe, None)("write", dir, common::as_stock::KEYS),
            stats,
        )
    };
    let stock = write(&stock_db, None);
    let swapped = write(&swapped_db, Some(&StatsFile::new()));
    use common::as_stock::shown_but_status;
    assert_eq!(shown_but_status(&stock), shown_but_status(&swapped));
    let said = text(&swapped.stderr);
    assert_eq!(
        said.matches("keeps its own bloom policy").count(),
        1,
        "{said}"
    );
    assert!(
        common::tables_with_filters(&stock_db) == common::tables_with_filters(&swapped_db),
        "tables differ from stock"
    );
}
