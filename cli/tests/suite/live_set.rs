//! The audit reads a database as LevelDB sees it: the live tables of its current
//! version (CURRENT and the MANIFEST), each with its level. Files named like tables
//! that the version does not list (the partial table LevelDB leaves when a program
//! closes it during a compaction, a table copied in from elsewhere) are notes, not
//! errors; a live table that is missing is an error; without a MANIFEST the audit
//! says so and reads the files.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

/// Writes with plyvel until a compaction is running, then closes the database: LevelDB
/// abandons the compaction and leaves its partial output behind.
const CLOSE_DURING_COMPACTION: &str = "\
import os, plyvel, sys
db = plyvel.DB(sys.argv[1], create_if_missing=True, write_buffer_size=1 << 20,
               bloom_filter_bits=10)
value = os.urandom(100)
for r in range(300):
    batch = db.write_batch()
    for i in range(1000):
        batch.put(b'%08d-%d' % ((i * 7919 + r * 13) % 10**8, r), value)
    batch.write()
db.close()
";

/// Opens and closes the database with plyvel: LevelDB deletes the files its current
/// version does not list.
const REOPEN: &str = "import plyvel, sys\nplyvel.DB(sys.argv[1]).close()\n";

fn python(script: &str, dir: &Path) {
    succeed(Command::new(PYTHON).arg("-c").arg(script).arg(dir));
}

fn not_live(doc: &serde_json::Value) -> Vec<String> {
    doc["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap().to_string())
        .filter(|n| n.contains("not live"))
        .collect()
}

#[test]
fn the_partial_table_of_a_close_during_compaction_is_not_live() {
    // The close lands during a compaction nearly always; a few tries make it certain.
    for attempt in 1..=5 {
        let db = Scratch::new();
        python(CLOSE_DURING_COMPACTION, &db.0);
        let (code, doc) = audit_json(&db.0);
        let left = not_live(&doc);
        if left.is_empty() {
            eprintln!("attempt {attempt}: the close came between compactions");
            continue;
        }
        assert_eq!(code, 0, "{doc}");
        assert_eq!(doc["verdict"], "ok");
        assert_eq!(doc["databases"][0]["tables_from"], "manifest");
        let tables = doc["tables"].as_array().unwrap();
        assert!(tables.iter().all(|t| t["level"].is_u64()), "{doc}");
        let path = PathBuf::from(left[0].split(": not live").next().unwrap());
        // Read as a table, that file is broken (or empty), as LevelDB left it...
        let (alone, _, _) = audit(&[&path]);
        eprintln!(
            "attempt {attempt}: {} ({} bytes) not live; audited alone: exit {alone}",
            path.display(),
            std::fs::metadata(&path).unwrap().len()
        );
        // ...and LevelDB itself drops it at the next open: it deletes the file, or
        // (its number never having been recorded) reuses the number for a new table.
        python(REOPEN, &db.0);
        let number: u64 = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
        let live = leveldb_table::db::manifest::live_version(&db.0).unwrap();
        let reused = (0..7).any(|level| live.files(level).iter().any(|t| t.number == number));
        assert!(!path.exists() || reused, "LevelDB kept {}", path.display());
        return;
    }
    panic!("no close landed during a compaction in 5 attempts");
}

#[test]
fn stray_missing_and_unreadable_manifests() {
    let db = plyvel_database(false);
    let (_, before) = audit_json(&db.0);
    let live = before["tables"].as_array().unwrap().len();
    // A table copied in from another database under an unused number: not live.
    let other = plyvel_database(false);
    let stray = db.0.join("900000.ldb");
    std::fs::copy(&ldb_files(&other.0)[0], &stray).unwrap();
    let (code, doc) = audit_json(&db.0);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["tables"].as_array().unwrap().len(), live);
    let notes = not_live(&doc);
    assert!(
        notes.len() == 1 && notes[0].contains("900000.ldb"),
        "{notes:?}"
    );
    // A live table deleted: an error naming it.
    let victim = PathBuf::from(before["tables"][0]["file"].as_str().unwrap());
    let saved = std::fs::read(&victim).unwrap();
    std::fs::remove_file(&victim).unwrap();
    let (code, stdout, stderr) = audit(&[&db.0]);
    assert_eq!(code, 1, "{stdout}");
    let line = stderr
        .lines()
        .find(|l| l.contains(victim.to_str().unwrap()))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(line.contains("current version lists this table"), "{line}");
    std::fs::write(&victim, saved).unwrap();
    // No CURRENT: said, and every file named like a table audited, the stray too.
    std::fs::rename(db.0.join("CURRENT"), db.0.join("CURRENT.away")).unwrap();
    let (code, doc) = audit_json(&db.0);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["databases"][0]["tables_from"], "file names");
    assert_eq!(doc["tables"].as_array().unwrap().len(), live + 1);
    let notes = doc["notes"].to_string();
    assert!(notes.contains("no readable MANIFEST"), "{notes}");
}

