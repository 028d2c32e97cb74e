//! The drop-in proof: unmodified LevelDB programs (`c_tests/dropin_c.c` on the C API,
//! `c_tests/dropin_cxx.cc` on the C++ API) write the same deterministic databases
//! stock, swapped by `LD_PRELOAD`, swapped by relinking, and (C++) through the explicit
//! header in either link order. Their table files must be byte-identical, each
//! database must read back completely through the other library, the swap must really
//! be in effect (the dynamic linker's bindings, and a counting shim,
//! `c_tests/count_filter_calls.c`, showing the filters built and consulted by this
//! library), and valgrind must find nothing on the swapped runs.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{lib_path, once, Lang, Program, Scratch};

/// Keys per database: tens of thousands, compacted into several tables.
const KEYS: u32 = 50_000;
/// Fewer under valgrind, which is some 50 times slower.
const VALGRIND_KEYS: u32 = 3_000;
/// Valgrind's leak kinds that fail a LevelDB program: its background thread is still
/// running at exit, so its stack bookkeeping is "possibly lost" by design.
const LEVELDB_LEAK_KINDS: &str = "definite,indirect";

/// How a program gets its filter policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    /// `-lleveldb` only.
    Stock,
    /// `-lleveldb_bloom -lleveldb`: the relink swap.
    BloomFirst,
    /// `-lleveldb -lleveldb_bloom`: the wrong order for the swap.
    LevelDbFirst,
    /// `-lleveldb_bloom` only: no LevelDB.
    BloomOnly,
}

/// Builds (once per test binary) a program from `source` with `-D` `defines`.
fn program(source: &str, lang: Lang, link: Link, defines: &[&str]) -> PathBuf {
    let stem = Path::new(source).file_stem().unwrap().to_str().unwrap();
    let lang_name = match lang {
        Lang::C99 => "c99",
        Lang::Cxx11 => "cxx11",
        Lang::Cxx17 => "cxx17",
    };
    let name = format!("{stem}_{lang_name}_{link:?}_{}", defines.join("_"))
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
        .to_lowercase();
    once(&name, || {
        let mut program = Program::new(&name, lang, &[source]);
        for define in defines {
            program = program.arg(format!("-D{define}"));
        }
        match link {
            Link::Stock => program.arg("-lleveldb"),
            Link::BloomFirst => program.link_bloom().arg("-lleveldb"),
            Link::LevelDbFirst => program.arg("-lleveldb").link_bloom(),
            Link::BloomOnly => program.link_bloom(),
        }
        .build()
    })
}

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

/// The run went through this library: its policies were made with LevelDB's
/// `leveldb_filterpolicy_create` around callbacks in libleveldb_bloom.
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
fn prove_swap(source: &str, lang: Lang) {
    let stock = program(source, lang, Link::Stock, &[]);
    let relinked = program(source, lang, Link::BloomFirst, &[]);

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
    prove_swap("c_tests/dropin_c.c", Lang::C99);
}

#[test]
fn cxx_api_program_swapped_by_preload_and_relink() {
    prove_swap("c_tests/dropin_cxx.cc", Lang::Cxx11);
}

#[test]
fn c_and_cxx_programs_write_the_same_tables() {
    let c = write(
        &program("c_tests/dropin_c.c", Lang::C99, Link::Stock, &[]),
        Swap::None,
    )
    .0;
    let cxx = program("c_tests/dropin_cxx.cc", Lang::Cxx11, Link::Stock, &[]);
    assert!(tables(&c) == tables(&write(&cxx, Swap::None).0));
}

