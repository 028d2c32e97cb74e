//! The tool's words and files are safe and truthful whatever it reads and wherever
//! it writes: names from files escaped for the terminal, no file's contents echoed
//! (a `CURRENT` linked to a secret), pages never written through a symlink or onto
//! a FIFO, keys files only regular files or stdin, closed or full stdout and stderr
//! an exit status (never a panic), `--hex` exactly pairs of hex digits, the page
//! intact whatever path it names, and an audit OK only about what it read.

// A binary of its own (tests/bounded): Linux gives a child the high-water mark of the
// memory of the process that spawned it (kept across exec), and these tests bound the
// tool's peak memory, so their parent must stay small: not the suite's binary.
#[path = "../suite/common/mod.rs"]
mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::bounded::{run_tool, Run};
use common::{craft, Scratch};

const TIMEOUT: Duration = Duration::from_secs(30);
const HOSTILE_NAME: &[u8] = b"filter.evil\x1b]0;pwned\x07\x1b[2J\x9b31m";

fn scratch() -> Scratch {
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    dir
}

fn tool(args: &[&str]) -> Run {
    run_tool(args, TIMEOUT, |_| {})
}

/// `show TABLE -o PAGE`.
fn show_table(table: &Path, page: &Path) -> Run {
    tool(&[
        "show",
        table.to_str().unwrap(),
        "-o",
        page.to_str().unwrap(),
    ])
}