/// Holds the database open (plyvel: LevelDB takes its LOCK) until stdin closes.
#[test]
fn a_database_open_by_a_running_program_is_said_to_be_open() {
    let db = plyvel_database(false);
    let stray = db.0.join("900000.ldb");
    std::fs::copy(&ldb_files(&db.0)[0], &stray).unwrap();
    let (_, closed) = audit_json(&db.0);
    let notes = closed["notes"].to_string();
    assert!(!notes.contains("open by a running program"), "{notes}");
    assert!(notes.contains("LevelDB deletes such files"), "{notes}");
    let mut holder = Holder::hold(&db.0);
    // LevelDB dropped the stray table when it opened the database: a new one, as a
    // table being written would be.
    assert!(!stray.exists());
    std::fs::copy(&ldb_files(&db.0)[0], &stray).unwrap();
    let (code, open) = audit_json(&db.0);
    let (text_code, stdout, _) = audit(&[&db.0]);
    let explained = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .args(["explain", "--json"])
        .arg(&db.0)
        .arg("key")
        .output()
        .unwrap();
    holder.release();
    assert_eq!((code, text_code), (0, 0), "{open}");
    let said = format!(
        "{}: open by a running program (process {} holds LevelDB's LOCK)",
        db.0.display(),
        holder.0.id()
    );
    let notes = open["notes"].to_string();
    assert!(notes.contains(&said), "{notes}");
    assert!(stdout.contains(&format!("note: {said}")), "{stdout}");
    // explain says so on stderr, its JSON on stdout unchanged.
    assert!(explained.status.success(), "{explained:?}");
    let noted = String::from_utf8_lossy(&explained.stderr);
    assert!(
        noted.contains(&format!(
            "leveldb-bloom: note: {said}: keys it wrote since its last flush"
        )),
        "{noted}"
    );
    serde_json::from_slice::<serde_json::Value>(&explained.stdout).expect("explain's JSON");
    let stray_note = not_live(&open);
    assert!(
        stray_note.len() == 1 && stray_note[0].contains("probably a table being written"),
        "{stray_note:?}"
    );
    // The lock was only tested: the program closed the database, and LevelDB opens it
    // again (and drops the stray table).
    python(REOPEN, &db.0);
    assert!(!stray.exists());
}

/// A LOCK that is a FIFO or a symlink is never opened for waiting or followed: the
/// audit finishes and says nothing of a running program.
#[test]
fn a_lock_that_is_a_fifo_or_a_symlink_is_not_followed() {
    let db = plyvel_database(false);
    let lock = db.0.join("LOCK");
    std::fs::remove_file(&lock).unwrap();
    let fifo = std::ffi::CString::new(lock.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let (code, doc) = audit_json(&db.0);
    assert_eq!(code, 0, "{doc}");
    assert!(
        !doc["notes"].to_string().contains("running program"),
        "{doc}"
    );
    std::fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &lock).unwrap();
    let (code, doc) = audit_json(&db.0);
    assert_eq!(code, 0, "{doc}");
    assert!(
        !doc["notes"].to_string().contains("running program"),
        "{doc}"
    );
}