/// The dynamic linker binds the programs' references to this library when swapped,
/// and to LevelDB when stock.
#[test]
fn dynamic_linker_binds_the_programs_to_this_library() {
    let bindings = [("LD_DEBUG", "bindings")];
    for (source, lang, symbol) in [
        (
            "c_tests/dropin_c.c",
            Lang::C99,
            "leveldb_filterpolicy_create_bloom",
        ),
        (
            "c_tests/dropin_cxx.cc",
            Lang::Cxx11,
            "_ZN7leveldb20NewBloomFilterPolicyEi",
        ),
    ] {
        let stock = program(source, lang, Link::Stock, &[]);
        let relinked = program(source, lang, Link::BloomFirst, &[]);
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
/// still reaches this library), and they read back stock.
#[test]
fn explicit_cxx_header_gives_the_same_tables_in_either_link_order() {
    let source = "c_tests/dropin_cxx.cc";
    let stock = program(source, Lang::Cxx11, Link::Stock, &[]);
    let reference = tables(&write(&stock, Swap::None).0);
    let bindings = [("LD_DEBUG", "bindings")];
    for (link, lang, status) in [
        (Link::LevelDbFirst, Lang::Cxx17, "0"),
        (Link::BloomFirst, Lang::Cxx11, "3"),
    ] {
        let explicit = program(source, lang, link, &["EXPLICIT_HEADER"]);
        let dir = Scratch::new();
        let written = run(&explicit, Swap::None, "write", &dir, KEYS, &bindings);
        assert_eq!(written.swap_status(), status, "{link:?}");
        assert!(
            tables(&dir) == reference,
            "{link:?}: tables differ from stock"
        );
        assert!(
            written.binds(&explicit, "leveldb_bloom_write_filter", "libleveldb_bloom"),
            "{link:?}: filters not built by this library"
        );
        let read_back = run(&explicit, Swap::None, "read", &dir, KEYS, &bindings);
        read_back.read_counts();
        assert!(read_back.binds(&explicit, "leveldb_bloom_key_may_match", "libleveldb_bloom"));
        read(&stock, Swap::None, &dir);
    }
}

/// A program under valgrind: no memory error, no definite or indirect leak.
fn valgrind(exe: &Path, preload: bool, args: &[&str]) -> String {
    let mut command = common::valgrind_failing_on(exe, LEVELDB_LEAK_KINDS);
    command.args(args);
    if preload {
        command.env("LD_PRELOAD", lib_path());
    }
    common::run(&mut command)
}

fn valgrind_write_and_read(exe: &Path, preload: bool) {
    let dir = Scratch::new();
    let keys = VALGRIND_KEYS.to_string();
    for mode in ["write", "read"] {
        let stdout = valgrind(exe, preload, &[mode, dir.path(), &keys]);
        assert!(stdout.contains("swap status: 3"), "{stdout}");
    }
}

#[test]
fn valgrind_c_program_swapped_by_preload() {
    let exe = program("c_tests/dropin_c.c", Lang::C99, Link::Stock, &[]);
    valgrind_write_and_read(&exe, true);
}

#[test]
fn valgrind_cxx_program_relinked() {
    let exe = program("c_tests/dropin_cxx.cc", Lang::Cxx11, Link::BloomFirst, &[]);
    valgrind_write_and_read(&exe, false);
}

#[test]
fn valgrind_explicit_cxx_header() {
    let exe = program(
        "c_tests/dropin_cxx.cc",
        Lang::Cxx11,
        Link::BloomFirst,
        &["EXPLICIT_HEADER"],
    );
    valgrind_write_and_read(&exe, false);
}

/// Custom LevelDB policies, LevelDB's own bloom policy and the swapped ones are all
/// released by this library's destroy, without leaks or bad frees; with the swap,
/// every function of the library accepts the policy `leveldb_filterpolicy_create_bloom`
/// returned; with the wrong link order, nothing is swapped and nothing fails.
#[test]
fn policies_made_by_leveldb_are_released_through_this_library() {
    for (link, status, destroy) in [
        (Link::BloomFirst, "3", "libleveldb_bloom"),
        (Link::LevelDbFirst, "0", "LevelDB"),
    ] {
        let exe = program("c_tests/dropin_release.c", Lang::C99, link, &[]);
        let stdout = valgrind(&exe, false, &[]);
        assert!(
            stdout.contains(&format!("swap status: {status}\n")),
            "{stdout}"
        );
        assert!(
            stdout.contains(&format!("leveldb_filterpolicy_destroy: {destroy}\n")),
            "{stdout}"
        );
        assert!(stdout.contains("all released"), "{stdout}");
    }
}

/// When this library cannot allocate inside LevelDB's CreateFilter callback, LevelDB
/// gets the match-all filter from the policy's reserve (refilled after each
/// successful call); when the reserve is spent, the process aborts with a message
/// rather than let LevelDB store an empty filter.
#[test]
fn create_filter_callback_never_returns_an_empty_filter() {
    let exe = once("dropin_oom", || {
        Program::new("dropin_oom", Lang::Cxx11, &["c_tests/dropin_oom.cc"])
            // Keeps LevelDB loaded: the program calls nothing else of it.
            .arg("-Wl,--no-as-needed")
            .link_bloom()
            .arg("-lleveldb")
            .arg("-ldl")
            .build()
    });
    let shim = common::failmalloc_shim();
    let reserve = common::run(Command::new(&exe).arg("reserve").env("LD_PRELOAD", shim));
    assert!(reserve.contains("reserve ok"), "{reserve}");

    let output = common::command(&exe)
        .arg("abort")
        .env("LD_PRELOAD", shim)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(output.status.signal(), Some(libc::SIGABRT), "{stderr}");
    assert!(stderr.contains("leveldb-bloom: out of memory"), "{stderr}");
}

/// The C++ header's RAII handle and FilterPolicy, as C++11 and C++17, against LevelDB's
/// own policy (and, without LevelDB, the C API); once under valgrind.
#[test]
fn cxx_header_policy_and_filter_policy() {
    for lang in [Lang::Cxx11, Lang::Cxx17] {
        let with_leveldb = program("c_tests/hpp_policy.cc", lang, Link::LevelDbFirst, &[]);
        assert!(common::run(&mut Command::new(&with_leveldb)).contains("hpp ok"));
        let alone = program(
            "c_tests/hpp_policy.cc",
            lang,
            Link::BloomOnly,
            &["LEVELDB_BLOOM_WITH_LEVELDB=0"],
        );
        assert!(common::run(&mut Command::new(&alone)).contains("hpp ok"));
        if lang == Lang::Cxx17 {
            assert!(valgrind(&with_leveldb, false, &[]).contains("hpp ok"));
        }
    }
}

/// An interposer in front of LevelDB's `leveldb_filterpolicy_create` that does not
/// lead to LevelDB's `leveldb_filterpolicy_destroy` (here the counting shim, linked
/// without LevelDB) does not stop the swap: the search goes on to LevelDB itself, and
/// the program writes and reads its filters through this library.
#[test]
fn detached_interposer_does_not_stop_the_swap() {
    let decoy = once("count_filter_calls_detached.so", || {
        Program::new(
            "count_filter_calls_detached.so",
            Lang::C99,
            &["c_tests/count_filter_calls.c"],
        )
        .arg("-shared")
        .arg("-fPIC")
        .build()
    });
    let exe = program("c_tests/dropin_c.c", Lang::C99, Link::Stock, &[]);
    let preload = format!("{} {}", decoy.display(), lib_path().display());
    let dir = Scratch::new();
    for mode in ["write", "read"] {
        let stdout = common::run(
            Command::new(&exe)
                .args([mode, dir.path(), &KEYS.to_string()])
                .env("LD_PRELOAD", &preload),
        );
        // A read exits 0 only when every answer was right.
        assert!(stdout.contains("swap status: 3\n"), "{stdout}");
    }
    tables(&dir);
}

/// `make demo`'s programs, as `make demo` builds them (C99, strict): the demo writes
/// and reads its database with the swap, the stock reader reads it back.
#[test]
fn demo_and_stock_reader_agree() {
    let demo = once("demo", || {
        Program::new("demo", Lang::C99, &["examples/demo.c"])
            .link_bloom()
            .arg("-lleveldb")
            .arg("-lm")
            .build()
    });
    let reader = once("demo-stock-reader", || {
        Program::new(
            "demo-stock-reader",
            Lang::C99,
            &["examples/demo_stock_reader.c"],
        )
        .arg("-lleveldb")
        .build()
    });
    let dir = Scratch::new();
    let shown = common::run(Command::new(demo).arg(dir.path()));
    assert!(shown.contains("swap:            active"), "{shown}");
    assert!(shown.contains("false positives: "), "{shown}");
    let shown = common::run(Command::new(reader).arg(dir.path()));
    assert!(shown.contains("200000 of 200000 keys read back"), "{shown}");
}