/// A database of one table (000005.ldb, keys k1 k2 k3) whose filter block is named
/// `filter_name`.
fn database(filter_name: &[u8]) -> Scratch {
    let dir = scratch();
    let mut edit = craft::base_edit(1);
    craft::add_table(&mut edit, 5);
    craft::database(&dir.0, &[edit]);
    // One filter, LevelDB's for the keys, covering the data block at offset 0.
    let keys: [&[u8]; 3] = [b"k1", b"k2", b"k3"];
    let mut filters = leveldb_bloom::BloomFilterPolicy::new(10).build_filter(&keys);
    let array_offset = filters.len() as u32;
    filters.extend_from_slice(&0u32.to_le_bytes());
    filters.extend_from_slice(&array_offset.to_le_bytes());
    filters.push(11);
    let table = craft::table(&keys, filter_name, &filters, None);
    std::fs::write(dir.0.join("000005.ldb"), table).unwrap();
    dir
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path, valid for the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Closes descriptor `fd` in the child before it runs.
fn closed(command: &mut Command, fd: i32) {
    // SAFETY: only close(2), async-signal-safe, runs between fork and exec.
    unsafe {
        command.pre_exec(move || {
            libc::close(fd);
            Ok(())
        });
    }
}

#[test]
fn names_from_files_are_escaped_for_the_terminal() {
    let db = database(HOSTILE_NAME);
    let path = db.0.to_str().unwrap();
    let audit = tool(&["audit", path]);
    let explain = tool(&["explain", path, "k2"]);
    let json = tool(&["audit", "--json", path]);
    for (case, r) in [
        ("audit", &audit),
        ("explain", &explain),
        ("audit --json", &json),
    ] {
        r.check(case, 100);
        for raw in ['\x1b', '\x07', '\u{9b}'] {
            assert!(
                !r.stdout.contains(raw),
                "{case}: {raw:?} reached stdout: {}",
                r.stdout
            );
            assert!(!r.stderr.contains(raw), "{case}: {raw:?} reached stderr");
        }
    }
    assert!(
        audit.stdout.contains("evil\\u{1b}]0;pwned\\u{7}"),
        "{}",
        audit.stdout
    );
    assert!(
        explain.stdout.contains("evil\\u{1b}]0;pwned\\u{7}"),
        "{}",
        explain.stdout
    );
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let name = doc["tables"][0]["filter_name"].as_str().unwrap();
    assert!(
        name.starts_with("evil\u{1b}]0;pwned\u{7}"),
        "JSON keeps the name: {name:?}"
    );
}

#[test]
fn current_linked_to_a_secret_file_is_not_echoed() {
    let db = database(b"filter.leveldb.BuiltinBloomFilter2");
    let secret = db.0.join("shadow");
    std::fs::write(
        &secret,
        "root:$6$s3cr3tSALT$h4shh4shh4sh:19000:0:99999:7:::\n",
    )
    .unwrap();
    std::fs::remove_file(db.0.join("CURRENT")).unwrap();
    std::os::unix::fs::symlink(&secret, db.0.join("CURRENT")).unwrap();
    let path = db.0.to_str().unwrap();
    for args in [
        vec!["audit", path],
        vec!["audit", "--json", path],
        vec!["explain", path, "k1"],
    ] {
        let r = tool(&args);
        r.check(&format!("{args:?}"), 100);
        assert_eq!(r.code(), Some(1), "{args:?}: {}", r.stdout);
        let all = format!("{}{}", r.stdout, r.stderr);
        assert!(
            !all.contains("s3cr3t") && !all.contains("root:"),
            "{args:?}: {all}"
        );
        assert!(
            all.contains("CURRENT: a symlink holding ") && all.contains(" bytes, not a MANIFEST"),
            "{all}"
        );
    }
}

#[test]
fn pages_are_never_written_through_symlinks_or_onto_fifos() {
    let dir = scratch();
    let victim = dir.0.join("victim");
    std::fs::write(&victim, "keep me").unwrap();
    let link = dir.0.join("link.html");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let fifo = dir.0.join("fifo.html");
    mkfifo(&fifo);
    for (output, said) in [
        (&link, "a symlink: not followed"),
        (&fifo, "a FIFO with no reader"),
    ] {
        let r = tool(&["show", "--keys", "a,b", "-o", output.to_str().unwrap()]);
        r.check(&format!("show -o {}", output.display()), 100);
        assert_eq!(r.code(), Some(1));
        assert!(r.stderr.contains(said), "{}", r.stderr);
    }
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
}

#[test]
fn keys_files_are_regular_files_or_stdin_and_bounded() {
    let dir = scratch();
    let fifo = dir.0.join("keys.fifo");
    mkfifo(&fifo);
    let page = dir.0.join("page.html");
    let page = page.to_str().unwrap();
    for (file, said) in [
        (fifo.to_str().unwrap(), "a FIFO, not a regular file"),
        ("/dev/zero", "a character device, not a regular file"),
    ] {
        let r = tool(&["show", "--keys-file", file, "-o", page]);
        r.check(&format!("--keys-file {file}"), 100);
        assert_eq!(r.code(), Some(1));
        assert!(r.stderr.contains(said), "{}", r.stderr);
    }
    let r = run_tool(&["show", "--keys-file", "-", "-o", page], TIMEOUT, |c| {
        c.stdin(std::fs::File::open("/dev/zero").unwrap());
    });
    r.check("--keys-file - < /dev/zero", 300);
    assert_eq!(r.code(), Some(1));
    assert!(
        r.stderr.contains("the most a keys file may hold"),
        "{}",
        r.stderr
    );
    let r = tool(&["show", "--keys-file", "-", "-o", page]);
    assert_eq!(r.code(), Some(0), "stdin empty: no keys: {}", r.stderr);
}

/// A case of stdio: its name, the tool's arguments, the descriptor closed (-1:
/// none), how stdio is set up besides, and the exit status expected.
type Case<'a> = (&'a str, Vec<&'a str>, i32, fn(&mut Command), i32);

#[test]
fn closed_and_full_stdout_and_stderr_are_exit_statuses_never_panics() {
    let db = database(b"filter.leveldb.BuiltinBloomFilter2");
    let bad = scratch();
    std::fs::write(bad.0.join("000001.ldb"), "not a table").unwrap();
    let (good, bad) = (db.0.to_str().unwrap(), bad.0.to_str().unwrap());
    let cases: [Case; 6] = [
        ("audit, stderr closed", vec!["audit", bad], 2, |_| {}, 1),
        (
            "explain, stderr closed",
            vec!["explain", bad, "k"],
            2,
            |_| {},
            1,
        ),
        ("audit, stdout closed", vec!["audit", good], 1, |_| {}, 0),
        (
            "explain, stdout closed",
            vec!["explain", good, "k1"],
            1,
            |_| {},
            0,
        ),
        (
            "audit > /dev/full",
            vec!["audit", good],
            -1,
            |c| {
                c.stdout(
                    std::fs::File::options()
                        .write(true)
                        .open("/dev/full")
                        .unwrap(),
                );
            },
            1,
        ),
        (
            "audit, stdout and stderr closed",
            vec!["audit", good],
            1,
            |c| closed(c, 2),
            0,
        ),
    ];
    for (case, args, fd, setup, code) in cases {
        let r = run_tool(&args, TIMEOUT, |c| {
            setup(c);
            if fd >= 0 {
                closed(c, fd);
            }
        });
        r.check(case, 100);
        assert_eq!(r.code(), Some(code), "{case}: {}", r.stderr);
    }
    let r = tool(&["audit", good]);
    assert_eq!(
        r.code(),
        Some(0),
        "the same database, stdout open: {}",
        r.stdout
    );
}

#[test]
fn hex_is_exactly_pairs_of_hex_digits() {
    let db = database(b"filter.leveldb.BuiltinBloomFilter2");
    let path = db.0.to_str().unwrap();
    for key in ["+f", "-f", " f", "0x", "f", "0g", "é0"] {
        let r = tool(&["explain", "--hex", path, key]);
        r.check(&format!("--hex {key:?}"), 100);
        assert!(matches!(r.code(), Some(1 | 2)), "{key:?} accepted");
    }
    let r = tool(&["explain", "--hex", "--json", path, "6b32"]);
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    assert!(r.stdout.contains("\"key_text\": \"k2\""), "{}", r.stdout);
}

/// A table whose metaindex block fails its checksum: `show` says so.
#[test]
fn a_broken_metaindex_is_said_to_be_broken() {
    let db = database(b"filter.leveldb.BuiltinBloomFilter2");
    let table = db.0.join("000005.ldb");
    let mut bytes = std::fs::read(&table).unwrap();
    let metaindex = leveldb_table::Table::open(&bytes).unwrap().metaindex();
    bytes[metaindex.offset as usize] ^= 1;
    std::fs::write(&table, bytes).unwrap();
    let page = db.0.join("page.html");
    let r = show_table(&table, &page);
    r.check("show: metaindex checksum", 100);
    assert_eq!(r.code(), Some(1));
    assert!(
        r.stderr.contains("the metaindex block cannot be read") && r.stderr.contains("checksum"),
        "{}",
        r.stderr
    );
}

/// The page of a table whose path holds `<!--<script>`, `</script>` and the
/// template's placeholder: its data is one JSON value that names the path whole,
/// and its script element holds nothing that would end or disturb it.
#[test]
fn the_page_survives_any_path() {
    let db = database(b"filter.leveldb.BuiltinBloomFilter2");
    let dir =
        db.0.join("x<!--<script>a</script>/*PAGE_SCRIPT*//*PAGE_DATA*/");
    std::fs::create_dir_all(&dir).unwrap();
    let table: PathBuf = dir.join("000005.ldb");
    std::fs::rename(db.0.join("000005.ldb"), &table).unwrap();
    let page = db.0.join("page.html");
    let r = show_table(&table, &page);
    r.check("show: a hostile path", 100);
    assert_eq!(r.code(), Some(0), "{}", r.stderr);
    let html = std::fs::read_to_string(&page).unwrap();
    let data = html.split_once("const PAGE = ").unwrap().1;
    let (json, script) = data.split_once(";\n").unwrap();
    let value: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(value["title"], table.to_str().unwrap());
    assert_eq!(html.matches("<!--").count(), 0, "{json}");
    assert_eq!(
        script.matches("</script").count(),
        1,
        "only the element's own end"
    );
    assert!(
        !script.contains("/*PAGE_"),
        "a placeholder left in the page"
    );
}

#[test]
fn an_audit_is_ok_only_about_what_it_read() {
    let empty = scratch();
    let r = tool(&["audit", "--json", empty.0.to_str().unwrap()]);
    r.check("audit of an empty directory", 100);
    assert_eq!(r.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["verdict"], "nothing-audited", "{doc}");
    let r = tool(&["audit", empty.0.to_str().unwrap()]);
    assert!(r.stdout.contains("FAILED: nothing audited"), "{}", r.stdout);
    // A fresh database: its MANIFEST lists no table yet.
    let fresh = scratch();
    craft::database(&fresh.0, &[craft::base_edit(1)]);
    // Exit 0 (nothing can be missed), as the help says, but never "OK".
    let r = tool(&["audit", "--json", fresh.0.to_str().unwrap()]);
    assert_eq!(r.code(), Some(0), "{}", r.stdout);
    assert!(r.stdout.contains("lists no table yet"), "{}", r.stdout);
    let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(doc["verdict"], "no-tables", "{doc}");
    let r = tool(&["audit", fresh.0.to_str().unwrap()]);
    assert_eq!(r.code(), Some(0), "{}", r.stdout);
    assert!(!r.stdout.contains("OK"), "{}", r.stdout);
    assert!(r.stdout.ends_with("NOTHING TO AUDIT: no live table, so no filter was checked (exit status 0: nothing can be missed yet)\n"), "{}", r.stdout);
    let help = tool(&["audit", "--help"]).stdout;
    assert!(
        help.contains("its last line then says there was nothing to audit"),
        "{help}"
    );
    // CURRENT unreadable (naming no MANIFEST), then a MANIFEST that does not parse:
    // the table is audited by its name, the verdict is not OK.
    let db = database(b"filter.leveldb.BuiltinBloomFilter2");
    let path = db.0.to_str().unwrap();
    for (file, contents) in [("CURRENT", "garbage\n"), ("MANIFEST-000001", "garbage")] {
        if file != "CURRENT" {
            std::fs::write(db.0.join("CURRENT"), "MANIFEST-000001\n").unwrap();
        }
        std::fs::write(db.0.join(file), contents).unwrap();
        let r = tool(&["audit", "--json", path]);
        r.check(&format!("audit, {file} unreadable"), 100);
        assert_eq!(r.code(), Some(1), "{}", r.stdout);
        let doc: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        assert_eq!(doc["verdict"], "unreadable", "{doc}");
        assert_eq!(doc["tables"].as_array().unwrap().len(), 1, "{doc}");
        assert!(
            r.stderr.contains("the current version could not be read"),
            "{}",
            r.stderr
        );
    }
}
