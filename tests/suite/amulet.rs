//! A real client nobody here wrote, where `LD_PRELOAD` can and cannot reach:
//! amulet-leveldb 1.0.7 (its PyPI sdist, Mojang's LevelDB inside) built as a Python
//! extension by `tests/reach/build-amulet`, once as Debian's Python links extensions
//! (`-Wl,-Bsymbolic-functions`: it calls its own `leveldb::NewBloomFilterPolicy`
//! directly) and once with `LDSHARED` without that flag.
//!
//! - Linked `-Bsymbolic-functions`: with this library preloaded and statistics asked
//!   for, the process says at exit which object the swap cannot reach, why and the
//!   route; `leveldb-bloom reach` exits 3 on it.
//! - Linked without: swapped (this library's statistics show the filters built and
//!   queried), the tables byte for byte those of the stock run, every key read back
//!   right; `reach` exits 0 on it, on Debian's libleveldb.so.1d and on the plyvel
//!   wheel's LevelDB.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::stats::StatsFile;
use common::{lib_path, once, run, Scratch};

/// Keys written: enough for filters in several blocks.
const KEYS: &str = "20000";

/// Writes KEYS keys (the even numbers), compacts; or reads back every number below
/// twice KEYS: the odd ones are absent, inside the tables' key ranges.
const SCRIPT: &str = r#"
import sys, leveldb
mode, path, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
db = leveldb.LevelDB(path, mode == "write")
key, value = lambda i: b"key%08d" % i, lambda i: b"value%08d" % (i * 7)
if mode == "write":
    for i in range(0, 2 * count, 2):
        db.put(key(i), value(i))
    db.compact()
else:
    wrong = sum((key(i) in db) != (i % 2 == 0) for i in range(2 * count))
    wrong += sum(db.get(key(i)) != value(i) for i in range(0, 2 * count, 2))
    print("wrong:", wrong)
db.close()
"#;

/// The extension module built `variant`ly ("symbolic" or "plain"): its package
/// directory, for PYTHONPATH.
fn amulet(variant: &str) -> PathBuf {
    let modules = once("amulet", || {
        let sdist = common::cache_dir("reach/amulet-sdist");
        assert!(
            sdist.join("leveldb-mcpe").is_dir(),
            "the amulet-leveldb sdist is not in {}: run `make deps` (scripts/ensure-leveldb)",
            sdist.display()
        );
        let started = std::time::Instant::now();
        let mut command = common::command(common::repo().join("tests/reach/build-amulet"));
        command
            .arg(&sdist)
            .arg(common::cache_dir("reach/amulet-build"));
        let built = run(&mut command);
        println!(
            "amulet-leveldb: built or checked in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        PathBuf::from(built.lines().next().expect("the module's path"))
    });
    // .../amulet-build/symbolic/leveldb/_leveldb….so: the variant is two levels up.
    let root = modules.ancestors().nth(3).expect("amulet-build");
    root.join(variant)
}

/// The extension module's file in `variant`'s package.
fn module(variant: &str) -> PathBuf {
    let package = amulet(variant).join("leveldb");
    std::fs::read_dir(&package)
        .expect("the package")
        .map(|entry| entry.unwrap().path())
        .find(|path| path.extension().is_some_and(|ext| ext == "so"))
        .expect("the extension module")
}

/// Debian's Python running [`SCRIPT`] on amulet `variant`, preloaded with this
/// library and its statistics in `stats` when given.
fn python(variant: &str, mode: &str, dir: &Scratch, stats: Option<&StatsFile>) -> Output {
    let mut command = common::command("/usr/bin/python3");
    command
        .args(["-c", SCRIPT, mode, dir.path(), KEYS])
        .env("PYTHONPATH", amulet(variant));
    if let Some(stats) = stats {
        command
            .env("LD_PRELOAD", lib_path())
            .env("LEVELDB_BLOOM_STATS", stats.path());
    }
    common::succeed(&mut command)
}

/// The database's table files, sorted, each with a bloom filter block.
fn tables(dir: &Scratch) -> Vec<Vec<u8>> {
    let mut tables: Vec<Vec<u8>> = std::fs::read_dir(dir.dir())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "ldb"))
        .map(|path| std::fs::read(path).unwrap())
        .collect();
    tables.sort();
    assert!(!tables.is_empty(), "no table written");
    let name = b"filter.leveldb.BuiltinBloomFilter2";
    assert!(
        tables
            .iter()
            .all(|table| table.windows(name.len()).any(|window| window == name)),
        "a table without a bloom filter block"
    );
    tables
}

