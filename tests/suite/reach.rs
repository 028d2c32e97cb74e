//! Where the swap reaches beyond a program linked to Debian's libleveldb (see
//! tests/suite/dropin.rs, tests/suite/loaders.rs and tests/suite/python.rs): Node.js with
//! classic-level 3 from the npm registry, whose addon has LevelDB built in (its C++
//! symbols exported, no C API), swapped by `LD_PRELOAD`; and C++ and C programs
//! linked statically with `libleveldb_bloom.a` before Debian's `libleveldb.a` (the C
//! one by the route `reach` gives it), which must load no LevelDB at run time. Each test proves from the process's filter
//! statistics that this library built and queried the filters, and compares the
//! tables with stock's. (LevelDB built from source with `util/bloom.cc` replaced,
//! and an old-ABI LevelDB: tests/suite/reach_source.rs.)

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::stats::StatsFile;
use common::{lib_path, once, run, Lang, Program, Scratch};

/// Keys the Node program writes: 200,000, in batches (half of them read absent).
const NODE_KEYS: &str = "200000";

/// Runs `command` with the dynamic linker's file log (`LD_DEBUG=files`); panics
/// unless it exits 0. Returns its stdout, and the log's lines about any LevelDB
/// shared library (`libleveldb.so*`, `libleveldb-*.so*`) it loaded.
fn run_logging_loads(command: &mut Command) -> (String, Vec<String>) {
    let output = common::succeed(command.env("LD_DEBUG", "files"));
    let leveldb = String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|line| line.contains("file=libleveldb") || line.contains("/libleveldb"))
        .filter(|line| !line.contains("libleveldb_bloom"))
        .map(str::to_string)
        .collect();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        leveldb,
    )
}

/// `node tests/reach/classic_level.js DIR KEYS`, with classic-level from
/// `target/reach/node` (installed by `scripts/ensure-leveldb`), this library
/// preloaded when `stats` is given (its statistics written there). Returns stdout;
/// panics unless every key read back right and no LevelDB library was loaded (the
/// addon has its own).
fn classic_level(dir: &Scratch, stats: Option<&StatsFile>) -> String {
    let modules = common::cache_dir("reach/node/node_modules");
    assert!(
        modules.join("classic-level/package.json").exists(),
        "classic-level is not installed in {}: run `make deps` (scripts/ensure-leveldb)",
        modules.display()
    );
    let mut command = common::command("node");
    command
        .arg(common::repo().join("tests/reach/classic_level.js"))
        .args([dir.path(), NODE_KEYS])
        .env("NODE_PATH", &modules);
    if let Some(stats) = stats {
        command
            .env("LD_PRELOAD", lib_path())
            .env("LEVELDB_BLOOM_STATS", stats.path());
    }
    let (shown, loaded) = run_logging_loads(&mut command);
    assert!(loaded.is_empty(), "a LevelDB was loaded: {loaded:#?}");
    assert!(
        shown.contains(&format!("wrote {NODE_KEYS} keys")),
        "{shown}"
    );
    assert!(shown.contains(", 0 wrong\n"), "{shown}");
    shown
}

/// The database's tables: (name, bytes), by name.
fn named_tables(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut tables: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("the database directory")
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ldb"))
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(path).unwrap())
        })
        .collect();
    tables.sort();
    tables
}

/// `swapped` holds the same tables as `stock`: as many, of the same names, sizes
/// and bytes, each with a bloom filter block.
fn assert_same_tables(stock: &Scratch, swapped: &Scratch) {
    let reference = common::tables_with_filters(stock);
    assert!(common::tables_with_filters(swapped) == reference);
    let (stock, swapped) = (named_tables(stock.dir()), named_tables(swapped.dir()));
    let sizes = |tables: &[(String, Vec<u8>)]| -> Vec<(String, usize)> {
        tables
            .iter()
            .map(|(name, bytes)| (name.clone(), bytes.len()))
            .collect()
    };
    assert_eq!(sizes(&stock), sizes(&swapped), "tables differ from stock");
    assert!(stock == swapped, "tables differ from stock");
}

