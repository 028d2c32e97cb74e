//! `LEVELDB_BLOOM_DEFAULT_BITS=N` with real programs that set no filter policy:
//! the C drop-in program on `leveldb_options_create` alone, the C++ one on a default
//! `leveldb::Options`, Debian's python3-plyvel and the plyvel wheel from PyPI (its
//! own LevelDB 1.22 of the old `std::string` ABI) with default options, and a C++
//! program on the old-ABI LevelDB built from Debian's source. Each, swapped with the
//! variable, writes the tables the same program writes stock with
//! `NewBloomFilterPolicy(N)`, byte for byte (every session ends with a full
//! compaction); without the variable, the tables stock writes with no policy; a
//! program with its own policy keeps it. The statistics prove this library's
//! policy built the filters and that the open was seen. The default-bits object
//! (`libleveldb_bloom_default_bits.so`) is preloaded beside the library.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::stats::StatsFile;
use common::{lib_path, once, Lang, Program, Scratch};

/// Keys the drop-in programs write: several tables (1 MiB each).
const KEYS: &str = "20000";
const VARIABLE: &str = "LEVELDB_BLOOM_DEFAULT_BITS";

/// The tables of a database, checked to carry no filter block.
fn tables_without_filters(dir: &Scratch) -> Vec<Vec<u8>> {
    let tables = common::tables(dir);
    let name = b"filter.leveldb";
    for table in &tables {
        assert!(
            !table.windows(name.len()).any(|window| window == name),
            "a table with a filter block"
        );
    }
    tables
}

/// The one line of the program's stderr about the variable.
fn said_once(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|line| line.contains(VARIABLE))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    said[0].to_string()
}

/// How a program runs: stock, or with this library and the default-bits object
/// preloaded and its statistics in `stats`, with the variable at `bits` if any.
enum Run<'a> {
    Stock,
    Swapped {
        stats: &'a StatsFile,
        bits: Option<&'a str>,
    },
}

fn run(mut command: Command, how: Run) -> Output {
    if let Run::Swapped { stats, bits } = how {
        command
            .env("LD_PRELOAD", preload_both())
            .env("LEVELDB_BLOOM_STATS", stats.path());
        if let Some(bits) = bits {
            command.env(VARIABLE, bits);
        }
    }
    common::succeed(&mut command)
}

/// `LD_PRELOAD` of this library and the default-bits object.
pub fn preload_both() -> String {
    format!(
        "{} {}",
        lib_path().display(),
        common::default_bits_path().display()
    )
}

/// What a swapped run with the variable at 10 must show: the open seen and given the
/// policy, whose filters this library built.
fn assert_given_default(stats: &StatsFile) {
    let summary = stats.summary();
    summary.assert_built();
    assert!(
        summary
            .text
            .contains(&format!("each given this library's at {VARIABLE}=10")),
        "{}",
        summary.text
    );
}

/// A program that writes a database: `write(dir)` is its command for `dir`;
/// `with_policy(bits)` the same program setting its own policy (the stock reference).
fn prove_default_bits(
    name: &str,
    write: &dyn Fn(&Scratch) -> Command,
    with_policy: &dyn Fn(u32, &Scratch) -> Command,
) {
    let (stock_10, stock_none) = (Scratch::new(), Scratch::new());
    run(with_policy(10, &stock_10), Run::Stock);
    run(write(&stock_none), Run::Stock);

    let given = Scratch::new();
    let stats = StatsFile::new();
    run(
        write(&given),
        Run::Swapped {
            stats: &stats,
            bits: Some("10"),
        },
    );
    assert_given_default(&stats);
    assert!(
        common::tables_with_filters(&given) == common::tables_with_filters(&stock_10),
        "{name}: tables differ from the stock program's with NewBloomFilterPolicy(10)"
    );

    let unchanged = Scratch::new();
    let stats = StatsFile::new();
    run(
        write(&unchanged),
        Run::Swapped {
            stats: &stats,
            bits: None,
        },
    );
    assert!(
        tables_without_filters(&unchanged) == tables_without_filters(&stock_none),
        "{name}: without the variable, tables differ from stock's"
    );
    let summary = stats.summary().text;
    assert!(
        summary.contains("note: databases opened with no filter policy: ")
            && summary.contains(&format!(
                "LevelDB writes and reads no filters for them ({VARIABLE}=10 gives"
            )),
        "{name}: {summary}"
    );
}

