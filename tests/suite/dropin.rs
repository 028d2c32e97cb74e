//! The drop-in proof: unmodified LevelDB programs (`c_tests/dropin_c.c` on the C API,
//! `c_tests/dropin_cxx.cc` on the C++ API) write the same deterministic databases
//! stock, swapped by `LD_PRELOAD`, swapped by relinking, and (C++) through the explicit
//! header in either link order. Their table files must be byte-identical, each
//! database must read back completely through the other library, the swap must really
//! be in effect (the dynamic linker's bindings, and a counting shim,
//! `c_tests/count_filter_calls.cc`, showing the filters built and consulted by this
//! library's policy objects), and valgrind must find nothing on the swapped runs.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::harness::{harness, Harness, BLOOM};
use common::stats::StatsFile;
use common::Lang::{Cxx11, Cxx17, C99};
use common::{lib_path, Scratch};

mod valgrind;

/// Keys per database: tens of thousands, compacted into several tables.
const KEYS: u32 = 50_000;
/// Fewer under valgrind, which is some 50 times slower.
const VALGRIND_KEYS: u32 = 3_000;

/// The drop-in programs, as each test builds them: stock (`-lleveldb`), relinked for
/// the swap (`-lleveldb_bloom -lleveldb`), and (C++) through the explicit header in
/// either link order.
const C_STOCK: Harness = harness(
    "dropin_c_stock",
    "dropin_c",
    C99,
    &[DROPIN_C],
    &["-lleveldb"],
);
const C_RELINKED: Harness = harness(
    "dropin_c_relinked",
    "dropin_c",
    C99,
    &[DROPIN_C],
    &[BLOOM, "-lleveldb"],
);
const CXX_STOCK: Harness = harness(
    "dropin_cxx_stock",
    "dropin_cxx",
    Cxx11,
    &[DROPIN_CXX],
    &["-lleveldb"],
);
const CXX_RELINKED: Harness = harness(
    "dropin_cxx_relinked",
    "dropin_cxx",
    Cxx11,
    &[DROPIN_CXX],
    &[BLOOM, "-lleveldb"],
);
/// The explicit header with LevelDB linked first (nothing swapped), as C++17.
const CXX_EXPLICIT_UNSWAPPED: Harness = harness(
    "dropin_cxx_explicit_unswapped",
    "dropin_cxx",
    Cxx17,
    &[DROPIN_CXX],
    &["-DEXPLICIT_HEADER", "-lleveldb", BLOOM],
);
/// The explicit header, relinked for the swap, as C++11.
const CXX_EXPLICIT_SWAPPED: Harness = harness(
    "dropin_cxx_explicit_swapped",
    "dropin_cxx",
    Cxx11,
    &[DROPIN_CXX],
    &["-DEXPLICIT_HEADER", BLOOM, "-lleveldb"],
);
const DROPIN_C: &str = "c_tests/dropin_c.c";
const DROPIN_CXX: &str = "c_tests/dropin_cxx.cc";

/// How a run is swapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Swap {
    None,
    Preload,
}

/// What a run printed: its stdout, and the counting shim's report from stderr.
struct Run {
    stdout: String,
    stderr: String,
    calls: BTreeMap<String, String>,
}

impl Run {
    fn count(&self, key: &str) -> u64 {
        self.calls[key].parse().expect("a count")
    }

    fn swap_status(&self) -> &str {
        self.stdout
            .lines()
            .find_map(|line| line.strip_prefix("swap status: "))
            .expect("the program prints the swap status")
    }

    /// (present, absent) from a read run, which fails on any wrong answer itself.
    fn read_counts(&self) -> (u64, u64) {
        let line = self
            .stdout
            .lines()
            .find_map(|line| line.strip_prefix("read: "))
            .expect("a read report");
        let numbers: Vec<u64> = line
            .split(", ")
            .map(|part| part.split(' ').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(numbers[2], 0, "wrong answers: {line}");
        (numbers[0], numbers[1])
    }

    /// Whether the dynamic linker (LD_DEBUG=bindings) bound `exe`'s reference to
    /// `symbol` to an object whose path contains `object`.
    fn binds(&self, exe: &Path, symbol: &str, object: &str) -> bool {
        let from = format!("binding file {} [0] to ", exe.display());
        self.stderr.lines().any(|line| {
            line.split_once(&from)
                .is_some_and(|(_, to)| to.contains(object) && to.ends_with(&format!("`{symbol}'")))
        })
    }
}

/// Runs `exe mode dir keys` with the counting shim (and this library when `swap` is
/// Preload) preloaded; asserts it succeeds.
fn run(exe: &Path, swap: Swap, mode: &str, dir: &Scratch, keys: u32, env: &[(&str, &str)]) -> Run {
    let mut preload = common::count_shim().display().to_string();
    if swap == Swap::Preload {
        preload = format!("{preload} {}", lib_path().display());
    }
    let mut command = common::command(exe);
    command
        .args([mode, dir.path(), &keys.to_string()])
        .env("LD_PRELOAD", preload)
        .envs(env.iter().copied());
    let output = command.output().expect("the program runs");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{command:?} failed ({})\nstdout:\n{stdout}\nstderr (end):\n{}",
        output.status,
        &stderr[stderr.len().saturating_sub(4000)..]
    );
    assert_reported(&stdout);
    let calls = common::filter_calls(&stderr);
    Run {
        stdout,
        stderr,
        calls,
    }
}

