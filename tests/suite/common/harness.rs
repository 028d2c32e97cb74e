//! The shared harness runner: a C or C++ harness of `c_tests/` is a [`Harness`] (how
//! to build it), run in [`Mode`]s (plain, valgrind, helgrind, sanitizers) with
//! arguments and environment ([`Run`]), and judged by one protocol: exit status 0
//! and exactly one summary line `NAME: N checks, 0 failed` with N > 0 on stdout,
//! printed by `check_report` of `c_tests/check.h` ([`assert_report`]).
//!
//! `tests/suite/harnesses.rs` holds the table: one row per harness, one `#[test]` per
//! (harness, mode). Other tests build and run harnesses with the same pieces.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::{lib_dir, lib_path, once, repo, Lang, Program, Scratch};

/// In [`Harness::flags`]: link this build's `libleveldb_bloom` here (with an rpath),
/// so the order against `-lleveldb` is the row's.
pub const BLOOM: &str = "{link libleveldb_bloom}";

/// In [`Harness::flags`]: link this build's `libleveldb_bloom.a`, and what it needs.
pub const BLOOM_STATIC: &str = "{link libleveldb_bloom.a}";

/// How to build one harness program.
#[derive(Clone, Copy, Debug)]
pub struct Harness {
    /// The program's file name: one per build variant (defines, link order, language).
    pub program: &'static str,
    /// NAME in the report line `NAME: N checks, F failed`.
    pub report: &'static str,
    pub lang: Lang,
    /// Sources, relative to the repository.
    pub sources: &'static [&'static str],
    /// Compiler and linker arguments after the sources, in order; [`BLOOM`] links
    /// this library, `{fallback_include}` is a directory whose `leveldb/c.h` is empty.
    pub flags: &'static [&'static str],
}

/// A harness built as `program` from `sources`, reporting as `report`.
pub const fn harness(
    program: &'static str,
    report: &'static str,
    lang: Lang,
    sources: &'static [&'static str],
    flags: &'static [&'static str],
) -> Harness {
    Harness {
        program,
        report,
        lang,
        sources,
        flags,
    }
}

impl Harness {
    /// The program, as [`Program`] builds it (with ASan and UBSan when `sanitize`).
    pub fn program(&self, sanitize: bool) -> Program {
        let mut program = Program::new(self.program, self.lang, self.sources);
        for flag in self.flags {
            program = match *flag {
                BLOOM => program.link_bloom(),
                BLOOM_STATIC => program.link_bloom_static(),
                flag => program.arg(flag.replace(
                    "{fallback_include}",
                    &fallback_include().display().to_string(),
                )),
            };
        }
        if sanitize {
            program = program.sanitize();
        }
        program
    }

    /// Built once per test binary (per `sanitize`), whichever test asks first.
    pub fn build(&self, sanitize: bool) -> PathBuf {
        let key = format!("{}{}", self.program, if sanitize { "_asan" } else { "" });
        once(&key, || self.program(sanitize).build())
    }
}

/// A directory holding an empty `leveldb/c.h`: first on the include path, it stands
/// in for a missing LevelDB header (`__has_include` finds it, it defines nothing).
fn fallback_include() -> PathBuf {
    let dir = lib_dir().join("header_fallback");
    std::fs::create_dir_all(dir.join("leveldb")).expect("shadow include directory");
    std::fs::write(dir.join("leveldb/c.h"), "").expect("empty leveldb/c.h");
    dir
}

/// How a harness runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// As built.
    Plain,
    /// Under valgrind's memcheck: any error or definite/indirect/possible leak fails.
    Valgrind,
    /// Under memcheck, failing on definite and indirect leaks only: programs on
    /// LevelDB, whose background thread is still running at exit.
    ValgrindLevelDb,
    /// Under valgrind's helgrind race detector, with `c_tests/helgrind.supp`.
    Helgrind,
    /// Built with AddressSanitizer (LeakSanitizer included) and
    /// UndefinedBehaviorSanitizer, every report fatal.
    Sanitizers,
}

/// Valgrind's leak kinds that fail a LevelDB program: its background thread is still
/// running at exit, so its stack bookkeeping is "possibly lost" by design.
pub const LEVELDB_LEAK_KINDS: &str = "definite,indirect";

/// The command running `exe` in `mode` (arguments and environment to be added).
pub fn command_in(mode: Mode, exe: &Path) -> Command {
    match mode {
        Mode::Plain => super::command(exe),
        Mode::Valgrind => super::valgrind(exe),
        Mode::ValgrindLevelDb => super::valgrind_failing_on(exe, LEVELDB_LEAK_KINDS),
        Mode::Helgrind => {
            let mut command = super::command("valgrind");
            command
                .args(["--tool=helgrind", "--error-exitcode=99", "--quiet"])
                .arg(format!(
                    "--suppressions={}",
                    repo().join("c_tests/helgrind.supp").display()
                ))
                .arg(exe);
            command
        }
        Mode::Sanitizers => {
            let mut command = super::sanitized(exe);
            command.env_remove("LD_LIBRARY_PATH");
            command
        }
    }
}

/// One run of a harness: a mode, arguments and environment (with placeholders:
/// `{lib}` this build's library, `{failmalloc}` the allocation-failure shim,
/// `{count_shim}` the filter-call counting shim, `{dir}` a fresh scratch directory
/// removed afterwards), and what else its output must show.
pub struct Run {
    mode: Mode,
    args: Vec<&'static str>,
    env: Vec<(&'static str, &'static str)>,
    expect: Vec<&'static str>,
    then: Option<fn(&str)>,
    only_if: Option<Requirement>,
}

