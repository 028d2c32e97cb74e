//! `leveldb-bloom audit` on what a user may hand it besides tables: files named like
//! tables that are FIFOs, devices, dangling symlinks, directories, sparse files of
//! gigabytes, tables whose handles lie, tables deleted while the audit runs. Each is
//! reported (exit 1, the path on stderr) or skipped, in bounded time and memory,
//! while the good tables beside it are still audited.

// A binary of its own (tests/bounded): Linux gives a child the high-water mark of the
// memory of the process that spawned it (kept across exec), and these tests bound the
// tool's peak memory, so their parent must stay small: not the suite's binary.
#[path = "../suite/common/mod.rs"]
mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

/// The tool's exit code, stdout, stderr, wall time and peak resident memory (KiB),
/// killed after 60 s (a hang fails the test, never blocks it).
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    seconds: f64,
    max_rss_kib: i64,
}

impl Run {
    /// Prints what the case cost and checks its memory stayed under 100 MiB.
    fn report(&self, case: &str) {
        eprintln!(
            "{case}: exit {}, {:.2} s, {} KiB peak",
            self.code, self.seconds, self.max_rss_kib
        );
        assert!(
            self.max_rss_kib < 100 << 10,
            "{case}: {} KiB",
            self.max_rss_kib
        );
    }

    /// The line of stderr naming `path`.
    fn stderr_line(&self, path: &Path) -> &str {
        let path = path.display().to_string();
        self.stderr
            .lines()
            .find(|l| l.contains(&path))
            .unwrap_or_else(|| panic!("{path} not on stderr: {}", self.stderr))
    }
}

fn run(args: &[&str], paths: &[&Path]) -> Run {
    let start = Instant::now();
    let child = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .arg("audit")
        .args(args)
        .args(paths)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(60));
        // SAFETY: kill(2) with a pid and a signal number has no memory effects; if
        // the child was reaped already the pid names nothing of ours (or is reused,
        // a risk accepted in a test that failed by hanging anyway).
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
    let output = common::bounded::wait_with_output_rusage(child);
    drop(watchdog);
    let (status, stdout, stderr, rusage) = output;
    assert_ne!(
        status.signal(),
        Some(libc::SIGKILL),
        "hung: {args:?} {paths:?}"
    );
    Run {
        code: status.code().expect("exits, no signal"),
        stdout,
        stderr,
        seconds: start.elapsed().as_secs_f64(),
        max_rss_kib: rusage.ru_maxrss,
    }
}

/// A directory holding one good table of a real LevelDB database.
fn dir_with_good_table() -> (Scratch, Scratch, std::path::PathBuf) {
    let db = plyvel_database(false);
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let good = dir.0.join("000100.ldb");
    std::fs::copy(&ldb_files(&db.0)[0], &good).unwrap();
    (db, dir, good)
}

#[test]
fn files_that_are_not_tables_are_errors_not_hangs() {
    let (_db, dir, _good) = dir_with_good_table();
    let d = &dir.0;
    let fifo = d.join("000001.ldb");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path, valid for the call.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    std::os::unix::fs::symlink("/dev/zero", d.join("000002.ldb")).unwrap();
    std::os::unix::fs::symlink(d.join("gone"), d.join("000003.ldb")).unwrap();
    std::fs::create_dir(d.join("000004.ldb")).unwrap();
    let sparse = std::fs::File::create(d.join("000005.ldb")).unwrap();
    sparse.set_len(6 << 30).unwrap();
    let expected = [
        ("000001.ldb", "a FIFO, not a regular file"),
        ("000002.ldb", "a character device, not a regular file"),
        ("000003.ldb", "a symlink to"),
        ("000004.ldb", "a directory, not a regular file"),
        ("000005.ldb", "wrong magic number"),
    ];
    for json in [false, true] {
        let r = run(if json { &["--json"] } else { &[] }, &[d]);
        assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
        for (name, message) in expected {
            let line = r.stderr_line(&d.join(name));
            assert!(line.contains(message), "{line}");
        }
        assert!(!r.stderr.contains("panicked"), "{}", r.stderr);
        if json {
            let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
            assert_eq!(doc["verdict"], "unreadable");
            assert_eq!(doc["errors"].as_array().unwrap().len(), expected.len());
            assert_eq!(doc["tables"].as_array().unwrap().len(), 1, "the good table");
        } else {
            assert!(r.stdout.contains("000100.ldb  leveldb  "), "{}", r.stdout);
            assert!(r.stdout.contains("FAILED: some tables could not be read"));
        }
        r.report("FIFO, /dev/zero, dangling symlink, directory, 6 GiB sparse file");
    }
}

