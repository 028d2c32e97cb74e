//! `make demo` needs only a C compiler, libleveldb-dev and cargo (scripts/ensure-demo
//! asks for nothing else), keeps its database, and ends with the tool's three commands,
//! which run on that database as printed; the demo program and a stock LevelDB reader
//! agree on the database it writes. What it and the tool print there are the samples
//! of the README, docs/swap.md and docs/tool.md.

use crate::common;

use std::process::Command;

use common::{once, Lang, Program, Scratch};
use test_support::samples::assert_sample;

/// `make demo` with cargo's build step left out: `cargo test` holds cargo's lock, and
/// `make test` has built the library and the tool into target/release already.
#[test]
fn demo_keeps_its_database_and_the_printed_commands_run_on_it() {
    let tmp = common::Scratch::new();
    std::fs::create_dir_all(tmp.dir()).unwrap();
    let db = tmp.dir().join("db");
    let shown = common::run(
        Command::new("make")
            .current_dir(common::repo())
            .args(["--no-print-directory", "demo", "CARGO=true"])
            .arg(format!("DEMO_DB={}", db.display())),
    );
    assert!(shown.contains("swap:            active"), "{shown}");
    assert!(db.join("CURRENT").is_file(), "the demo's database is gone");
    let commands: Vec<&str> = shown
        .lines()
        .skip_while(|line| !line.contains("Try the tool on it:"))
        .skip(1)
        .map(str::trim)
        .collect();
    let verbs: Vec<&str> = commands
        .iter()
        .map(|c| c.split_whitespace().nth(1).unwrap_or(""))
        .collect();
    assert_eq!(verbs, ["audit", "explain", "show"], "{shown}");
    let outputs: Vec<String> = commands
        .iter()
        .map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            let out = tmp.dir().join("filter.html");
            let args = words[1..].iter().map(|w| {
                if w.ends_with("filter.html") {
                    out.to_str().unwrap()
                } else {
                    w
                }
            });
            common::run(Command::new(common::repo().join(words[0])).args(args))
        })
        .collect();
    assert!(
        outputs[0].contains("OK: no key can disappear"),
        "{}",
        outputs[0]
    );
    assert!(
        outputs[1].contains("key \"user:00001043\""),
        "{}",
        outputs[1]
    );
    assert!(std::fs::read_to_string(tmp.dir().join("filter.html"))
        .unwrap()
        .contains("<html"));
    let as_shown = [(db.to_str().unwrap(), "target/demo/db")];
    let demo: String = shown
        .lines()
        .skip_while(|line| !line.starts_with("leveldb-bloom demo on "))
        .take_while(|line| !line.is_empty())
        .map(|line| format!("{line}\n"))
        .collect();
    let repo = common::repo();
    assert_sample(repo, "docs/swap.md", "demo", &demo, &as_shown);
    assert_sample(repo, "README.md", "demo-audit", &outputs[0], &as_shown);
    assert_sample(repo, "docs/tool.md", "tool-explain", &outputs[1], &as_shown);
    let absent = common::run(
        Command::new(common::tool())
            .arg("explain")
            .arg(&db)
            .arg("user:00001043"),
    );
    assert_sample(repo, "README.md", "demo-explain", &absent, &as_shown);
}

/// Without the C compiler named by CC, and not root: the missing packages are the compiler's and
/// LevelDB's (no test tool), and the exact apt-get command is printed.
#[test]
fn demo_asks_only_for_what_it_uses() {
    use std::os::unix::fs::PermissionsExt;
    let bin = common::Scratch::new();
    std::fs::create_dir_all(bin.dir()).unwrap();
    // Not root: `id -u` says 1000.
    let id = bin.dir().join("id");
    std::fs::write(&id, "#!/bin/sh\necho 1000\n").unwrap();
    std::fs::set_permissions(&id, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.path(), std::env::var("PATH").unwrap());
    let output = Command::new(common::repo().join("scripts/ensure-demo"))
        .env("PATH", path)
        .env("CC", "no-such-compiler")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{said}");
    assert!(
        said.contains("error: missing: gcc libleveldb-dev\n"),
        "{said}"
    );
    assert!(
        said.contains("sudo apt-get install -y gcc libleveldb-dev"),
        "{said}"
    );
}

/// The demo program (`examples/demo.c`, swapped by linking) and the stock reader
/// (`examples/demo_stock_reader.c`, stock LevelDB alone) agree on its database.
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
