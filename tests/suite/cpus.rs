//! Other CPUs: the library cross-built for AArch64 and for s390x (big-endian) with
//! cargo and Debian's cross compilers, and run under qemu-user against that CPU's
//! Debian LevelDB 1.23 (multiarch `libleveldb-dev:arm64` / `:s390x`, installed by
//! `scripts/ensure-leveldb`):
//!
//! - `c_tests/reference_test.cc`: filters byte for byte and answers bit for bit
//!   against that CPU's LevelDB (every fixed case, fewer generated ones than on the
//!   host: emulation is some 10 times slower);
//! - `c_tests/dropin_c.c` and `dropin_cxx.cc`, stock and swapped by `LD_PRELOAD`: the
//!   same tables byte for byte (and, on s390x, the same as the host's: the format has
//!   no byte order of its own), every key read back right by the other library, the
//!   swap status 3, and this library's statistics showing its filters built and
//!   queried;
//! - `dropin_cxx.cc` built with libstdc++'s old `std::string` ABI against LevelDB
//!   built so for the CPU (Debian's source package, cross-built and cached by
//!   `tests/reach/build-leveldb`): swapped, stock's tables, every key right;
//! - a plugin linked to LevelDB opened `RTLD_LOCAL`: swapped, and
//!   `leveldb_bloom_swap_status()` 3 where no trampoline shows the caller (s390x);
//! - `as_needed.cc` built with the old ABI, linked with this library alone (no
//!   LevelDB loaded): its own imports decide its policy's string;
//! - the format core's unit tests and its property tests (with fewer cases), run
//!   by cargo under qemu (all but one exhaustive arithmetic check: see `core_tests`).
//!
//! The builds are cached under `target/cpus` (their own cargo target directory:
//! `cargo test` holds the lock of `target/`). A CPU whose toolchain, LevelDB or
//! emulator is missing here prints a `SKIPPED` line, never a silent pass.

use crate::common;

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

mod cpu;

use cpu::{Cpu, AARCH64, S390X};

use common::harness::{assert_report, reference_compared};
use common::stats::StatsFile;
use common::{once, run, Lang, Program, Scratch};

/// Keys the drop-in programs write: two tables or more.
const KEYS: &str = "20000";
/// Generated cases of the reference harness (every fixed case runs too).
const REFERENCE_CASES: u64 = 300;

/// The reference harness on the CPU: no mismatch against its LevelDB.
fn reference_test(cpu: Cpu) {
    if !cpu.available("reference_test") {
        return;
    }
    let exe = cpu.program("reference_test", Lang::Cxx17, "c_tests/reference_test.cc");
    let mut command = cpu.emulate(&exe, false);
    command.arg(cpu.library()).arg(REFERENCE_CASES.to_string());
    let stdout = run(&mut command);
    assert_report("reference_test", &stdout);
    reference_compared(&stdout, REFERENCE_CASES);
}

/// One run of a drop-in program (`mode` write or read) on the database `dir`,
/// swapped when `preload`: its stdout, after its report was checked, and, swapped,
/// this library's statistics.
fn dropin(
    cpu: Cpu,
    exe: &Path,
    report: &str,
    mode: &str,
    dir: &Scratch,
    preload: bool,
) -> (String, Option<common::stats::Summary>) {
    let stats = StatsFile::new();
    let mut command = cpu.emulate(exe, preload);
    command
        .args([mode, dir.path(), KEYS])
        .env("LEVELDB_BLOOM_STATS", stats.path());
    let stdout = run(&mut command);
    assert_report(report, &stdout);
    let status = stdout
        .lines()
        .find_map(|line| line.strip_prefix("swap status: "))
        .expect("the program prints the swap status");
    assert_eq!(status, if preload { "3" } else { "absent" }, "{stdout}");
    if mode == "read" {
        assert!(stdout.contains(", 0 wrong"), "{stdout}");
    }
    (stdout, preload.then(|| stats.summary()))
}

