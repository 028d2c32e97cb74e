//! Every way an object binds LevelDB's bloom policy inside itself, each named: a
//! stand-in object (`c_tests/self_bound.cc`: LevelDB's marks, its own
//! `leveldb::NewBloomFilterPolicy` and a call to it) linked plainly, `-Bsymbolic`,
//! `-Bsymbolic-functions`, with hidden visibility, and into a program. For each:
//! `leveldb-bloom reach` (exit 0 only for the plain link), and, run with this library
//! preloaded and `LEVELDB_BLOOM_STATS` set, whether the call was swapped and the one
//! line at exit naming the object, why and the route (none for the plain link).
//! amulet-leveldb (tests/suite/amulet.rs) is the real client of the same rules.

use crate::common;

use std::path::PathBuf;

use common::stats::StatsFile;
use common::{lib_path, once, run, Lang, Program};

/// The stand-in built with `flags` as `name`.
fn object(name: &str, flags: &[&str]) -> PathBuf {
    once(name, || {
        flags
            .iter()
            .fold(
                Program::new(name, Lang::Cxx11, &["c_tests/self_bound.cc"]),
                |program, flag| program.arg(*flag),
            )
            .build()
    })
}

/// Runs the object's call (a program itself; a library through Python's ctypes)
/// with this library preloaded: what it printed, and what was said at exit.
fn run_swapped(object: &PathBuf, program: bool) -> (String, String) {
    let stats = StatsFile::new();
    let mut command = if program {
        common::command(object)
    } else {
        let mut python = common::command("/usr/bin/python3");
        python
            .args([
                "-c",
                "import ctypes, sys; ctypes.CDLL(sys.argv[1]).self_bound_make()",
            ])
            .arg(object);
        python
    };
    command
        .env("LD_PRELOAD", lib_path())
        .env("LEVELDB_BLOOM_STATS", stats.path());
    let shown = run(&mut command);
    let said = std::fs::read_to_string(stats.path()).unwrap_or_default();
    (shown, said)
}

/// `reach`'s exit status and stdout on `object`.
fn reach(object: &PathBuf) -> (i32, String) {
    let output = common::command(common::tool())
        .arg("reach")
        .arg(object)
        .output()
        .expect("the tool runs");
    let status = output.status.code().expect("an exit status");
    (status, String::from_utf8_lossy(&output.stdout).into_owned())
}

/// An object the swap cannot reach: `reach` exits 3 saying `why`, and the process
/// says so once at exit, with the route.
fn assert_named(object: PathBuf, program: bool, why: &str, route: &str) {
    let (status, stdout) = reach(&object);
    assert_eq!(status, 3, "{stdout}");
    assert!(stdout.contains(why) && stdout.contains(route), "{stdout}");
    let (shown, said) = run_swapped(&object, program);
    assert!(shown.contains("policy: own"), "{shown}");
    let lines: Vec<&str> = said
        .lines()
        .filter(|line| line.starts_with("leveldb-bloom: "))
        .collect();
    assert_eq!(lines.len(), 1, "{said}");
    let line = lines[0];
    for part in [object.display().to_string().as_str(), why, route] {
        assert!(line.contains(part), "{part:?} not in {line}");
    }
}

#[test]
fn a_plain_link_is_reached_and_not_named() {
    let object = object("self_bound_plain.so", &["-fPIC", "-shared"]);
    let (status, stdout) = reach(&object);
    assert_eq!(status, 0, "{stdout}");
    let (shown, said) = run_swapped(&object, false);
    assert!(shown.contains("policy: swapped"), "{shown}");
    assert!(!said.contains("leveldb-bloom: "), "{said}");
}

#[test]
fn bsymbolic_is_named() {
    let object = object(
        "self_bound_symbolic.so",
        &["-fPIC", "-shared", "-Wl,-Bsymbolic"],
    );
    assert_named(
        object,
        false,
        "-Bsymbolic (DT_FLAGS has DF_SYMBOLIC)",
        "LDSHARED without",
    );
}

#[test]
fn bsymbolic_functions_is_named() {
    let flags = ["-fPIC", "-shared", "-Wl,-Bsymbolic-functions"];
    let object = object("self_bound_symbolic_functions.so", &flags);
    assert_named(
        object,
        false,
        "-Bsymbolic-functions",
        "LDSHARED without -Wl,-Bsymbolic-functions",
    );
}

#[test]
fn hidden_visibility_is_named() {
    let object = object(
        "self_bound_hidden.so",
        &["-fPIC", "-shared", "-fvisibility=hidden"],
    );
    assert_named(
        object,
        false,
        "hidden",
        "link libleveldb_bloom.a into it ahead of LevelDB",
    );
}

#[test]
fn a_static_link_is_named() {
    let object = object("self_bound_program", &["-DSELF_BOUND_PROGRAM"]);
    assert_named(
        object,
        true,
        "linked statically",
        "contrib/leveldb/util/bloom.cc",
    );
}

/// `reach --json`: one document naming each file's verdict; no file is a usage error.
#[test]
fn reach_json_and_usage() {
    let plain = object("self_bound_plain.so", &["-fPIC", "-shared"]);
    let flags = ["-fPIC", "-shared", "-Wl,-Bsymbolic-functions"];
    let bound = object("self_bound_symbolic_functions.so", &flags);
    let output = common::command(common::tool())
        .args(["reach", "--json"])
        .arg(&plain)
        .arg(&bound)
        .output()
        .expect("the tool runs");
    assert_eq!(output.status.code(), Some(3));
    let document = String::from_utf8_lossy(&output.stdout);
    for part in [
        "\"verdict\": \"exports-and-relocates\"",
        "\"verdict\": \"symbolic-functions\"",
        "\"reached_all\": false",
        "\"string_abi\"",
    ] {
        assert!(document.contains(part), "{part} not in {document}");
    }
    let usage = common::command(common::tool())
        .arg("reach")
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

/// What `reach` refuses, each named on stderr with exit 1 (the other files still
/// reported): a FIFO (never waited on), a device, a truncated ELF file.
#[test]
fn reach_refuses_what_it_cannot_read() {
    let plain = object("self_bound_plain.so", &["-fPIC", "-shared"]);
    let dir = common::Scratch::new();
    std::fs::create_dir_all(dir.dir()).unwrap();
    let fifo = dir.dir().join("fifo");
    let made = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(made.as_ptr(), 0o600) }, 0);
    let truncated = dir.dir().join("truncated.so");
    std::fs::write(&truncated, &std::fs::read(&plain).unwrap()[..100]).unwrap();
    let output = common::command("timeout")
        .arg("20")
        .arg(common::tool())
        .arg("reach")
        .args([&fifo, std::path::Path::new("/dev/zero"), &truncated, &plain])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    for part in [
        "fifo: not a regular file",
        "/dev/zero: not a regular file",
        "truncated.so: a damaged ELF file",
    ] {
        assert!(stderr.contains(part), "{part} not in {stderr}");
    }
    assert!(String::from_utf8_lossy(&output.stdout).contains("self_bound_plain.so: holds LevelDB"));
}
