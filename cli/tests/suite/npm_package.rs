//! The npm packages `make dist` builds: in a fresh project, `npm install` of the local
//! tarballs (`leveldb-bloom` and `@leveldb-bloom/linux-x64-gnu`) and of classic-level
//! from npm (LevelDB built into its addon); `npx leveldb-bloom run --stats=stderr -- node
//! app.js` writes the tables stock writes, byte for byte, and the statistics prove that
//! this library built the filters and answered the absent gets; the launcher passes the
//! exit status and the signal on; `npm publish --dry-run` takes each tarball.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use test_support::stats::Summary;
use test_support::Scratch;

use crate::common::dist::{artifact, installed, tables, versioned};
use crate::common::{succeed, REPO};

const TARBALLS: [&str; 3] = [
    "leveldb-bloom-VERSION.tgz",
    "leveldb-bloom-linux-x64-gnu-VERSION.tgz",
    "leveldb-bloom-linux-arm64-gnu-VERSION.tgz",
];

/// The tarball `name`, or None when `test` skipped for want of it.
fn tarball(test: &str, name: &str) -> Option<PathBuf> {
    artifact(test, &versioned(name))
}

/// `npx ARGS...` in `project`.
fn npx(project: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("npx");
    command
        .current_dir(project)
        .args(args)
        .env_remove("LD_PRELOAD");
    command
}

#[test]
fn npx_runs_classic_level_swapped_in_a_fresh_project() {
    let test = "npm_package::npx_runs_classic_level_swapped_in_a_fresh_project";
    if std::env::consts::ARCH != "x86_64" {
        test_support::skipped(test, "runs on x86-64");
        return;
    }
    let (Some(main), Some(platform)) = (tarball(test, TARBALLS[0]), tarball(test, TARBALLS[1]))
    else {
        return;
    };
    let project = Scratch::created();
    std::fs::write(
        project.dir().join("package.json"),
        "{ \"name\": \"app\", \"private\": true }\n",
    )
    .unwrap();
    std::fs::copy(
        Path::new(REPO).join("tests/reach/classic_level.js"),
        project.dir().join("app.js"),
    )
    .unwrap();
    let install = Command::new("npm")
        .current_dir(project.dir())
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .arg(main)
        .arg(platform)
        .arg("classic-level@3")
        .output()
        .unwrap();
    if !installed(test, "classic-level (npm)", &install) {
        return;
    }
    let (stock, swapped) = (project.dir().join("stock"), project.dir().join("swapped"));
    succeed(
        Command::new("node")
            .current_dir(project.dir())
            .arg("app.js")
            .arg(&stock)
            .arg("20000"),
    );
    let output = succeed(
        npx(
            project.dir(),
            &[
                "leveldb-bloom",
                "run",
                "--stats=stderr",
                "--",
                "node",
                "app.js",
            ],
        )
        .arg(&swapped)
        .arg("20000"),
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains(", 0 wrong"));
    let summary = Summary::in_output(&String::from_utf8_lossy(&output.stderr));
    summary.assert_built();
    summary.assert_rejected(15_000);
    assert!(
        tables(&stock) == tables(&swapped),
        "the swapped tables differ from stock's"
    );

    let status = npx(
        project.dir(),
        &["leveldb-bloom", "run", "--", "sh", "-c", "exit 3"],
    )
    .status()
    .unwrap();
    assert_eq!(status.code(), Some(3));
    let launcher = project.dir().join("node_modules/.bin/leveldb-bloom");
    let killed = Command::new(&launcher)
        .args(["run", "--", "sh", "-c", "kill -TERM $$"])
        .status()
        .unwrap();
    assert_eq!(killed.signal(), Some(libc::SIGTERM), "{killed:?}");

    let script = "process.stdout.write(require('leveldb-bloom').libraryPath())";
    let path = succeed(
        Command::new("node")
            .current_dir(project.dir())
            .args(["-e", script]),
    );
    let library = PathBuf::from(String::from_utf8(path.stdout).unwrap());
    assert!(
        library.is_file() && library.starts_with(project.dir()),
        "{}",
        library.display()
    );
}

#[test]
fn npm_publish_dry_run_takes_each_tarball() {
    let test = "npm_package::npm_publish_dry_run_takes_each_tarball";
    for name in TARBALLS {
        let Some(tarball) = tarball(test, name) else {
            return;
        };
        let output = Command::new("npm")
            .args(["publish", "--dry-run", "--access", "public"])
            .arg(tarball)
            .output()
            .unwrap();
        if !installed(test, "npm publish", &output) {
            return;
        }
    }
}
