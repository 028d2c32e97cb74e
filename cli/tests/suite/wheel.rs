//! The wheels `make dist` builds: auditwheel finds them consistent with their
//! manylinux tag; the x86-64 wheel, pip-installed into a fresh venv beside the plyvel
//! wheel from PyPI (its own LevelDB 1.22, old `std::string` ABI), swaps plyvel through
//! `leveldb-bloom run` and `python -m leveldb_bloom run` (the statistics prove filters
//! built and queried here; the tables equal stock's byte for byte); the AArch64 wheel's
//! tool and library run under qemu-user.

use std::path::{Path, PathBuf};
use std::process::Command;

use test_support::stats::Summary;
use test_support::Scratch;

use crate::common::dist::{artifact, installed, tables, versioned};
use crate::common::{succeed, PYTHON, REPO};

/// The manylinux tag of the wheels (scripts/build-dist says why not 2_17).
const TAG: &str = "manylinux_2_24";

/// The wheel for `arch`, or None when `test` skipped for want of it.
fn wheel(test: &str, arch: &str) -> Option<PathBuf> {
    let name = format!("leveldb_bloom-VERSION-py3-none-{TAG}_{arch}.whl");
    artifact(test, &versioned(&name))
}

#[test]
fn auditwheel_finds_each_wheel_consistent_with_its_tag() {
    let auditwheel = crate::common::dist::dir()
        .with_file_name("dist-tools")
        .join("bin/auditwheel");
    for arch in ["x86_64", "aarch64"] {
        let test = "wheel::auditwheel_finds_each_wheel_consistent_with_its_tag";
        let Some(wheel) = wheel(test, arch) else {
            return;
        };
        let output = succeed(Command::new(&auditwheel).arg("show").arg(wheel));
        let shown = String::from_utf8_lossy(&output.stdout)
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            shown.contains(&format!(
                "consistent with the following platform tag: \"{TAG}_{arch}\""
            )),
            "{shown}"
        );
    }
}

/// `tests/loaders/python_db.py plyvel MODE DIR` with the venv's python.
fn python_db(venv: &Path, mode: &str, db: &Scratch) -> Command {
    let mut command = Command::new(venv.join("bin/python"));
    command
        .arg(Path::new(REPO).join("tests/loaders/python_db.py"))
        .args(["plyvel", mode, db.path()]);
    command
}

#[test]
fn the_wheel_swaps_the_plyvel_wheel_in_a_fresh_venv() {
    if std::env::consts::ARCH != "x86_64" {
        test_support::skipped(
            "wheel::the_wheel_swaps_the_plyvel_wheel_in_a_fresh_venv",
            "runs on x86-64",
        );
        return;
    }
    let test = "wheel::the_wheel_swaps_the_plyvel_wheel_in_a_fresh_venv";
    let Some(wheel) = wheel(test, "x86_64") else {
        return;
    };
    let scratch = Scratch::created();
    let venv = scratch.dir().join("venv");
    succeed(Command::new(PYTHON).args(["-m", "venv"]).arg(&venv));
    let pip = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .arg(wheel)
        .arg("plyvel==1.5.1")
        .output()
        .unwrap();
    if !installed(
        "wheel::the_wheel_swaps_the_plyvel_wheel_in_a_fresh_venv",
        "plyvel (PyPI)",
        &pip,
    ) {
        return;
    }
    let (stock, swapped) = (Scratch::new(), Scratch::new());
    succeed(&mut python_db(&venv, "write", &stock));
    let mut run = Command::new(venv.join("bin/leveldb-bloom"));
    run.args(["run", "--stats=stderr", "--"])
        .arg(venv.join("bin/python"));
    let write = python_db(&venv, "write", &swapped);
    let written = succeed(run.args(write.get_args()));
    Summary::in_output(&String::from_utf8_lossy(&written.stderr)).assert_built();
    assert!(
        tables(stock.dir()) == tables(swapped.dir()),
        "the swapped tables differ from stock's"
    );

    let mut module = Command::new(venv.join("bin/python"));
    module
        .args(["-m", "leveldb_bloom", "run", "--stats=stderr", "--"])
        .arg(venv.join("bin/python"));
    let read = python_db(&venv, "read", &swapped);
    let read = succeed(module.args(read.get_args()));
    assert!(String::from_utf8_lossy(&read.stdout).contains(", 0 wrong"));
    Summary::in_output(&String::from_utf8_lossy(&read.stderr)).assert_rejected(15_000);

    let path = succeed(Command::new(venv.join("bin/python")).args([
        "-c",
        "import leveldb_bloom; print(leveldb_bloom.library_path())",
    ]));
    let library = PathBuf::from(String::from_utf8(path.stdout).unwrap().trim());
    assert!(
        library.is_file() && library.starts_with(&venv),
        "{}",
        library.display()
    );
}