/// The database's table files (see [`common::tables_with_filters`]).
fn tables(dir: &Scratch) -> Vec<Vec<u8>> {
    common::tables_with_filters(dir)
}

/// A write run: the database written, and the run.
/// The one report line of a drop-in program, `dropin_c` or `dropin_cxx` (see
/// c_tests/check.h): every LevelDB call and every key read back was a passed check.
fn assert_reported(stdout: &str) {
    let name = if stdout.contains("dropin_cxx: ") {
        "dropin_cxx"
    } else {
        "dropin_c"
    };
    common::harness::assert_report(name, stdout);
}

fn write(exe: &Path, swap: Swap) -> (Scratch, Run) {
    let dir = Scratch::new();
    let run = run(exe, swap, "write", &dir, KEYS, &[]);
    (dir, run)
}

/// A read of the whole key space, every key answered right, absent keys absent.
fn read(exe: &Path, swap: Swap, dir: &Scratch) -> Run {
    let run = run(exe, swap, "read", dir, KEYS, &[]);
    let (present, absent) = run.read_counts();
    assert_eq!(present + absent, 2 * u64::from(KEYS));
    run
}

/// The run went through this library: its policies are objects of
/// libleveldb_bloom's, whose vtables lie there.
fn assert_swapped(run: &Run) {
    assert_eq!(run.swap_status(), "3", "both APIs swapped");
    assert!(run.count("policies") >= 1, "no policy through the swap");
    assert!(
        run.calls["callbacks_in"].contains("libleveldb_bloom"),
        "callbacks in {}",
        run.calls["callbacks_in"]
    );
}

/// A write through this library built the filters there.
fn assert_swapped_write(run: &Run) {
    assert_swapped(run);
    assert!(
        run.count("create_filter") > 0,
        "no filter built through the swap"
    );
}

/// A read through this library consulted its filters for the lookups, and they
/// rejected the absent keys (at 10 bits per key, all but about 1%).
fn assert_swapped_read(run: &Run) {
    assert_swapped(run);
    let (present, absent) = run.read_counts();
    let consulted = run.count("key_may_match");
    let said_no = run.count("said_no");
    assert!(
        consulted * 100 >= (present + absent) * 99,
        "filters consulted {consulted} times for {} lookups",
        present + absent
    );
    assert!(
        said_no <= absent && said_no * 100 >= absent * 95,
        "filters rejected {said_no} of {absent} absent keys"
    );
}

/// A stock run never touched this library.
fn assert_stock(run: &Run) {
    assert_eq!(run.swap_status(), "absent");
    assert_eq!(run.count("policies"), 0);
}

/// The tables of a program written stock, by LD_PRELOAD and relinked, compared;
/// then each database read back by the other library.
fn prove_swap(stock: Harness, relinked: Harness) {
    let source = stock.sources[0];
    let (stock, relinked) = (stock.build(false), relinked.build(false));

    let (stock_db, stock_write) = write(&stock, Swap::None);
    assert_stock(&stock_write);
    let reference = tables(&stock_db);
    for (exe, swap) in [(&stock, Swap::Preload), (&relinked, Swap::None)] {
        let (dir, run) = write(exe, swap);
        assert_swapped_write(&run);
        assert!(
            tables(&dir) == reference,
            "{source} {swap:?} {}: tables differ from stock",
            exe.display()
        );
        // Written through the swap, read stock.
        assert_stock(&read(&stock, Swap::None, &dir));
    }
    // Written stock, read through the swap, both ways.
    assert_swapped_read(&read(&stock, Swap::Preload, &stock_db));
    assert_swapped_read(&read(&relinked, Swap::None, &stock_db));
}

#[test]
fn c_api_program_swapped_by_preload_and_relink() {
    prove_swap(C_STOCK, C_RELINKED);
}

#[test]
fn cxx_api_program_swapped_by_preload_and_relink() {
    prove_swap(CXX_STOCK, CXX_RELINKED);
}

#[test]
fn c_and_cxx_programs_write_the_same_tables() {
    let c = write(&C_STOCK.build(false), Swap::None).0;
    let cxx = CXX_STOCK.build(false);
    assert!(tables(&c) == tables(&write(&cxx, Swap::None).0));
}

