//! The C++ header's `leveldb_bloom::NewBloomFilterPolicy` where no code of the program
//! proves its `std::string` ABI, which a policy detecting it would need: LevelDB built
//! into the program with libstdc++ linked statically (`-static-libstdc++`, and fully
//! `-static`), and LevelDB of the old ABI. The header's policy is the library's own
//! object (`c_tests/dropin_cxx.cc` checks it is one of its handles), told how to grow
//! the program's strings by the header; each program writes stock's tables byte for
//! byte, reads a stock database right, and this library's statistics show it built and
//! queried the filters. (Dynamic LevelDB: tests/suite/dropin.rs; libc++ and the legacy
//! format: the hpp_policy rows of tests/suite/harnesses.rs.)

use crate::common;

use std::path::{Path, PathBuf};

use common::source_leveldb::old_abi_leveldb;
use common::stats::StatsFile;
use common::{once, Lang, Program, Scratch};

/// Keys each program writes: several tables.
const KEYS: &str = "50000";

/// Debian's static LevelDB.
const LIBLEVELDB_A: &str = "/usr/lib/x86_64-linux-gnu/libleveldb.a";

/// `c_tests/dropin_cxx.cc` as `name`: through the header when `header`, else with
/// LevelDB's own policy (stock), built with `flags`.
fn dropin_cxx(name: &str, header: bool, flags: &[String]) -> PathBuf {
    once(name, || {
        let program = Program::new(name, Lang::Cxx11, &["c_tests/dropin_cxx.cc"]);
        let program = match header {
            true => program.arg("-DEXPLICIT_HEADER"),
            false => program,
        };
        flags.iter().fold(program, |p, flag| p.arg(flag)).build()
    })
}

/// `exe mode dir KEYS`, counting into `stats`: its stdout, after the program's own
/// checks passed.
fn run(exe: &Path, mode: &str, dir: &Scratch, stats: &StatsFile) -> String {
    let stdout = common::run(
        common::command(exe)
            .args([mode, dir.path(), KEYS])
            .env("LEVELDB_BLOOM_STATS", stats.path()),
    );
    common::harness::assert_report("dropin_cxx", &stdout);
    stdout
}

/// `header` (the header's policy) writes the tables `stock` writes, reads `stock`'s
/// database right, and this library built and queried the filters.
fn prove_header_policy(stock: &Path, header: &Path) {
    let (stock_db, header_db) = (Scratch::new(), Scratch::new());
    run(stock, "write", &stock_db, &StatsFile::new());
    let stats = StatsFile::new();
    run(header, "write", &header_db, &stats);
    stats.summary().assert_built();
    assert!(
        common::tables_with_filters(&stock_db) == common::tables_with_filters(&header_db),
        "{}: tables differ from stock",
        header.display()
    );
    let stats = StatsFile::new();
    let read = run(header, "read", &stock_db, &stats);
    assert!(read.contains(", 0 wrong"), "{read}");
    // dropin_cxx reads 50,000 keys never written and about 5,700 deleted ones.
    stats.summary().assert_rejected(50_000);
}

/// Flags linking Debian's `libleveldb.a` (and `libleveldb_bloom.a` before it when
/// `bloom`) into a program linked `how` (`-static-libstdc++`, `-static`).
fn static_flags(how: &str, bloom: bool) -> Vec<String> {
    let mut flags = vec![how.to_string()];
    if bloom {
        let lib = common::lib_dir().join("libleveldb_bloom.a");
        flags.push(lib.display().to_string());
    }
    flags.extend([LIBLEVELDB_A, "-lsnappy", "-lpthread", "-ldl", "-lm"].map(String::from));
    flags
}

/// LevelDB from Debian's `libleveldb.a`, this library's `libleveldb_bloom.a` and
/// libstdc++ (`-static-libstdc++`) linked into the program: its dynamic symbols show
/// no `std::string` import, so a detecting policy would end the process at the first
/// `CreateFilter`; the header's builds stock's filters.
#[test]
fn static_leveldb_and_static_libstdcxx() {
    let how = "-static-libstdc++";
    let stock = dropin_cxx(
        "header_policy_static_stock",
        false,
        &static_flags(how, false),
    );
    let header = dropin_cxx(
        "header_policy_static_libstdcxx",
        true,
        &static_flags(how, true),
    );
    let imports = common::run(
        std::process::Command::new("nm")
            .args(["-D", "--undefined-only"])
            .arg(&header),
    );
    assert!(
        !imports.contains("basic_string") && !imports.contains("_ZNSs"),
        "the program imports std::string members:\n{imports}"
    );
    prove_header_policy(&stock, &header);
}

/// The same program linked fully statically (`-static`), where a detecting policy
/// is not even made (NULL, LevelDB then runs without filters: tests/suite/reach.rs):
/// the header's builds stock's filters.
#[test]
fn fully_static_program() {
    let how = "-static";
    let stock = dropin_cxx(
        "header_policy_fully_static_stock",
        false,
        &static_flags(how, false),
    );
    let header = dropin_cxx("header_policy_fully_static", true, &static_flags(how, true));
    prove_header_policy(&stock, &header);
}

/// A program of the old `std::string` ABI on the old-ABI LevelDB (built from
/// Debian's source), LevelDB linked first so nothing is swapped: the header's policy
/// grows old-ABI strings with the program's own code.
#[test]
fn old_abi_program_on_the_old_abi_leveldb() {
    let (_, leveldb) = old_abi_leveldb();
    let mut flags = vec!["-D_GLIBCXX_USE_CXX11_ABI=0".to_string()];
    flags.extend(leveldb);
    let stock = dropin_cxx("header_policy_old_abi_stock", false, &flags);
    let lib = common::lib_dir().display().to_string();
    flags.extend([
        format!("-L{lib}"),
        format!("-Wl,-rpath,{lib}"),
        "-lleveldb_bloom".into(),
    ]);
    let header = dropin_cxx("header_policy_old_abi", true, &flags);
    prove_header_policy(&stock, &header);
}