/// A drop-in program (`c_tests/dropin_c.c` or `dropin_cxx.cc`) setting a bloom
/// policy at `bits` bits per key (0: none), linked with `flags`.
fn dropin(lang: Lang, bits: u32, flags: &[String]) -> PathBuf {
    let (source, report) = match lang {
        Lang::C99 => ("c_tests/dropin_c.c", "c"),
        _ => ("c_tests/dropin_cxx.cc", "cxx"),
    };
    let variant = if flags.iter().any(|flag| flag.contains("ABI=0")) {
        "_old_abi"
    } else {
        ""
    };
    let name = format!("default_bits_{report}{variant}_{bits}");
    once(&name, || {
        flags
            .iter()
            .fold(Program::new(&name, lang, &[source]), |program, flag| {
                program.arg(flag.clone())
            })
            .arg(format!("-DDROPIN_BITS_PER_KEY={bits}"))
            .build()
    })
}

fn dropin_write(exe: &Path, dir: &Scratch) -> Command {
    let mut command = common::command(exe);
    command.args(["write", dir.path(), KEYS]);
    command
}

fn prove_dropin(lang: Lang, flags: &[String]) {
    let name = format!("{lang:?}");
    let without = dropin(lang, 0, flags);
    prove_default_bits(&name, &|dir| dropin_write(&without, dir), &|bits, dir| {
        dropin_write(&dropin(lang, bits, flags), dir)
    });

    // A program with its own policy at 16 keeps it.
    let (stock_16, kept) = (Scratch::new(), Scratch::new());
    let own = dropin(lang, 16, flags);
    run(dropin_write(&own, &stock_16), Run::Stock);
    let stats = StatsFile::new();
    run(
        dropin_write(&own, &kept),
        Run::Swapped {
            stats: &stats,
            bits: Some("10"),
        },
    );
    assert!(
        common::tables_with_filters(&kept) == common::tables_with_filters(&stock_16),
        "{name}: a program's own policy at 16 was not kept"
    );

    // The filters serve the program's reads: absent keys answered "absent".
    let stats = StatsFile::new();
    let mut read = common::command(&without);
    read.args(["read", kept.path(), KEYS]);
    let shown = String::from_utf8_lossy(
        &run(
            read,
            Run::Swapped {
                stats: &stats,
                bits: Some("16"),
            },
        )
        .stdout,
    )
    .into_owned();
    assert!(shown.contains(", 0 wrong"), "{shown}");
    stats.summary().assert_rejected(19_000);
}

#[test]
fn c_program_on_leveldb_options_create_gets_default_bits() {
    prove_dropin(Lang::C99, &["-lleveldb".into()]);
}

#[test]
fn cxx_program_with_default_options_gets_default_bits() {
    prove_dropin(Lang::Cxx11, &["-lleveldb".into()]);
}

/// Debian's python3, which has python3-plyvel.
const PYTHON: &str = "/usr/bin/python3";

/// `tests/loaders/plyvel_default_options.py DIR [BITS]`, through Debian's plyvel or the wheel's (`wheel`).
fn plyvel(wheel: Option<&Path>, dir: &Scratch, bits: Option<u32>) -> Command {
    let mut command = common::command(PYTHON);
    command
        .arg(common::repo().join("tests/loaders/plyvel_default_options.py"))
        .arg(dir.path());
    command.args(bits.map(|bits| bits.to_string()));
    if let Some(wheel) = wheel {
        command.env("PYTHONPATH", wheel);
    }
    command
}

#[test]
fn debian_plyvel_with_default_options_gets_default_bits() {
    prove_default_bits(
        "python3-plyvel",
        &|dir| plyvel(None, dir, None),
        &|bits, dir| plyvel(None, dir, Some(bits)),
    );
}

/// The wheel's LevelDB 1.22, of the old `std::string` ABI, with its own C API.
#[test]
fn plyvel_wheel_with_default_options_gets_default_bits() {
    let wheel = common::cache_dir("reach/plyvel-wheel");
    assert!(
        wheel.join("plyvel.libs").is_dir(),
        "the plyvel wheel is not installed in {}: run `make deps` (scripts/ensure-leveldb)",
        wheel.display()
    );
    prove_default_bits(
        "plyvel wheel",
        &|dir| plyvel(Some(&wheel), dir, None),
        &|bits, dir| plyvel(Some(&wheel), dir, Some(bits)),
    );
}

/// The C++ drop-in program built with the old ABI against LevelDB 1.23 built from
/// Debian's source with the old ABI (`tests/reach/build-leveldb`, cached under
/// `target/reach/leveldb`, as `tests/suite/reach_source.rs` uses it).
#[test]
fn old_abi_leveldb_cxx_program_gets_default_bits() {
    let build = common::source_leveldb::leveldb("old-abi");
    let source = build.with_file_name("src").join("include");
    let flags = [
        "-D_GLIBCXX_USE_CXX11_ABI=0".to_string(),
        format!("-I{}", source.display()),
        format!("-L{}", build.display()),
        format!("-Wl,-rpath,{}", build.display()),
        "-lleveldb".into(),
    ];
    prove_dropin(Lang::Cxx11, &flags);
}