/// The dynamic linker binds the programs' references to this library when swapped,
/// and to LevelDB when stock.
#[test]
fn dynamic_linker_binds_the_programs_to_this_library() {
    let bindings = [("LD_DEBUG", "bindings")];
    for (stock, relinked, symbol) in [
        (C_STOCK, C_RELINKED, "leveldb_filterpolicy_create_bloom"),
        (
            CXX_STOCK,
            CXX_RELINKED,
            "_ZN7leveldb20NewBloomFilterPolicyEi",
        ),
    ] {
        let source = stock.sources[0];
        let (stock, relinked) = (stock.build(false), relinked.build(false));
        let dir = Scratch::new();
        let small_write = |exe: &Path, swap| run(exe, swap, "write", &dir, 100, &bindings);
        let stock_run = small_write(&stock, Swap::None);
        assert!(stock_run.binds(&stock, symbol, "libleveldb.so"), "{source}");
        let preloaded = small_write(&stock, Swap::Preload);
        assert!(
            preloaded.binds(&stock, symbol, "libleveldb_bloom.so"),
            "{source}"
        );
        let relinked_run = small_write(&relinked, Swap::None);
        assert!(
            relinked_run.binds(&relinked, symbol, "libleveldb_bloom.so"),
            "{source}"
        );
    }
}

/// `leveldb_bloom::NewBloomFilterPolicy` from the C++ header writes the same tables
/// whatever the link order (with LevelDB first, nothing is swapped and the header
/// still reaches this library), and they read back stock. The policy LevelDB calls
/// is the library's own object: its vtable lies in libleveldb_bloom (the counting
/// shim's `callbacks_in`), not in the program, and it built and answered there.
#[test]
fn explicit_cxx_header_gives_the_same_tables_in_either_link_order() {
    let stock = CXX_STOCK.build(false);
    let reference = tables(&write(&stock, Swap::None).0);
    let bindings = [("LD_DEBUG", "bindings")];
    for (variant, status) in [(CXX_EXPLICIT_UNSWAPPED, "0"), (CXX_EXPLICIT_SWAPPED, "3")] {
        let link = variant.program;
        let explicit = variant.build(false);
        let dir = Scratch::new();
        let written = run(&explicit, Swap::None, "write", &dir, KEYS, &bindings);
        assert_eq!(written.swap_status(), status, "{link:?}");
        assert!(
            tables(&dir) == reference,
            "{link:?}: tables differ from stock"
        );
        let library_object = |run: &Run| {
            run.count("policies") >= 1 && run.calls["callbacks_in"].contains("libleveldb_bloom")
        };
        assert!(
            library_object(&written) && written.count("create_filter") > 0,
            "{link:?}: filters not built by the library's object: {:?}",
            written.calls
        );
        let read_back = run(&explicit, Swap::None, "read", &dir, KEYS, &bindings);
        read_back.read_counts();
        assert!(
            library_object(&read_back) && read_back.count("said_no") > 0,
            "{link:?}: {:?}",
            read_back.calls
        );
        read(&stock, Swap::None, &dir);
    }
}

/// Filter statistics of unmodified LevelDB programs (`LEVELDB_BLOOM_STATS=FILE`), C
/// and C++ API, preloaded and relinked: the summary written at exit counts exactly
/// the filter queries, "absent" answers and filters built that the counting shim
/// saw LevelDB ask of this library's policies.
#[test]
fn filter_statistics_equal_the_calls_leveldb_made() {
    for (stock, relinked) in [(C_STOCK, C_RELINKED), (CXX_STOCK, CXX_RELINKED)] {
        let source = stock.sources[0];
        let (stock, relinked) = (stock.build(false), relinked.build(false));
        let (db, _) = write(&stock, Swap::None);
        for (exe, swap) in [(&stock, Swap::Preload), (&relinked, Swap::None)] {
            for (mode, dir) in [("read", &db), ("write", &Scratch::new())] {
                let stats = StatsFile::new();
                let file = stats.path().to_str().expect("a UTF-8 path");
                let run = run(exe, swap, mode, dir, KEYS, &[("LEVELDB_BLOOM_STATS", file)]);
                assert_swapped(&run);
                let summary = stats.summary();
                let (queries, absent) = (summary.queries, summary.absent);
                let (may_match, built) = (summary.may_match, summary.filters_built);
                let what = format!("{source} {swap:?} {mode}: {}", summary.text);
                print!("{what}");
                assert_eq!(queries, run.count("key_may_match"), "{what}");
                assert_eq!(absent, run.count("said_no"), "{what}");
                assert_eq!(queries, absent + may_match, "{what}");
                assert_eq!(built, run.count("create_filter"), "{what}");
                if mode == "read" {
                    let (_, absent_keys) = run.read_counts();
                    assert!(absent * 100 >= absent_keys * 95, "{what}");
                }
            }
        }
    }
}