/// The AArch64 wheel laid out as pip lays it out (the tool in `bin`, the package in
/// `lib/python3.11/site-packages`); its tool runs under qemu-aarch64 and runs a C
/// program on that CPU's Debian LevelDB (itself under qemu) with the library swapped in.
#[test]
fn the_aarch64_wheel_runs_under_qemu() {
    let test = "wheel::the_aarch64_wheel_runs_under_qemu";
    let missing: Vec<&str> = ["qemu-aarch64", "aarch64-linux-gnu-gcc"]
        .into_iter()
        .filter(|tool| Command::new(tool).arg("--version").output().is_err())
        .collect();
    if !missing.is_empty() {
        test_support::skipped(
            test,
            &format!(
                "not available here: {} (scripts/ensure-leveldb installs them)",
                missing.join(", ")
            ),
        );
        return;
    }
    let Some(wheel) = wheel(test, "aarch64") else {
        return;
    };
    let prefix = Scratch::created();
    let unpacked = prefix.dir().join("wheel");
    succeed(
        Command::new(PYTHON)
            .args(["-m", "zipfile", "-e"])
            .arg(wheel)
            .arg(&unpacked),
    );
    let (bin, site) = (
        prefix.dir().join("bin"),
        prefix.dir().join("lib/python3.11/site-packages"),
    );
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::create_dir_all(&site).unwrap();
    let data = std::fs::read_dir(&unpacked)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|path| path.to_string_lossy().ends_with(".data"))
        .expect("the wheel's .data directory");
    let tool = bin.join("leveldb-bloom");
    std::fs::rename(data.join("scripts/leveldb-bloom"), &tool).unwrap();
    std::fs::rename(unpacked.join("leveldb_bloom"), site.join("leveldb_bloom")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();

    let program = prefix.dir().join("dropin_c");
    succeed(
        Command::new("aarch64-linux-gnu-gcc")
            .args(["-std=c99", "-O1"])
            .arg(Path::new(REPO).join("c_tests/dropin_c.c"))
            .args(["-lleveldb", "-o"])
            .arg(&program),
    );
    // The tool (emulated) becomes qemu-aarch64 (native), which hands the guest the
    // environment: the guest's loader preloads the wheel's library.
    let db = prefix.dir().join("db");
    let output = succeed(
        Command::new("qemu-aarch64")
            .arg(&tool)
            .args(["run", "--stats=stderr", "--", "qemu-aarch64"])
            .arg(&program)
            .args(["write", db.to_str().unwrap(), "20000"]),
    );
    let said = String::from_utf8_lossy(&output.stderr);
    let summary = Summary::in_output(&said);
    summary.assert_built();
    let printed = succeed(
        Command::new("qemu-aarch64")
            .arg(&tool)
            .args(["run", "--print-env"]),
    );
    let library = site.join("leveldb_bloom/libleveldb_bloom.so.0");
    assert_eq!(
        String::from_utf8_lossy(&printed.stdout),
        format!("export LD_PRELOAD='{}'\n", library.display())
    );
}
