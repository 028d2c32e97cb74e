//! Running a program stock and swapped, and proving the swapped run did what stock
//! did: the same output and tables, every key right, this library's filters built.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::stats::StatsFile;
use super::{command as common_command, lib_path, once, succeed, Lang, Program, Scratch};

/// Keys each drop-in run writes: several tables.
pub const KEYS: &str = "50000";
/// Fewer under valgrind.
pub const VALGRIND_KEYS: &str = "2000";

pub fn host() -> PathBuf {
    once("main_host", || {
        Program::new("main_host", Lang::C99, &["c_tests/main_host.c"])
            .arg("-ldl")
            .build()
    })
}

/// `c_tests/dropin_c.c` as a plugin (`plugin_main`) named `name`, with `flags`.
pub fn dropin_plugin(name: &str, flags: &[String]) -> PathBuf {
    once(name, || {
        flags
            .iter()
            .fold(
                Program::new(name, Lang::C99, &["c_tests/dropin_c.c"])
                    .arg("-shared")
                    .arg("-fPIC")
                    .arg("-Dmain=plugin_main"),
                |program, flag| program.arg(flag.as_str()),
            )
            .build()
    })
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `command`, with this library preloaded (ahead of any preload the command
/// names) and counting into `stats` when given, under a timeout; panics unless it
/// exits 0.
pub fn run(command: Command, stats: Option<&StatsFile>) -> Output {
    let mut timed = common_command("timeout");
    timed
        .arg("300")
        .arg(command.get_program())
        .args(command.get_args());
    let mut preload = None;
    for (key, value) in command.get_envs() {
        match value {
            Some(value) if key == "LD_PRELOAD" => preload = Some(value.to_owned()),
            Some(value) => drop(timed.env(key, value)),
            None => drop(timed.env_remove(key)),
        }
    }
    if let Some(stats) = stats {
        let mut ours = lib_path().into_os_string();
        if let Some(preload) = preload.take() {
            ours.push(" ");
            ours.push(preload);
        }
        preload = Some(ours);
        timed.env("LEVELDB_BLOOM_STATS", stats.path());
    }
    if let Some(preload) = preload {
        timed.env("LD_PRELOAD", preload);
    }
    succeed(&mut timed)
}

/// What a run printed, but its swap status (stock's is "absent").
pub fn shown_but_status(output: &Output) -> String {
    text(&output.stdout)
        .lines()
        .filter(|line| !line.starts_with("swap status: "))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The drop-in workload (`command(mode, dir, keys)` runs it) stock and swapped:
/// the same output and tables, every key right, this library's filters built and
/// queried, its swap status `status`.
pub fn prove_as_stock(
    command: impl Fn(&str, &Scratch, &str) -> Command,
    report: &str,
    status: &str,
) {
    let (stock_db, swapped_db) = (Scratch::new(), Scratch::new());
    let stock = run(command("write", &stock_db, KEYS), None);
    let stats = StatsFile::new();
    let swapped = run(command("write", &swapped_db, KEYS), Some(&stats));
    super::harness::assert_report(report, &text(&swapped.stdout));
    assert_eq!(shown_but_status(&stock), shown_but_status(&swapped));
    let shown = text(&swapped.stdout);
    assert!(
        shown.contains(&format!("swap status: {status}\n")),
        "{shown}"
    );
    stats.summary().assert_built();
    assert!(
        super::tables_with_filters(&stock_db) == super::tables_with_filters(&swapped_db),
        "tables differ from stock"
    );
    let stats = StatsFile::new();
    let read = text(&run(command("read", &stock_db, KEYS), Some(&stats)).stdout);
    assert!(read.contains(", 0 wrong"), "{read}");
    stats.summary().assert_rejected(50_000);
}

/// `exe ARGS...` under valgrind with this library preloaded, on a small database:
/// no memory error, no definite or indirect leak.
pub fn under_valgrind(exe: &Path, args: &[&str], report: &str) {
    let small = Scratch::new();
    for mode in ["write", "read"] {
        let mut command = super::valgrind_failing_on(exe, "definite,indirect");
        command
            .args(args)
            .args([mode, small.path(), VALGRIND_KEYS])
            .env("LD_PRELOAD", lib_path());
        super::harness::assert_report(report, &super::run(&mut command));
    }
}

pub fn hosted(plugin: &Path) -> impl Fn(&str, &Scratch, &str) -> Command + '_ {
    move |mode, dir, keys| {
        let mut command = common_command(host());
        command.arg(plugin).args([mode, dir.path(), keys]);
        command
    }
}