/// Footers whose block handles claim more than the file holds, or (in a sparse file
/// of 3 GiB) nearly the whole file: reported before reading, in bounded memory.
#[test]
fn handles_that_claim_too_much_are_errors_before_any_allocation() {
    let (_db, dir, _good) = dir_with_good_table();
    let lying = |name: &str, block_size: u64, file_len: u64| {
        // Both handles (metaindex, then index) claim block_size bytes at offset 0.
        let footer = table_footer((0, block_size), (0, block_size));
        let path = dir.0.join(name);
        let file = std::fs::File::create(&path).unwrap();
        file.set_len(file_len).unwrap();
        std::os::unix::fs::FileExt::write_all_at(&file, &footer, file_len - 48).unwrap();
        path
    };
    let past_end = lying("000006.ldb", 1 << 20, 4096);
    let whole_file = lying("000007.ldb", (3 << 30) - 100, 3 << 30);
    let r = run(&[], &[&dir.0]);
    assert_eq!(r.code, 1, "{}", r.stdout);
    for (path, message) in [
        (&past_end, "runs past the end of the file"),
        (&whole_file, "larger than any this tool reads"),
    ] {
        let line = r.stderr_line(path);
        assert!(
            line.contains(message) && line.contains(" at offset "),
            "{line}"
        );
    }
    assert!(r.stdout.contains("000100.ldb  leveldb  "), "{}", r.stdout);
    r.report("index handles past the end and of 3 GiB");
}

/// Whether the process `pid` has a `.ldb` file open.
fn has_a_table_open(pid: libc::pid_t) -> bool {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    let is_table = |path: &Path| path.extension().is_some_and(|ext| ext == "ldb");
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|target| is_table(&target)))
}

/// Tables deleted while the audit runs (as a compaction deletes them): skipped, never
/// errors. Hard links to one table, removed from another thread once the audit
/// has listed them.
#[test]
fn tables_deleted_during_the_audit_are_skipped() {
    let (_db, dir, good) = dir_with_good_table();
    let links: Vec<_> = (0..1500)
        .map(|i| {
            let link = dir.0.join(format!("{:06}.ldb", 1000 + i));
            std::fs::hard_link(&good, &link).unwrap();
            link
        })
        .collect();
    let child = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .args(["audit", "--json"])
        .arg(&dir.0)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the audit reads its first table it has listed them all: it is stopped
    // there while the newest links go, as a compaction's inputs.
    let mut child = child;
    let pid = child.id() as libc::pid_t;
    while !has_a_table_open(pid) && child.try_wait().unwrap().is_none() {
        std::thread::yield_now();
    }
    // SAFETY: kill(2) on our own child, not yet reaped (or the signal is not sent).
    let stopped =
        child.try_wait().unwrap().is_none() && unsafe { libc::kill(pid, libc::SIGSTOP) } == 0;
    for link in links.iter().rev().take(1000) {
        std::fs::remove_file(link).unwrap();
    }
    if stopped {
        // SAFETY: as above; a stopped child is not reaped.
        unsafe { libc::kill(pid, libc::SIGCONT) };
    }
    let output = child.wait_with_output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(output.status.code(), Some(0), "{doc}");
    let audited = doc["tables"].as_array().unwrap().len();
    let skipped = doc["skipped"].as_array().unwrap().len();
    assert_eq!(doc["errors"].as_array().unwrap().len(), 0, "{doc}");
    assert_eq!(audited + skipped, links.len() + 1);
    assert!(skipped > 0, "the audit finished before the deletions");
    eprintln!("{audited} tables audited, {skipped} deleted during the audit and skipped");
}