/// Whether a run can happen here, and what it needs (for the skip message).
type Requirement = (fn() -> bool, &'static str);

pub fn plain() -> Run {
    in_mode(Mode::Plain)
}

pub fn valgrind() -> Run {
    in_mode(Mode::Valgrind)
}

pub fn valgrind_leveldb() -> Run {
    in_mode(Mode::ValgrindLevelDb)
}

pub fn helgrind() -> Run {
    in_mode(Mode::Helgrind)
}

pub fn sanitizers() -> Run {
    in_mode(Mode::Sanitizers)
}

pub fn in_mode(mode: Mode) -> Run {
    Run {
        mode,
        args: Vec::new(),
        env: Vec::new(),
        expect: Vec::new(),
        then: None,
        only_if: None,
    }
}

impl Run {
    pub fn args(mut self, args: &[&'static str]) -> Self {
        self.args.extend_from_slice(args);
        self
    }

    pub fn env(mut self, key: &'static str, value: &'static str) -> Self {
        self.env.push((key, value));
        self
    }

    /// The harness's stdout must also contain `text`.
    pub fn expect(mut self, text: &'static str) -> Self {
        self.expect.push(text);
        self
    }

    /// Further assertions on the harness's stdout.
    pub fn then(mut self, check: fn(&str)) -> Self {
        self.then = Some(check);
        self
    }

    /// Runs only where `available()` holds; elsewhere says it skipped, and why.
    pub fn only_if(mut self, available: fn() -> bool, what: &'static str) -> Self {
        self.only_if = Some((available, what));
        self
    }

    /// Builds (once) and runs `harness`; panics, showing its output, unless it passed
    /// by the protocol and showed what was expected. Returns its stdout.
    pub fn run(&self, harness: &Harness) -> String {
        if let Some((available, what)) = self.only_if {
            if !available() {
                eprintln!("{}: {what} not available here: skipped", harness.program);
                return String::new();
            }
        }
        let exe = harness.build(self.mode == Mode::Sanitizers);
        let scratch = Scratch::new();
        let substitute = |text: &str| -> String {
            let mut text = text.replace("{lib}", &lib_path().display().to_string());
            if text.contains("{failmalloc}") {
                text = text.replace(
                    "{failmalloc}",
                    &super::failmalloc_shim().display().to_string(),
                );
            }
            if text.contains("{count_shim}") {
                text = text.replace("{count_shim}", &super::count_shim().display().to_string());
            }
            text.replace("{dir}", scratch.path())
        };
        let mut command = command_in(self.mode, &exe);
        command.args(self.args.iter().map(|arg| substitute(arg)));
        for (key, value) in &self.env {
            command.env(key, substitute(value));
        }
        let stdout = run_to_report(&mut command, harness.report);
        for text in &self.expect {
            assert!(
                stdout.contains(text),
                "{}: {text:?} not shown:\n{stdout}",
                harness.program
            );
        }
        if let Some(check) = self.then {
            check(&stdout);
        }
        stdout
    }
}

/// Runs `command` and checks the protocol for `name`: exit status 0 and the one
/// report line; returns stdout. Panics with the output otherwise.
pub fn run_to_report(command: &mut Command, name: &str) -> String {
    let output = command
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{command:?} failed ({})\nstdout:\n{stdout}\nstderr (end):\n{}",
        output.status,
        &stderr[stderr.len().saturating_sub(8000)..]
    );
    let checks = assert_report(name, &stdout);
    println!("{name}: {checks} checks, 0 failed");
    stdout
}

/// The one pass protocol of `c_tests/check.h`: stdout holds exactly one line
/// `NAME: N checks, F failed`, with F = 0 and N > 0. Returns N.
pub fn assert_report(name: &str, stdout: &str) -> u64 {
    let reports: Vec<(u64, u64)> = stdout
        .lines()
        .filter_map(|line| parse_report(name, line))
        .collect();
    let [(checks, failed)] = reports[..] else {
        panic!("expected one line \"{name}: N checks, F failed\", found {reports:?} in:\n{stdout}");
    };
    assert!(
        failed == 0 && checks > 0,
        "{name}: {checks} checks, {failed} failed:\n{stdout}"
    );
    checks
}

/// (N, F) from a line `NAME: N checks, F failed`.
pub fn parse_report(name: &str, line: &str) -> Option<(u64, u64)> {
    let rest = line.strip_prefix(name)?.strip_prefix(": ")?;
    let (checks, rest) = rest.split_once(" checks, ")?;
    let failed = rest.strip_suffix(" failed")?;
    Some((checks.parse().ok()?, failed.parse().ok()?))
}

/// Every fixed case of the reference harness compares at least this many filters and
/// queries.
const FIXED_FILTERS: u64 = 350;
const FIXED_QUERIES: u64 = 75_000;

/// The reference harness's count line, for `random_cases` generated cases: no
/// mismatch, and every case compared.
pub fn reference_compared(stdout: &str, random_cases: u64) {
    let report = stdout
        .lines()
        .find(|line| line.starts_with("reference: "))
        .unwrap_or_else(|| panic!("no count line in: {stdout}"));
    println!("{report}");
    let numbers: Vec<u64> = report
        .split(|c: char| !c.is_ascii_digit())
        .filter(|word| !word.is_empty())
        .map(|word| word.parse().expect("digits"))
        .collect();
    let [filters, _bytes, queries, _foreign, mismatches] = numbers[..] else {
        panic!("unexpected count line: {report}");
    };
    assert_eq!(mismatches, 0, "{report}");
    // Each generated case is one filter and at least 20 queries on it, plus 10
    // foreign filters of 8 queries each.
    assert!(
        filters >= FIXED_FILTERS + random_cases,
        "too few filters compared: {report}"
    );
    assert!(
        queries >= FIXED_QUERIES + 100 * random_cases,
        "too few queries compared: {report}"
    );
}
