//! The swap in Python programs, which load LevelDB `RTLD_LOCAL`: Debian's
//! python3-plyvel, LevelDB's C API through `ctypes`, and the plyvel wheel from PyPI
//! (its own LevelDB, of the old `std::string` ABI); `multiprocessing` workers forked
//! while policies are made and destroyed; the filter statistics of an unmodified
//! program. Each test proves from inside the process that this library's code ran
//! (`leveldb_bloom_swap_status()`, the dynamic linker's bindings, the statistics),
//! and that every key reads back.

use crate::common;

use std::path::PathBuf;
use std::process::{Command, Output};

use common::stats::{StatsFile, Summary};
use common::{lib_path, succeed, Scratch};

/// Debian's python3, which has python3-plyvel (the first python3 on PATH may not).
const PYTHON: &str = "/usr/bin/python3";

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Where a Python program finds LevelDB: through Debian's python3-plyvel or ctypes
/// (Debian's libleveldb.so.1d), or through the plyvel wheel from PyPI, installed by
/// `scripts/ensure-leveldb` under `target/` (its own LevelDB 1.22,
/// `plyvel.libs/libleveldb-<hash>.so.1.22.0`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Binding {
    DebianPlyvel,
    Ctypes,
    PlyvelWheel,
}

impl Binding {
    /// The binding's name for `python_db.py`.
    fn script_name(self) -> &'static str {
        match self {
            Binding::DebianPlyvel | Binding::PlyvelWheel => "plyvel",
            Binding::Ctypes => "ctypes",
        }
    }

    /// The directory holding the wheel's plyvel, checked to be installed.
    fn wheel() -> PathBuf {
        let wheel = common::cache_dir("reach/plyvel-wheel");
        assert!(
            wheel.join("plyvel.libs").is_dir(),
            "the plyvel wheel is not installed in {}: run `make deps` (scripts/ensure-leveldb)",
            wheel.display()
        );
        wheel
    }

    /// What the path of the LevelDB this binding uses contains.
    fn leveldb(self) -> &'static str {
        match self {
            Binding::DebianPlyvel | Binding::Ctypes => "/libleveldb.so.1d",
            Binding::PlyvelWheel => "/plyvel.libs/libleveldb-",
        }
    }
}

/// `tests/loaders/python_db.py BINDING MODE DIR`, with this library preloaded (and
/// named to the script, which reads the swap status from inside) when `swapped`,
/// its statistics then written to `stats`.
fn python(binding: Binding, mode: &str, dir: &Scratch, stats: Option<&StatsFile>) -> Output {
    let mut command = Command::new(PYTHON);
    command
        .arg(common::repo().join("tests/loaders/python_db.py"))
        .args([binding.script_name(), mode, dir.path()])
        .env("LD_DEBUG", "bindings");
    if binding == Binding::PlyvelWheel {
        command.env("PYTHONPATH", Binding::wheel());
    }
    if let Some(stats) = stats {
        command
            .env("LD_PRELOAD", lib_path())
            .env("LEVELDB_BLOOM_LIB", lib_path())
            .env("LEVELDB_BLOOM_STATS", stats.path());
    }
    let output = succeed(&mut command);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.lines().any(|line| line.contains(binding.leveldb())),
        "{binding:?}: no LevelDB at *{}* ran",
        binding.leveldb()
    );
    output
}

/// Whether the dynamic linker bound some object's `symbol` to this library.
fn bound_to_us(output: &Output, symbol: &str) -> bool {
    let stderr = String::from_utf8_lossy(&output.stderr);
    stderr
        .lines()
        .any(|line| line.contains("libleveldb_bloom.so") && line.ends_with(&format!("`{symbol}'")))
}

/// A Python program's database written stock and swapped: the same tables, with
/// filters; the swap in effect from inside the process, its filters built and
/// queried there; each database read back right by the other. Returns the swapped
/// write's output.
fn prove_python_swap(binding: Binding) -> Output {
    let (stock_db, swapped_db) = (Scratch::new(), Scratch::new());
    let stock = python(binding, "write", &stock_db, None);
    assert!(stdout(&stock).contains("swap status: absent"));
    let stats = StatsFile::new();
    let swapped = python(binding, "write", &swapped_db, Some(&stats));
    assert!(
        stdout(&swapped).contains("swap status: 3\n"),
        "{}",
        stdout(&swapped)
    );
    assert!(
        bound_to_us(&swapped, "_ZN7leveldb20NewBloomFilterPolicyEi"),
        "{binding:?}: LevelDB's bloom policy was not this library's"
    );
    stats.summary().assert_built();
    assert!(
        common::tables_with_filters(&stock_db) == common::tables_with_filters(&swapped_db),
        "{binding:?}: tables differ from stock"
    );
    for (dir, swapped) in [(&stock_db, true), (&swapped_db, false)] {
        let stats = StatsFile::new();
        let read = stdout(&python(binding, "read", dir, swapped.then_some(&stats)));
        assert!(read.contains(", 0 wrong"), "{read}");
        assert!(read.contains("read: 18000 present"), "{read}");
        if swapped {
            assert!(read.contains("swap status: 3\n"), "{read}");
            // About 20,000 absent keys read (python_db.py).
            stats.summary().assert_rejected(19_000);
        }
    }
    swapped
}

