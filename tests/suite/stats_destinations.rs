//! `LEVELDB_BLOOM_STATS` against every destination an attacker or an accident can
//! give it, from the host program `c_tests/stats_host.c` (linked to the library; it
//! prints `counting: yes` when the variable took effect, proving the library's
//! constructor ran and accepted the destination): setuid-root as `nobody`, FIFOs with
//! and without a reader, a closed pipe as stderr, a directory, a missing directory,
//! an unwritable file, `/dev/full`, a symbolic link, a relative path after `chdir`,
//! a full pipe as stderr, descriptors closed and reused by data files, 2,000 forked
//! children, and a process that never calls the library.

use crate::common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::harness::assert_report;
use common::stats::{open_scratch as scratch, stats_host as host};
use common::{command, lib_path, SONAME};

mod pipes;

const VARIABLE: &str = "LEVELDB_BLOOM_STATS";
/// The library's other variable, which a setuid program ignores too.
const SIMD_VARIABLE: &str = "LEVELDB_BLOOM_SIMD";
/// Every run is killed after this long: a hang fails the test instead of stalling it.
const SECONDS: &str = "20";

/// Whether this test runs as root, as the runs as `nobody` and the setuid-root
/// program need (`make test` runs as root); otherwise a SKIPPED line.
fn root(test: &str) -> bool {
    test_support::root_for(test, "to run as nobody, and a setuid-root program")
}

/// The host and the library copied into `dir`, which `nobody` may enter, for runs as
/// `nobody`, who may not enter the checkout (a clone in a `0700` directory, or in
/// root's home): run it with [`LIBRARY_PATH`] set to `dir`.
fn host_for_nobody(dir: &Path) -> PathBuf {
    let program = dir.join("stats_host");
    std::fs::copy(host(), &program).unwrap();
    std::fs::copy(lib_path(), dir.join(SONAME)).unwrap();
    program
}

/// Where the dynamic linker finds the library of [`host_for_nobody`]'s copy (ignored
/// in a setuid program, which finds it through its rpath, as root).
const LIBRARY_PATH: &str = "LD_LIBRARY_PATH";

/// `program args…` under `timeout`, with the variable set to `value`.
fn under_timeout(program: &Path, args: &[&str], value: &str) -> Command {
    let mut command = command("timeout");
    command
        .arg(SECONDS)
        .arg(program)
        .args(args)
        .env(VARIABLE, value);
    command
}

fn output(command: &mut Command) -> Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"))
}

/// The host's run: exit status 0, its check line, and whether it counted.
fn passed(output: &Output) -> bool {
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "exit {}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    assert_report("stats_host", &stdout);
    stdout.contains("counting: yes\n")
}

/// The SIMD level the host's library said it hashes with.
fn simd_level(output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .find_map(|line| line.strip_prefix("simd level: "));
    line.unwrap_or_else(|| panic!("no SIMD level in:\n{stdout}"))
        .to_string()
}

fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Summary lines in `text`, each as its number of queries.
fn summaries(text: &str) -> Vec<u64> {
    text.lines()
        .map(|line| {
            let rest = line.split_once("): ").expect("a summary line").1;
            rest.split(' ').next().unwrap().parse().expect("a count")
        })
        .collect()
}

/// A refused destination: the host runs to its end with exit status 0, counting
/// nothing, and stderr holds exactly one line naming the variable and `reason`.
fn refused(value: &str, reason: &str, cwd: &Path) {
    let run = output(under_timeout(&host(), &["plain", "10"], value).current_dir(cwd));
    assert!(!passed(&run), "{value}: counted though refused");
    let stderr = stderr_of(&run);
    let expected = format!("leveldb-bloom: {VARIABLE}={value:?}: {reason}");
    assert!(
        stderr.lines().count() == 1 && stderr.starts_with(&expected),
        "{value}: expected one line {expected:?}, stderr:\n{stderr}"
    );
}

#[test]
fn appended_to_a_file_named_relative_to_the_start_directory() {
    let scratch = scratch();
    let (start, later) = (scratch.dir().join("start"), scratch.dir().join("later"));
    std::fs::create_dir_all(&start).unwrap();
    std::fs::create_dir_all(&later).unwrap();
    for _ in 0..2 {
        let mut run = under_timeout(&host(), &["plain", "100", later.to_str().unwrap()], "s.txt");
        assert!(passed(&output(run.current_dir(&start))));
    }
    assert_eq!(summaries(&read(&start.join("s.txt"))), [100, 100]);
    assert!(!later.join("s.txt").exists(), "resolved after the chdir");
}

#[test]
fn refused_destinations_say_so_in_one_line_at_start() {
    let scratch = scratch();
    let dir = scratch.dir();
    refused(scratch.path(), "cannot open: Is a directory", dir);
    refused(
        "missing/s.txt",
        "cannot open: No such file or directory",
        dir,
    );
    refused("/dev/full", "neither a regular file nor a FIFO", dir);
    std::fs::write(dir.join("target"), "kept\n").unwrap();
    std::os::unix::fs::symlink("target", dir.join("link")).unwrap();
    refused("link", "a symbolic link, not followed", dir);
    assert_eq!(read(&dir.join("target")), "kept\n");
    // A FIFO's reader is looked for at exit (tests/suite/stats_file.rs).
}

/// `nobody` cannot write a root-owned file: one line, the file untouched.
#[test]
fn an_unwritable_file_says_so_at_start() {
    if !root("an_unwritable_file_says_so_at_start") {
        return;
    }
    let scratch = scratch();
    let file = scratch.dir().join("roots");
    std::fs::write(&file, "root's\n").unwrap();
    let run = output(
        command("setpriv")
            .args([
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                "timeout",
                SECONDS,
            ])
            .arg(host_for_nobody(scratch.dir()))
            .args(["plain", "10"])
            .env(VARIABLE, &file)
            .env(LIBRARY_PATH, scratch.dir()),
    );
    assert!(!passed(&run));
    let stderr = stderr_of(&run);
    assert!(
        stderr.lines().count() == 1 && stderr.contains("cannot open: Permission denied"),
        "{stderr}"
    );
    assert_eq!(read(&file), "root's\n");
}