/// `audit | head -1`: the closed pipe ends the tool quietly.
#[test]
fn a_closed_pipe_is_not_a_panic() {
    let (_db, dir, _good) = dir_with_good_table();
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' audit --max-missed 5 '{}' '{}' | head -c 1 >/dev/null; echo \"${{PIPESTATUS:-}}\"",
            env!("CARGO_BIN_EXE_leveldb-bloom"),
            dir.0.display(),
            dir.0.display()
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("Broken pipe"), "{stderr}");
}

/// A table of 1 GiB (the largest `max_file_size` LevelDB takes): the data blocks of a
/// real LevelDB table written over and over, with an index of them all and no filter.
/// Read in memory bounded by its blocks, not by its size.
#[test]
fn a_one_gibibyte_table_is_read_in_bounded_memory() {
    use std::io::Write;
    let (_db, dir, good) = dir_with_good_table();
    let data = std::fs::read(&good).unwrap();
    let table = leveldb_table::Table::open(&data).unwrap();
    let mut blocks = Vec::new();
    table
        .for_each_data_block(|handle, _| {
            blocks.push(handle);
            Ok(())
        })
        .unwrap();
    let first = blocks[0].offset as usize;
    let last = blocks.last().unwrap();
    let region = &data[first..(last.offset + last.size + 5) as usize];
    let path = dir.0.join("000200.ldb");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    let mut index = Vec::new(); // (shared, unshared key, value) entries, restarts every entry
    let mut restarts = Vec::new();
    let mut written = 0u64;
    let mut copy = 0u64;
    while written < 1 << 30 {
        out.write_all(region).unwrap();
        for (i, h) in blocks.iter().enumerate() {
            let mut value = Vec::new();
            for v in [written + h.offset - first as u64, h.size] {
                let mut v = v;
                while v >= 0x80 {
                    value.push(v as u8 | 0x80);
                    v >>= 7;
                }
                value.push(v as u8);
            }
            let key = format!("{copy:010}{i:06}\x01\0\0\0\0\0\0\0");
            restarts.push(index.len() as u32);
            index.extend_from_slice(&[0, key.len() as u8, value.len() as u8]);
            index.extend_from_slice(key.as_bytes());
            index.extend_from_slice(&value);
        }
        written += region.len() as u64;
        copy += 1;
    }
    for r in &restarts {
        index.extend_from_slice(&r.to_le_bytes());
    }
    index.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
    let put_block = |out: &mut dyn Write, contents: &[u8], at: &mut u64| {
        out.write_all(contents).unwrap();
        out.write_all(&[0]).unwrap();
        out.write_all(&leveldb_table::masked_crc(contents, 0).to_le_bytes())
            .unwrap();
        let handle = (*at, contents.len() as u64);
        *at += contents.len() as u64 + 5;
        handle
    };
    let metaindex = put_block(&mut out, &[0, 0, 0, 0], &mut written);
    let index = put_block(&mut out, &index, &mut written);
    let footer = table_footer(metaindex, index);
    out.write_all(&footer).unwrap();
    drop(out);
    let r = run(&["--json"], &[&path]);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(r.code, 0, "{doc}");
    assert_eq!(doc["tables"][0]["dialect"], "none");
    let entries = doc["entries"].as_u64().unwrap();
    assert!(entries > 5_000_000, "{entries}");
    r.report(&format!("a 1 GiB table, {entries} entries"));
}
