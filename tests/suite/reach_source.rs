//! LevelDB 1.23 built from Debian's source package (`tests/reach/build-leveldb`,
//! cached under `target/reach/leveldb`, so only the first run compiles):
//!
//! - vendored, with `util/bloom.cc` replaced by `contrib/leveldb/util/bloom.cc`, the
//!   one-file route of a program that builds LevelDB into itself (as Bitcoin Core
//!   does), where `LD_PRELOAD` cannot reach: LevelDB's own `bloom_test` and
//!   `c_test` pass, `db_bench` runs, and the tables are stock's;
//! - with libstdc++'s old `std::string` ABI (`-D_GLIBCXX_USE_CXX11_ABI=0`), as a
//!   shared library: a C++ program built against it with the old ABI, and a C
//!   program on its C API (which tells nothing of the ABI), swapped by `LD_PRELOAD`,
//!   write stock's tables and read every key right, under valgrind too.
//!
//! Each test proves from the programs' filter statistics that this library built
//! and queried the filters.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::source_leveldb::{leveldb, old_abi_leveldb, source_include, OLD_ABI_DB_OPEN};
use common::stats::StatsFile;
use common::{lib_path, once, run, Lang, Program, Scratch};

/// Keys the drop-in program (`c_tests/dropin_cxx.cc`) writes.
const KEYS: &str = "50000";
/// Fewer under valgrind, some 50 times slower.
const VALGRIND_KEYS: &str = "3000";

/// LevelDB's policy class, in util/bloom.cc's anonymous namespace.
const LEVELDB_POLICY: &str = "leveldb::(anonymous namespace)::BloomFilterPolicy";