/// A setuid-root copy of the host run by `nobody` ignores the variable: a root-only
/// file is not appended to, a new path not created, nothing said; and it ignores
/// `LEVELDB_BLOOM_SIMD` too. The same copy without the setuid bit, run by `nobody`
/// towards a file `nobody` may write, counts and writes, at the SIMD level asked
/// for: only the secure execution made the difference.
#[test]
fn a_setuid_program_ignores_the_variable() {
    if !root("a_setuid_program_ignores_the_variable") {
        return;
    }
    let scratch = scratch();
    let dir = scratch.dir();
    let program = host_for_nobody(dir);
    let secret = dir.join("secret");
    std::fs::write(&secret, "root only\n").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    let open = dir.join("open");
    std::fs::create_dir(&open).unwrap();
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    let as_nobody = |value: &Path| {
        output(
            command("setpriv")
                .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
                .arg(&program)
                .args(["plain", "10"])
                .env(VARIABLE, value)
                .env(SIMD_VARIABLE, "scalar")
                .env(LIBRARY_PATH, dir),
        )
    };
    let control = as_nobody(&open.join("mine"));
    assert!(control.status.success());
    assert!(
        simd_level(&control) == "scalar",
        "the control run's SIMD level"
    );
    assert_eq!(
        summaries(&read(&open.join("mine"))),
        [10],
        "the control run"
    );

    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o4755)).unwrap();
    let metadata = std::fs::metadata(&program).unwrap();
    assert!(
        metadata.uid() == 0 && metadata.mode() & 0o4000 != 0,
        "a setuid-root program"
    );
    for value in [secret.clone(), dir.join("new")] {
        let run = as_nobody(&value);
        assert!(
            !passed(&run),
            "{}: counted in a setuid program",
            value.display()
        );
        assert_eq!(stderr_of(&run), "");
        let best = bloom::SimdLevel::best().name();
        assert_eq!(
            simd_level(&run),
            best,
            "{SIMD_VARIABLE} in a setuid program"
        );
    }
    assert_eq!(read(&secret), "root only\n");
    assert!(!dir.join("new").exists(), "a root-owned file was created");
}

/// Descriptor 2 closed and reused by a data file: the summary goes to the stderr of
/// the start, the data file keeps only its data.
#[test]
fn a_data_file_on_descriptor_2_is_untouched() {
    let scratch = scratch();
    let data = scratch.dir().join("data");
    std::fs::write(&data, "").unwrap();
    let run = output(&mut under_timeout(
        &host(),
        &["reuse-fd2", "10", data.to_str().unwrap()],
        "stderr",
    ));
    assert!(passed(&run));
    assert_eq!(read(&data), "data\n");
    assert_eq!(summaries(&stderr_of(&run)), [10]);
}

/// Every descriptor but 0 to 2 closed by the program and a number taken by a data
/// file: the file is opened at exit, so the data file keeps only its data and the
/// summary is written.
#[test]
fn a_data_file_on_the_summarys_descriptor_is_untouched() {
    let scratch = scratch();
    let (data, stats) = (scratch.dir().join("data"), scratch.dir().join("stats"));
    std::fs::write(&data, "").unwrap();
    let run = output(&mut under_timeout(
        &host(),
        &["steal-fd", "10", data.to_str().unwrap()],
        stats.to_str().unwrap(),
    ));
    assert!(passed(&run));
    assert_eq!(read(&data), "data\n");
    assert_eq!(summaries(&read(&stats)), [10]);
    assert_eq!(stderr_of(&run), "");
}

/// 2,000 children, each asking one key and calling exit(): each summary holds only
/// its own query, the parent's its own 1,000.
#[test]
fn forked_children_write_only_their_own_counts() {
    let scratch = scratch();
    let stats = scratch.dir().join("stats");
    let run = output(&mut under_timeout(
        &host(),
        &["fork", "1000", "2000"],
        stats.to_str().unwrap(),
    ));
    assert!(passed(&run));
    let mut counts = summaries(&read(&stats));
    counts.sort_unstable();
    assert_eq!(counts.len(), 2001);
    assert!(
        counts[..2000].iter().all(|&n| n == 1),
        "{:?}",
        &counts[1990..]
    );
    assert_eq!(counts[2000], 1000);
}

/// A whole command line under `LD_PRELOAD` (a shell, `timeout`), none of which calls
/// the library: no file is created. The library does start in these processes: a
/// destination in a missing directory is refused by each of them.
#[test]
fn a_process_that_never_calls_the_library_writes_nothing() {
    let scratch = scratch();
    let stats = scratch.dir().join("stats");
    let shell = |value: &Path| {
        let mut shell = command("timeout");
        shell
            .args([SECONDS, "sh", "-c", "echo ran | cat"])
            .env("LD_PRELOAD", lib_path())
            .env(VARIABLE, value);
        output(&mut shell)
    };
    let run = shell(&stats);
    assert!(run.status.success());
    assert_eq!(String::from_utf8_lossy(&run.stdout), "ran\n");
    assert!(
        !stats.exists(),
        "created by a process that never used the library"
    );
    let refused = shell(&scratch.dir().join("missing/stats"));
    assert!(
        stderr_of(&refused).lines().count() >= 3,
        "the library did not start in these processes: {}",
        stderr_of(&refused)
    );
}