#[test]
fn python_plyvel_extension_module() {
    prove_python_swap(Binding::DebianPlyvel);
}

#[test]
fn python_ctypes_on_leveldb_c_api() {
    prove_python_swap(Binding::Ctypes);
}

/// The plyvel wheel from PyPI brings its own LevelDB, built with libstdc++'s old
/// `std::string` ABI (manylinux2014): the swap serves it, and loads no other LevelDB.
#[test]
fn python_plyvel_wheel_with_its_own_old_abi_leveldb() {
    let libs = Binding::wheel().join("plyvel.libs");
    let leveldb = std::fs::read_dir(&libs)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.to_string_lossy().contains("/libleveldb-"))
        .unwrap_or_else(|| panic!("no libleveldb-*.so in {}", libs.display()));
    let symbols = stdout(&succeed(Command::new("nm").arg("-D").arg(&leveldb)));
    // DB::Open(const Options&, const std::string&, DB**), old ABI: `Ss`.
    assert!(
        symbols.contains("_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_"),
        "{}: not the old ABI",
        leveldb.display()
    );
    let swapped = prove_python_swap(Binding::PlyvelWheel);
    let stderr = String::from_utf8_lossy(&swapped.stderr);
    assert!(
        !stderr.contains("libleveldb.so.1d"),
        "a second LevelDB was loaded beside the wheel's"
    );
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
fn python_stats_summary(args: &[&str]) -> Summary {
    python_stats_summary_preloading(args, &lib_path().display().to_string())
}

/// The same with `preload` as `LD_PRELOAD`.
fn python_stats_summary_preloading(args: &[&str], preload: &str) -> Summary {
    let stats = StatsFile::new();
    succeed(
        Command::new(PYTHON)
            .args(args)
            .env("LD_PRELOAD", preload)
            .env("LEVELDB_BLOOM_STATS", stats.path()),
    );
    stats.summary()
}

/// Filter statistics of an unmodified plyvel program: reading every key of a
/// database and as many absent ones, the filters answered "absent" for nearly every
/// absent key, and the summary says so.
#[test]
fn python_plyvel_filter_statistics_at_exit() {
    let db = Scratch::new();
    python(Binding::DebianPlyvel, "write", &db, None);
    let script = common::repo().join("tests/loaders/python_db.py");
    let script = script.to_str().unwrap();
    let summary = python_stats_summary(&[script, "plyvel", "read", db.path()]);
    print!("{}", summary.text);
    // python_db.py reads 18,000 present keys and about 20,000 absent ones.
    assert!(summary.queries >= 36_000, "{}", summary.text);
    summary.assert_rejected(19_000);
    assert_eq!(summary.filters_built, 0, "{}", summary.text);
    let repo = common::repo();
    test_support::samples::assert_sample(
        repo,
        "docs/statistics.md",
        "plyvel-stats",
        &summary.text,
        &[],
    );
}

/// plyvel's default options (no filter policy) with the default-bits object preloaded
/// beside the library (it sees the opens) but without `LEVELDB_BLOOM_DEFAULT_BITS`:
/// the summary says the database had no policy and what gives it one, as
/// docs/statistics.md shows.
#[test]
fn python_plyvel_statistics_name_the_databases_opened_without_a_policy() {
    let db = Scratch::new();
    let program = "import plyvel, sys\n\
        db = plyvel.DB(sys.argv[1], create_if_missing=True)\n\
        db.put(b'key', b'value'); db.close()\n";
    let preload = super::default_bits::preload_both();
    let summary = python_stats_summary_preloading(&["-c", program, db.path()], &preload).text;
    let repo = common::repo();
    test_support::samples::assert_sample(
        repo,
        "docs/statistics.md",
        "no-policy-note",
        &summary,
        &[],
    );
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
    let summary = python_stats_summary(&["-c", program, db.path()]).text;
    print!("{summary}");
    assert!(summary.contains(": 0 filter queries"), "{summary}");
    assert!(
        summary.contains("no filter was built or queried"),
        "{summary}"
    );
}

/// Filters built, no read reaching a table (every Get answered from the memtable,
/// as in a program's first run): the summary says only that, blaming no one.
#[test]
fn python_plyvel_statistics_of_reads_from_memory_blame_no_one() {
    let db = Scratch::new();
    let program = "import plyvel, sys\n\
        db = plyvel.DB(sys.argv[1], create_if_missing=True, bloom_filter_bits=10)\n\
        for i in range(2000): db.put(b'key%d' % i, b'value')\n\
        assert all(db.get(b'key%d' % i) == b'value' for i in range(2000))\n\
        assert all(db.get(b'absent%d' % i) is None for i in range(2000))\n\
        db.compact_range(); db.close()\n";
    let summary = python_stats_summary(&["-c", program, db.path()]).text;
    print!("{summary}");
    assert!(
        summary.contains(": 0 filter queries, 0 answered absent, "),
        "{summary}"
    );
    assert!(
        summary
            .trim_end()
            .ends_with("; no read reached a table with this library's filters"),
        "{summary}"
    );
    assert!(
        !summary.contains("ignored") && !summary.contains("(-"),
        "{summary}"
    );
}