/// A drop-in program on the CPU, stock and swapped by `LD_PRELOAD`: stock's tables,
/// every key right both ways, this library's filters built and queried. Returns
/// the stock tables.
fn prove_swap(cpu: Cpu, name: &str, exe: &Path) -> Vec<Vec<u8>> {
    let (stock_db, swapped_db) = (Scratch::new(), Scratch::new());
    dropin(cpu, exe, name, "write", &stock_db, false);
    let (_, stats) = dropin(cpu, exe, name, "write", &swapped_db, true);
    stats.expect("swapped").assert_built();
    let stock = common::tables_with_filters(&stock_db);
    assert!(
        stock == common::tables_with_filters(&swapped_db),
        "{name} on {}: swapped tables differ from stock",
        cpu.target
    );
    dropin(cpu, exe, name, "read", &swapped_db, false);
    let (_, stats) = dropin(cpu, exe, name, "read", &stock_db, true);
    // 20,000 keys never written (and the deleted ones) answered absent by our filters.
    stats.expect("swapped").assert_rejected(19_000);
    stock
}

/// The same program, stock, on this machine's own CPU: its tables.
fn host_tables(name: &str, lang: Lang, source: &str) -> Vec<Vec<u8>> {
    let exe = once(name, || {
        Program::new(name, lang, &[source]).arg("-lleveldb").build()
    });
    let dir = Scratch::new();
    run(common::command(exe).args(["write", dir.path(), KEYS]));
    common::tables_with_filters(&dir)
}

fn c_program_swapped(cpu: Cpu) {
    if cpu.available("dropin_c") {
        let exe = cpu.program("dropin_c", Lang::C99, "c_tests/dropin_c.c");
        let tables = prove_swap(cpu, "dropin_c", &exe);
        assert!(
            tables == host_tables("dropin_c_host", Lang::C99, "c_tests/dropin_c.c"),
            "{}: LevelDB's tables differ from the host's",
            cpu.target
        );
    }
}

fn cxx_program_swapped(cpu: Cpu) {
    if cpu.available("dropin_cxx") {
        let exe = cpu.program("dropin_cxx", Lang::Cxx11, "c_tests/dropin_cxx.cc");
        prove_swap(cpu, "dropin_cxx", &exe);
    }
}

/// The C++ drop-in program built with libstdc++'s old `std::string` ABI against
/// LevelDB 1.23 built so for the CPU (Debian's source package, cross-built by
/// `tests/reach/build-leveldb`, cached): swapped, its filters land in old-ABI strings
/// right (stock's tables, every key read back).
fn old_abi_cxx_program_swapped(cpu: Cpu) {
    if !cpu.available("an old-ABI C++ program") {
        return;
    }
    let build = common::source_leveldb::cross_old_abi_leveldb(cpu.multiarch);
    let include = build.with_file_name("src").join("include");
    let flags = [
        "-D_GLIBCXX_USE_CXX11_ABI=0".to_string(),
        format!("-I{}", include.display()),
        format!("-L{}", build.display()),
        format!("-Wl,-rpath,{}", build.display()),
        "-lleveldb".to_string(),
    ];
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let exe = cpu.build(
        "dropin_cxx_old_abi",
        Lang::Cxx11,
        "c_tests/dropin_cxx.cc",
        &flags,
    );
    prove_swap(cpu, "dropin_cxx", &exe);
}

/// The core's unit tests and its property tests (64 cases each), under qemu: all but
/// the exhaustive check of the bit position's remainder for every 32-bit hash, a
/// minute emulated (it is arithmetic, not byte order; the host runs it).
fn core_tests(cpu: Cpu) {
    if !cpu.available("the core's tests") {
        return;
    }
    static TESTING: Mutex<()> = Mutex::new(());
    let _one_at_a_time = TESTING.lock().unwrap_or_else(|e| e.into_inner());
    // The tests' profile, as on the host (see Cargo.toml: linking the test executables
    // with link-time optimisation costs minutes).
    let mut command = cpu.cargo(
        &["test", "-p", "leveldb-bloom", "--lib", "--test", "suite"],
        "release-tests",
    );
    command
        .args([
            "--",
            "properties::",
            "--skip",
            "remainder_is_exact_for_every_h",
        ])
        .env("PROPTEST_CASES", "64");
    let output = run(&mut command);
    print!("{output}");
}