/// Node's classic-level, stock and swapped: exit 0, every key right, the same
/// tables, this library's filters built and answering "absent" for the absent keys,
/// and the audit passing the swapped database.
#[test]
fn node_classic_level_swapped_by_preload() {
    let (stock, swapped) = (Scratch::new(), Scratch::new());
    let stock_read = classic_level(&stock, None);
    let stats = StatsFile::new();
    let swapped_read = classic_level(&swapped, Some(&stats));
    assert_eq!(stock_read, swapped_read);
    let summary = stats.summary();
    print!("{}", summary.text);
    summary.assert_built();
    // 200,000 keys never written and 28,571 deleted read absent.
    summary.assert_rejected(200_000);
    assert_same_tables(&stock, &swapped);
    let audit = run(common::command(common::tool())
        .arg("audit")
        .arg(swapped.path()));
    assert!(audit.contains("OK: no key can disappear"), "{audit}");
}

/// Debian's static LevelDB.
const LIBLEVELDB_A: &str = "/usr/lib/x86_64-linux-gnu/libleveldb.a";

/// `c_tests/dropin_cxx.cc` (LevelDB's C++ API, leveldb::NewBloomFilterPolicy(10))
/// linked statically with Debian's `libleveldb.a`, and with this library's
/// `libleveldb_bloom.a` before it when `bloom`.
fn static_program(bloom: bool) -> PathBuf {
    let name = if bloom {
        "reach_static_swapped"
    } else {
        "reach_static_stock"
    };
    once(name, || {
        assert!(
            Path::new(LIBLEVELDB_A).exists(),
            "{LIBLEVELDB_A}: install libleveldb-dev"
        );
        let program = Program::new(name, Lang::Cxx11, &["c_tests/dropin_cxx.cc"]);
        let program = if bloom {
            program.link_bloom_static()
        } else {
            program
        };
        program
            .arg(LIBLEVELDB_A)
            .arg("-lsnappy")
            .arg("-lpthread")
            .build()
    })
}

/// `exe write|read DIR 50000` with this library's statistics, `exe` a build of the
/// C++ harness (`dropin_cxx`) or the C one (`dropin_c`); returns stdout and the
/// LevelDB libraries loaded (see [`run_logging_loads`]).
fn run_static(exe: &Path, mode: &str, dir: &Scratch, stats: &StatsFile) -> (String, Vec<String>) {
    let mut command = common::command(exe);
    command
        .args([mode, dir.path(), "50000"])
        .env("LEVELDB_BLOOM_STATS", stats.path());
    let (stdout, loaded) = run_logging_loads(&mut command);
    let c = exe
        .file_name()
        .unwrap()
        .to_string_lossy()
        .contains("static_c_");
    common::harness::assert_report(if c { "dropin_c" } else { "dropin_cxx" }, &stdout);
    (stdout, loaded)
}

/// A C++ program linked with `libleveldb_bloom.a` then Debian's `libleveldb.a`: the
/// linker takes this library's `leveldb::NewBloomFilterPolicy` (LevelDB's bloom.o
/// is not in the program), the program loads no LevelDB at run time, and its tables
/// are those of the same program linked with `libleveldb.a` alone.
#[test]
fn static_link_builds_stock_filters_without_loading_leveldb() {
    let (stock, swapped) = (static_program(false), static_program(true));
    let symbols = |exe: &Path| run(Command::new("nm").arg("-C").arg(exe));
    let (stock_symbols, swapped_symbols) = (symbols(&stock), symbols(&swapped));
    // LevelDB's policy class lives in util/bloom.cc, in an anonymous namespace.
    let leveldb_policy = "leveldb::(anonymous namespace)::BloomFilterPolicy";
    assert!(
        stock_symbols.contains(leveldb_policy),
        "the stock program has LevelDB's"
    );
    assert!(
        !swapped_symbols.contains(leveldb_policy),
        "LevelDB's bloom.o was linked"
    );
    assert!(swapped_symbols.contains("leveldb_bloom_policy_create"));

    assert_swapped_statically(&stock, &swapped);
}

/// `swapped`, a static build of the program `stock` is, writes stock's tables with
/// this library's filters, reads every key right answering the absent ones from
/// them, and loads no LevelDB at run time.
fn assert_swapped_statically(stock: &Path, swapped: &Path) {
    let (stock_db, swapped_db) = (Scratch::new(), Scratch::new());
    run_static(stock, "write", &stock_db, &StatsFile::new());
    let stats = StatsFile::new();
    let (_, loaded) = run_static(swapped, "write", &swapped_db, &stats);
    assert!(loaded.is_empty(), "a LevelDB was loaded: {loaded:#?}");
    stats.summary().assert_built();
    assert_same_tables(&stock_db, &swapped_db);

    let stats = StatsFile::new();
    let (read, loaded) = run_static(swapped, "read", &stock_db, &stats);
    assert!(read.contains(", 0 wrong"), "{read}");
    assert!(loaded.is_empty(), "a LevelDB was loaded: {loaded:#?}");
    // Both harnesses read 50,000 keys never written, and some deleted ones.
    stats.summary().assert_rejected(50_000);
}