#[test]
fn symbolic_functions_extension_is_named_at_exit_and_by_reach() {
    let module = module("symbolic");
    let (status, stdout) = common::reach(&[&module]);
    assert_eq!(status, 3, "{stdout}");
    assert!(stdout.contains("-Bsymbolic-functions"), "{stdout}");
    assert!(
        stdout.contains("LDSHARED without -Wl,-Bsymbolic-functions"),
        "{stdout}"
    );

    let (dir, stats) = (Scratch::new(), StatsFile::new());
    python("symbolic", "write", &dir, Some(&stats));
    let said = std::fs::read_to_string(stats.path()).expect("a line at exit");
    let lines: Vec<&str> = said
        .lines()
        .filter(|line| line.starts_with("leveldb-bloom: "))
        .collect();
    assert_eq!(lines.len(), 1, "{said}");
    for part in [
        module.display().to_string().as_str(),
        "-Bsymbolic-functions",
        "LDSHARED without -Wl,-Bsymbolic-functions",
        "libleveldb_bloom.a",
        "contrib/leveldb/util/bloom.cc",
    ] {
        assert!(lines[0].contains(part), "{part:?} not in: {}", lines[0]);
    }
    // Nothing reached this library: LevelDB built its own filters.
    assert!(!said.contains("leveldb-bloom stats"), "{said}");
    // docs/swap.md shows the line, the module's directory left out.
    let dir = module.parent().unwrap().display().to_string();
    let replace = [(dir.as_str(), "/…/leveldb")];
    test_support::samples::assert_sample(
        common::repo(),
        "docs/swap.md",
        "self-bound",
        lines[0],
        &replace,
    );
}

#[test]
fn plain_extension_is_swapped_with_stocks_tables() {
    let (status, stdout) = common::reach(&[&module("plain")]);
    assert_eq!(status, 0, "{stdout}");

    let (stock, swapped) = (Scratch::new(), Scratch::new());
    python("plain", "write", &stock, None);
    let stats = StatsFile::new();
    python("plain", "write", &swapped, Some(&stats));
    let summary = stats.summary();
    summary.assert_built();
    assert!(
        !summary.text.contains("leveldb-bloom: "),
        "{}",
        summary.text
    );
    assert!(
        tables(&stock) == tables(&swapped),
        "amulet's tables differ from stock"
    );
    for (dir, stats) in [(&swapped, None), (&stock, Some(StatsFile::new()))] {
        let read = python("plain", "read", dir, stats.as_ref());
        let shown = String::from_utf8_lossy(&read.stdout);
        assert!(shown.contains("wrong: 0"), "{shown}");
        if let Some(stats) = stats {
            // 20,000 absent keys, all but about 1% answered absent by our filters.
            stats.summary().assert_rejected(19_000);
        }
    }
}

#[test]
fn reach_exits_0_on_debians_leveldb_and_the_plyvel_wheels() {
    let debian = format!(
        "/usr/lib/{}-linux-gnu/libleveldb.so.1d",
        std::env::consts::ARCH
    );
    let debian = Path::new(&debian);
    let libs = common::cache_dir("reach/plyvel-wheel/plyvel.libs");
    let wheel = std::fs::read_dir(&libs)
        .unwrap_or_else(|e| panic!("{}: {e}: run `make deps`", libs.display()))
        .map(|entry| entry.unwrap().path())
        .find(|path| path.to_string_lossy().contains("libleveldb-"))
        .expect("the wheel's LevelDB");
    let (status, stdout) = common::reach(&[debian, &wheel]);
    assert_eq!(status, 0, "{stdout}");
    assert!(
        stdout.contains("the old one"),
        "the wheel's LevelDB is old-ABI: {stdout}"
    );
    let (status, stdout) = common::reach(&[debian, &module("symbolic")]);
    assert_eq!(status, 3, "{stdout}");
}

/// Not an ELF file: exit 1, the file named on stderr.
#[test]
fn reach_names_a_file_that_is_not_elf() {
    let output = Command::new(common::tool())
        .args(["reach", "Cargo.toml"])
        .current_dir(common::repo())
        .output()
        .expect("the tool runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("Cargo.toml: not an ELF file"), "{stderr}");
}
