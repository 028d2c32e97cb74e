//! Every wrong turn gets a hint, checked by exit status and message: a key that is not
//! UTF-8 (use --hex), a bad line of --keys-file (named), `-o -` (stdout, no file named
//! `-`), a directory where `show` wants a table and a table where `explain` wants a
//! database (each says what to pass).

use crate::common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::process::{Command, Output};

use common::*;

fn tool(args: &[&OsStr], cwd: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn said(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_key_that_is_not_utf8_points_to_hex() {
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let key = OsStr::from_bytes(b"caf\xe9");
    for args in [
        vec![OsStr::new("explain"), dir.0.as_os_str(), key],
        vec![
            OsStr::new("show"),
            OsStr::new("--keys"),
            key,
            OsStr::new("-o"),
            OsStr::new("-"),
        ],
    ] {
        let output = tool(&args, &dir.0);
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        assert!(said(&output).contains("invalid UTF-8"), "{}", said(&output));
        assert!(
            said(&output).contains(
                "hint: keys are text; a key that is not UTF-8 is given in hex with --hex"
            ),
            "{}",
            said(&output)
        );
    }
}

#[test]
fn keys_file_lines_are_bytes_and_a_bad_hex_line_is_named() {
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let raw = dir.0.join("keys.txt");
    std::fs::write(&raw, b"apple\r\nb\xff\n").unwrap();
    let from_file = tool(
        &[
            "show".as_ref(),
            "--keys-file".as_ref(),
            raw.as_os_str(),
            "-o".as_ref(),
            "-".as_ref(),
        ],
        &dir.0,
    );
    assert_eq!(from_file.status.code(), Some(0), "{}", said(&from_file));
    let from_hex = tool(
        &["show", "--hex", "--keys", "6170706c65,62ff", "-o", "-"].map(OsStr::new),
        &dir.0,
    );
    assert_eq!(
        from_file.stdout, from_hex.stdout,
        "the file's keys are its lines' bytes"
    );
    let hex = dir.0.join("hex.txt");
    std::fs::write(&hex, b"6170\nzz\n").unwrap();
    let output = tool(
        &[
            "show".as_ref(),
            "--hex".as_ref(),
            "--keys-file".as_ref(),
            hex.as_os_str(),
            "-o".as_ref(),
            "-".as_ref(),
        ],
        &dir.0,
    );
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        said(&output),
        format!(
            "leveldb-bloom: ERROR {} line 2: \"zz\": not hex\n",
            hex.display()
        )
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn dash_output_is_stdout() {
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    let output = tool(
        &["show", "--keys", "apple", "-o", "-"].map(OsStr::new),
        &dir.0,
    );
    assert_eq!(output.status.code(), Some(0), "{}", said(&output));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("<!DOCTYPE html>"));
    assert!(!dir.0.join("-").exists(), "a file named - was written");
}

#[test]
fn a_directory_for_a_table_and_a_table_for_a_directory_say_what_to_pass() {
    let db = plyvel_database(false);
    let table = live_table_files(&db.0).remove(0);
    let output = tool(
        &[
            "show".as_ref(),
            db.0.as_os_str(),
            "-o".as_ref(),
            "page.html".as_ref(),
        ],
        &db.0,
    );
    assert_eq!(output.status.code(), Some(2));
    let message = said(&output);
    assert!(
        message
            .contains("a directory; show draws the filters of one table: pass a table file, e.g. "),
        "{message}"
    );
    let named = message
        .split("e.g. ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap();
    assert!(std::path::Path::new(named).is_file(), "{message}");
    assert!(!db.0.join("page.html").exists());
    let output = tool(
        &["explain".as_ref(), table.as_os_str(), "key".as_ref()],
        &db.0,
    );
    assert_eq!(output.status.code(), Some(2));
    let message = said(&output);
    assert!(
        message.contains(&format!(
            "a file; explain follows keys through a whole database: pass its directory ({})",
            db.0.display()
        )),
        "{message}"
    );
}