/// A value out of 1..=100 is ignored, saying so once on stderr: the tables are
/// stock's without a policy.
#[test]
fn a_bad_value_is_ignored_saying_so() {
    let exe = dropin(Lang::C99, 0, &["-lleveldb".into()]);
    let (stock, swapped) = (Scratch::new(), Scratch::new());
    run(dropin_write(&exe, &stock), Run::Stock);
    let stats = StatsFile::new();
    let output = run(
        dropin_write(&exe, &swapped),
        Run::Swapped {
            stats: &stats,
            bits: Some("101"),
        },
    );
    let said = said_once(&output);
    assert!(said.contains("from 1 to 100: ignored"), "{said}");
    assert!(tables_without_filters(&stock) == tables_without_filters(&swapped));
}

/// Node's classic-level builds LevelDB into its addon without the C API, so nothing
/// shows where its options keep the policy: the variable changes nothing there, and
/// says so once. (classic-level sets its own policy, which stays.)
#[test]
fn a_leveldb_without_its_c_api_runs_as_stock_saying_so() {
    let modules = common::cache_dir("reach/node/node_modules");
    assert!(
        modules.join("classic-level/package.json").exists(),
        "classic-level is not installed in {}: run `make deps` (scripts/ensure-leveldb)",
        modules.display()
    );
    let node = |dir: &Scratch| {
        let mut command = common::command("node");
        command
            .arg(common::repo().join("tests/reach/classic_level.js"))
            .args([dir.path(), KEYS])
            .env("NODE_PATH", &modules);
        command
    };
    let (stock, swapped) = (Scratch::new(), Scratch::new());
    run(node(&stock), Run::Stock);
    let stats = StatsFile::new();
    let output = run(
        node(&swapped),
        Run::Swapped {
            stats: &stats,
            bits: Some("10"),
        },
    );
    let said = said_once(&output);
    assert!(
        said.contains("classic-level") && said.contains("no C API"),
        "{said}"
    );
    assert!(common::tables_with_filters(&stock) == common::tables_with_filters(&swapped));
    stats.summary().assert_built();
}

/// A setuid-root program ignores the variable, as every variable of this library: a
/// bad value, which a plain run reports on stderr, goes unread. The default-options
/// C program linked with the default-bits object (the loader ignores `LD_PRELOAD`
/// paths in a setuid program), copied where `nobody` may run it, run as `nobody`.
#[test]
fn a_setuid_program_ignores_the_variable() {
    use std::os::unix::fs::PermissionsExt;
    if !test_support::root_for(
        "a_setuid_program_ignores_the_variable",
        "setuid-root, run as nobody",
    ) {
        return;
    }
    let linked = once("default_bits_c_linked_0", || {
        Program::new(
            "default_bits_c_linked_0",
            Lang::C99,
            &["c_tests/dropin_c.c"],
        )
        .arg(format!("-L{}", common::lib_dir().display()))
        .arg(format!("-Wl,-rpath,{}", common::lib_dir().display()))
        .arg("-Wl,--no-as-needed")
        .arg("-l:libleveldb_bloom_default_bits.so")
        .arg("-lleveldb")
        .arg("-DDROPIN_BITS_PER_KEY=0")
        .build()
    });
    let scratch = Scratch::new();
    std::fs::create_dir_all(scratch.dir()).unwrap();
    std::fs::set_permissions(scratch.dir(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let program = scratch.dir().join("default_options_program");
    std::fs::copy(&linked, &program).unwrap();
    // nobody may not enter the checkout (a clone in a 0700 directory): the plain run
    // finds a copy of the library here; the setuid one, which ignores
    // LD_LIBRARY_PATH, through its rpath, as root.
    let object = "libleveldb_bloom_default_bits.so";
    std::fs::copy(common::default_bits_path(), scratch.dir().join(object)).unwrap();
    let said = |db: &str| {
        let output = common::command("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(&program)
            .args(["write", scratch.dir().join(db).to_str().unwrap(), "100"])
            .env("LD_LIBRARY_PATH", scratch.dir())
            .env(VARIABLE, "ten")
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stderr).contains(VARIABLE)
    };
    assert!(said("plain"), "the control run read the variable");
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o4755)).unwrap();
    assert!(!said("setuid"), "a setuid program read the variable");
}