/// `c_tests/dropin_c.c` (LevelDB's C API, its bloom policy at 10 bits per key) linked
/// statically with Debian's `libleveldb.a`; with `swapped`, by the route `reach`
/// gives such a program: `libleveldb_bloom.a` ahead of it, with
/// `-Wl,--allow-multiple-definition` (LevelDB's c.o defines the C bloom functions
/// too; the first definition, this library's, is kept).
fn static_c_program(swapped: bool) -> PathBuf {
    let name = if swapped {
        "reach_static_c_swapped"
    } else {
        "reach_static_c_stock"
    };
    once(name, || {
        let program = Program::new(name, Lang::C99, &["c_tests/dropin_c.c"]);
        let program = if swapped {
            let archive = common::lib_dir().join("libleveldb_bloom.a");
            program
                .arg("-Wl,--allow-multiple-definition")
                .arg(archive.display().to_string())
        } else {
            program
        };
        ["-lsnappy", "-lstdc++", "-lpthread", "-ldl", "-lm"]
            .into_iter()
            .fold(program.arg(LIBLEVELDB_A), Program::arg)
            .build()
    })
}

/// A static C-API program: `reach` says LD_PRELOAD cannot reach it and gives the
/// route that links; that route's program builds this library's filters (stock's
/// tables, byte for byte), answers absent keys from them and loads no LevelDB.
#[test]
fn a_static_c_api_program_takes_the_route_reach_gives() {
    let stock = static_c_program(false);
    let output = common::command(common::tool())
        .arg("reach")
        .arg(&stock)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(3), "{said}");
    assert!(
        said.contains("holds LevelDB linked statically")
            && said.contains("-Wl,--allow-multiple-definition"),
        "{said}"
    );
    assert_swapped_statically(&stock, &static_c_program(true));
}

/// `c_tests/dropin_cxx.cc` linked fully statically (`-static`: libstdc++ and glibc
/// too, so no dynamic symbol shows its `std::string` ABI) with Debian's
/// `libleveldb.a`, after `libleveldb_bloom.a` when `bloom`, its symbol table
/// stripped when `stripped`.
fn fully_static_program(bloom: bool, stripped: bool) -> PathBuf {
    let name = match (bloom, stripped) {
        (false, _) => "reach_fully_static_stock",
        (true, false) => "reach_fully_static_swapped",
        (true, true) => "reach_fully_static_stripped",
    };
    once(name, || {
        let program = Program::new(name, Lang::Cxx11, &["c_tests/dropin_cxx.cc"]).arg("-static");
        let program = match bloom {
            true => program.arg(
                common::lib_dir()
                    .join("libleveldb_bloom.a")
                    .display()
                    .to_string(),
            ),
            false => program,
        };
        let program = match stripped {
            true => program.arg("-s"),
            false => program,
        };
        ["-lsnappy", "-lpthread", "-ldl", "-lm"]
            .into_iter()
            .fold(program.arg(LIBLEVELDB_A), Program::arg)
            .build()
    })
}

/// A fully static program keeps LevelDB's names in its symbol table (`DB::Open`
/// taking the new ABI's string): the policy is read from there, and its tables are
/// stock's, byte for byte.
#[test]
fn a_fully_static_program_is_read_by_its_symbol_table() {
    assert_swapped_statically(
        &fully_static_program(false, false),
        &fully_static_program(true, false),
    );
}

/// The same program stripped of its symbol table shows no `std::string`: the policy
/// is never made (NULL, said once on stderr, LevelDB then runs without filters),
/// where guessing the ABI could corrupt the heap; every key still reads right, as
/// with stock.
#[test]
fn a_stripped_fully_static_program_gets_no_policy_and_works() {
    let exe = fully_static_program(true, true);
    let db = Scratch::new();
    for mode in ["write", "read"] {
        let output = common::succeed(common::command(&exe).args([mode, db.path(), "3000"]));
        let stdout = String::from_utf8_lossy(&output.stdout);
        common::harness::assert_report("dropin_cxx", &stdout);
        if mode == "read" {
            assert!(stdout.contains(", 0 wrong"), "{stdout}");
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(
            stderr.matches("NULL (no filter policy").count(),
            1,
            "{stderr}"
        );
    }
}