/// Runs `command` with this library's statistics (and this library preloaded when
/// `preload`); returns stdout and stderr, panicking unless it exits 0.
fn run_counted(mut command: Command, stats: &StatsFile, preload: bool) -> (String, String) {
    command.env("LEVELDB_BLOOM_STATS", stats.path());
    if preload {
        command.env("LD_PRELOAD", lib_path());
    }
    let output = common::succeed(&mut command);
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// LevelDB's own tests and benchmark, built with `util/bloom.cc` replaced: each
/// program has this library as a dependency and not LevelDB's policy; `bloom_test`
/// and `c_test` pass, `db_bench` runs, and the filters they use are this library's.
#[test]
fn vendored_leveldb_passes_its_own_tests_with_bloom_cc_replaced() {
    let build = leveldb("vendored");
    for program in ["bloom_test", "c_test", "db_bench"] {
        let exe = build.join(program);
        let needed = run(Command::new("readelf").arg("-d").arg(&exe));
        assert!(
            needed.contains("[libleveldb_bloom.so.0]"),
            "{program}:\n{needed}"
        );
        let symbols = run(Command::new("nm").arg("-C").arg(&exe));
        assert!(
            !symbols.contains(LEVELDB_POLICY),
            "{program} has LevelDB's policy"
        );
    }

    let stats = StatsFile::new();
    let (shown, _) = run_counted(common::command(build.join("bloom_test")), &stats, false);
    assert!(shown.contains("[  PASSED  ] 3 tests."), "{shown}");
    let summary = stats.summary();
    summary.assert_built();
    // BloomTest.VaryingLengths asks for 10,000 absent keys per length.
    summary.assert_rejected(100_000);

    let stats = StatsFile::new();
    let (shown, errors) = run_counted(common::command(build.join("c_test")), &stats, false);
    assert!(
        format!("{shown}{errors}").contains("PASS"),
        "{shown}{errors}"
    );
    stats.summary().assert_built();

    let db = Scratch::new();
    let stats = StatsFile::new();
    let mut bench = common::command(build.join("db_bench"));
    bench.args([
        "--benchmarks=fillrandom,compact,readrandom",
        "--num=20000",
        "--bloom_bits=10",
        &format!("--db={}", db.path()),
    ]);
    let (shown, _) = run_counted(bench, &stats, false);
    assert!(shown.contains("readrandom   :"), "{shown}");
    let summary = stats.summary();
    summary.assert_built();
    // readrandom asks for random keys of which about a third were never written.
    summary.assert_rejected(5_000);
}

/// A drop-in program (`c_tests/dropin_cxx.cc` on LevelDB's C++ API, or
/// `c_tests/dropin_c.c` on its C API) built with `flags`, once per name.
fn dropin_program(name: &str, lang: Lang, flags: Vec<String>) -> PathBuf {
    let source = if lang == Lang::C99 {
        "c_tests/dropin_c.c"
    } else {
        "c_tests/dropin_cxx.cc"
    };
    once(name, || {
        flags
            .into_iter()
            .fold(Program::new(name, lang, &[source]), Program::arg)
            .build()
    })
}

/// `exe write|read DIR KEYS`: the drop-in program's run, judged by its report.
fn dropin(exe: &Path, mode: &str, dir: &Scratch, keys: &str) -> Command {
    let mut command = common::command(exe);
    command.args([mode, dir.path(), keys]);
    command
}

/// The vendored LevelDB's static library, linked into the drop-in program: its
/// tables are those of the program linked with Debian's libleveldb.
#[test]
fn vendored_leveldb_writes_stock_tables() {
    let build = leveldb("vendored");
    let stock = dropin_program("reach_dropin_stock", Lang::Cxx11, vec!["-lleveldb".into()]);
    let vendored = once("reach_dropin_vendored", || {
        Program::new(
            "reach_dropin_vendored",
            Lang::Cxx11,
            &["c_tests/dropin_cxx.cc"],
        )
        .arg(source_include(&build))
        .arg(build.join("libleveldb.a").display().to_string())
        .link_bloom()
        .arg("-lsnappy")
        .arg("-lpthread")
        .build()
    });
    let (stock_db, vendored_db) = (Scratch::new(), Scratch::new());
    run(&mut dropin(&stock, "write", &stock_db, KEYS));
    let stats = StatsFile::new();
    let (shown, _) = run_counted(
        dropin(&vendored, "write", &vendored_db, KEYS),
        &stats,
        false,
    );
    common::harness::assert_report("dropin_cxx", &shown);
    stats.summary().assert_built();
    assert!(
        common::tables_with_filters(&stock_db) == common::tables_with_filters(&vendored_db),
        "the vendored LevelDB's tables differ from stock"
    );
}

/// The drop-in program `exe` (reporting as `report`) on the old-ABI LevelDB, stock
/// and with this library preloaded: the same tables, every key right, this
/// library's filters built and queried; under valgrind, no memory error.
fn prove_old_abi_swap(build: &Path, exe: &Path, report: &str) {
    let mut files = dropin(exe, "write", &Scratch::new(), "10");
    files.env("LD_DEBUG", "files");
    let (_, loaded) = run_counted(files, &StatsFile::new(), true);
    assert!(
        loaded.contains(&format!("{}/libleveldb.so", build.display()))
            && !loaded.contains("/lib/x86_64-linux-gnu/libleveldb"),
        "not the old-ABI LevelDB:\n{loaded}"
    );

    let (stock_db, swapped_db) = (Scratch::new(), Scratch::new());
    run(&mut dropin(exe, "write", &stock_db, KEYS));
    let stats = StatsFile::new();
    let (shown, _) = run_counted(dropin(exe, "write", &swapped_db, KEYS), &stats, true);
    common::harness::assert_report(report, &shown);
    stats.summary().assert_built();
    assert!(
        common::tables_with_filters(&stock_db) == common::tables_with_filters(&swapped_db),
        "old ABI: tables differ from stock"
    );
    let stats = StatsFile::new();
    let (shown, _) = run_counted(dropin(exe, "read", &stock_db, KEYS), &stats, true);
    assert!(shown.contains(", 0 wrong"), "{shown}");
    // 50,000 keys never written and about 5,700 deleted.
    stats.summary().assert_rejected(50_000);

    let small = Scratch::new();
    for mode in ["write", "read"] {
        let mut command = common::valgrind_failing_on(exe, "definite,indirect");
        command
            .args([mode, small.path(), VALGRIND_KEYS])
            .env("LD_PRELOAD", lib_path());
        common::harness::assert_report(report, &run(&mut command));
    }
}

/// A C++ program built with the old ABI against the old-ABI LevelDB: its call to
/// leveldb::NewBloomFilterPolicy gets an object of the old ABI.
#[test]
fn old_abi_leveldb_cxx_program_swapped_by_preload() {
    let (build, flags) = old_abi_leveldb();
    let flags = [vec!["-D_GLIBCXX_USE_CXX11_ABI=0".to_string()], flags].concat();
    let exe = dropin_program("reach_dropin_cxx_old_abi", Lang::Cxx11, flags);
    let imports = run(Command::new("nm").arg("-D").arg(&exe));
    assert!(
        imports.contains(OLD_ABI_DB_OPEN),
        "not built with the old ABI"
    );
    prove_old_abi_swap(&build, &exe, "dropin_cxx");
}

/// A C program on the old-ABI LevelDB's C API: nothing in the program tells the
/// ABI, the LevelDB it runs with does.
#[test]
fn old_abi_leveldb_c_program_swapped_by_preload() {
    let (build, flags) = old_abi_leveldb();
    let exe = dropin_program("reach_dropin_c_old_abi", Lang::C99, flags);
    prove_old_abi_swap(&build, &exe, "dropin_c");
}