/// A plugin linked to LevelDB, opened `RTLD_LOCAL` by a host that is not (as in
/// tests/suite/loaders.rs): swapped, every key right, and `leveldb_bloom_swap_status()` 3,
/// also where no trampoline shows the caller (s390x): the loaded objects show LevelDB.
fn plugin_swap_status(cpu: Cpu) {
    if !cpu.available("the RTLD_LOCAL plugin") {
        return;
    }
    let plugin = cpu.build(
        "plugin.so",
        Lang::C99,
        "c_tests/plugin.c",
        &["-shared", "-fPIC", "-lleveldb"],
    );
    let host = cpu.build("plugin_host", Lang::C99, "c_tests/plugin_host.c", &["-ldl"]);
    let dir = Scratch::new();
    let mut command = cpu.emulate(&host, true);
    command.arg(&plugin).args([dir.path(), "2000", "100"]);
    let shown = run(&mut command);
    assert_report("plugin", &shown);
    assert!(shown.contains("swap status: 3\n"), "{shown}");
    assert!(shown.contains("read: 2000 present, 2000 absent"), "{shown}");
}

/// The C++ program that links only this library and calls
/// `leveldb::NewBloomFilterPolicy` itself (`c_tests/as_needed.cc`), built with
/// libstdc++'s old `std::string` ABI for the CPU: no LevelDB is loaded, so the
/// program's own imports (old-ABI string members) decide, once, when the policy is
/// made; its filter is the host's stock program's, and nothing aborts.
fn old_abi_program_without_leveldb(cpu: Cpu) {
    if !cpu.available("an old-ABI program without LevelDB") {
        return;
    }
    let dir = cpu.library().parent().unwrap().display().to_string();
    let exe = cpu.build(
        "as_needed_old_abi",
        Lang::Cxx11,
        "c_tests/as_needed.cc",
        &[
            "-D_GLIBCXX_USE_CXX11_ABI=0",
            &format!("-L{dir}"),
            &format!("-Wl,-rpath,{dir}"),
            "-lleveldb_bloom",
            "-ldl",
        ],
    );
    let imports = run(Command::new(format!("{}-nm", cpu.multiarch))
        .arg("-D")
        .arg(&exe));
    assert!(
        imports.contains("U _ZNSs"),
        "no old-ABI string import: {imports}"
    );
    let shown = run(&mut cpu.emulate(&exe, false));
    assert_report("as_needed", &shown);
    let host = once("as_needed_host_stock", || {
        Program::new(
            "as_needed_host_stock",
            Lang::Cxx11,
            &["c_tests/as_needed.cc"],
        )
        .arg("-lleveldb")
        .arg("-ldl")
        .build()
    });
    let stock = run(&mut common::command(host));
    let filter = |shown: &str| {
        shown
            .lines()
            .find(|l| l.starts_with("filter:"))
            .map(str::to_owned)
    };
    assert!(
        filter(&shown).is_some() && filter(&shown) == filter(&stock),
        "{shown}"
    );
}

/// Each check above, once per CPU: `aarch64_…` and `s390x_…`.
macro_rules! on_each_cpu {
    ($($check:ident: $aarch64:ident, $s390x:ident;)*) => {$(
        #[test]
        fn $aarch64() {
            $check(AARCH64);
        }

        #[test]
        fn $s390x() {
            $check(S390X);
        }
    )*};
}

on_each_cpu! {
    plugin_swap_status: aarch64_plugin_swap_status, s390x_plugin_swap_status;
    reference_test: aarch64_reference_test, s390x_reference_test;
    c_program_swapped: aarch64_c_program_swapped_by_preload, s390x_c_program_swapped_by_preload;
    cxx_program_swapped: aarch64_cxx_program_swapped_by_preload, s390x_cxx_program_swapped_by_preload;
    old_abi_cxx_program_swapped:
        aarch64_old_abi_cxx_program_swapped_by_preload, s390x_old_abi_cxx_program_swapped_by_preload;
    old_abi_program_without_leveldb:
        aarch64_old_abi_program_without_leveldb, s390x_old_abi_program_without_leveldb;
    core_tests: aarch64_core_tests, s390x_core_tests;
}
