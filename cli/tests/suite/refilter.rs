//! `leveldb-bloom refilter` against LevelDB 1.23 itself (plyvel, and the recording
//! policy of cli/tests/explain_harness.cc): a database written with no filter policy,
//! refiltered, holds the very tables LevelDB writes with the bloom policy; LevelDB
//! then finds every key and answers absent keys from the filters. Killed at any step
//! of its commit, the database stays one LevelDB reads whole: the old version or the
//! new. And the refusals: a database a program holds, another comparator, a corrupt
//! table, a full disk.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use leveldb_table::Table;

/// The loader's KEYS.
const KEYS: u64 = 12_000;

/// The loader's keys never written, in hex, as the harness reads them.
fn absent_keys(count: u64) -> Vec<String> {
    (KEYS..KEYS + count)
        .map(|i| {
            format!("key {:08}", i * 7919 % 1_000_003)
                .bytes()
                .map(|b| format!("{b:02x}"))
                .collect()
        })
        .collect()
}

/// Every file of `dir` with its contents.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| !p.ends_with("LOCK"))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn a_database_without_filters_gets_the_tables_leveldb_writes_with_them() {
    let (plain, bloom) = (refilter_db("none"), refilter_db("10"));
    let harness = harness();
    let absent = absent_keys(60);
    // Before: LevelDB has no filter to ask.
    let before = leveldb_gets(&harness, &plain.0, &absent);
    assert!(before
        .iter()
        .all(|(calls, found)| calls.is_empty() && !found));
    let old = live_table_files(&plain.0);
    let (code, json, stderr) = refilter_json(&plain.0, &["--bits-per-key", "10"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json["committed"], true);
    let refiltered = json["tables"].as_array().unwrap();
    assert_eq!(refiltered.len(), old.len());
    assert!(old.len() >= 2, "tables at two levels");
    let new = live_table_files(&plain.0);
    for ((ours, theirs), old) in new.iter().zip(live_table_files(&bloom.0)).zip(&old) {
        let (ours_bytes, theirs_bytes) = (
            std::fs::read(ours).unwrap(),
            std::fs::read(&theirs).unwrap(),
        );
        let (ours_table, theirs_table) = (
            Table::open(&ours_bytes).unwrap(),
            Table::open(&theirs_bytes).unwrap(),
        );
        assert_eq!(
            current_filter_block(&ours_table).contents(),
            current_filter_block(&theirs_table).contents(),
            "{}: the filter block LevelDB writes",
            ours.display()
        );
        assert!(
            ours_bytes == theirs_bytes,
            "{} differs from {}",
            ours.display(),
            theirs.display()
        );
        assert_ne!(ours, old, "a new file number");
        assert!(
            old.exists(),
            "{}: left for LevelDB to delete",
            old.display()
        );
    }
    // LevelDB asks the new filters, which answer "absent" for nearly every absent key.
    let after = leveldb_gets(&harness, &plain.0, &absent);
    assert!(after
        .iter()
        .all(|(calls, found)| calls.len() == 1 && !found));
    let saved = after.iter().filter(|(calls, _)| !calls[0].1).count();
    assert!(
        saved >= 55,
        "{saved} of 60 absent keys answered by the filter"
    );
    leveldb_reads_every_key(&plain.0);
    let (code, audit) = audit_json(&plain.0);
    assert_eq!(code, 0, "{audit}");
    assert_eq!(audit["verdict"], "ok");
    for old in &old {
        assert!(!old.exists(), "{}: LevelDB deleted it", old.display());
    }
}

/// Needs the tool built with the `crash-points` feature (`cargo test --all-features`,
/// as `make test` runs it): LEVELDB_BLOOM_REFILTER_CRASH_AT=N kills it at step N.
#[test]
#[cfg_attr(
    not(feature = "crash-points"),
    ignore = "needs the crash-points feature (--all-features)"
)]
fn killed_at_any_step_the_database_is_the_old_version_or_the_new() {
    let original = refilter_db("none");
    let mut step = 1;
    loop {
        let db = Scratch::new();
        copy_db(&original.0, &db.0);
        let status = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
            .arg("refilter")
            .arg(&db.0)
            .args(["--bits-per-key", "10"])
            .env("LEVELDB_BLOOM_REFILTER_CRASH_AT", step.to_string())
            .output()
            .unwrap()
            .status;
        let finished = status.success();
        if !finished {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(9), "step {step}: {status:?}");
        }
        leveldb_reads_every_key(&db.0);
        // One version: every live table has the new filters, or none has.
        let filtered: Vec<bool> = live_table_files(&db.0)
            .iter()
            .map(|file| {
                let bytes = std::fs::read(file).unwrap();
                let table = Table::open(&bytes).unwrap();
                table
                    .filter_block_handle("leveldb.BuiltinBloomFilter2")
                    .unwrap()
                    .is_some()
            })
            .collect();
        assert!(
            filtered.iter().all(|&f| f) || filtered.iter().all(|&f| !f),
            "step {step}: {filtered:?}"
        );
        let names: Vec<String> = std::fs::read_dir(&db.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".dbtmp")), "{names:?}");
        assert_eq!(
            ldb_files(&db.0).len(),
            filtered.len(),
            "step {step}: {names:?}"
        );
        if finished {
            assert!(filtered[0], "the completed run committed");
            break;
        }
        step += 1;
    }
    // Two tables (each before and after its fsync), the MANIFEST's, the directory's
    // fsync, CURRENT's temporary file's, the rename, the directory's fsync again.
    assert_eq!(step, 12, "the run completes after its last crash point");
}

/// Runs refilter on `db`, which must refuse with a message holding `why`, and
/// checks that no file of the database changed and none was added.
fn refuses(db: &Path, why: &str) {
    let before = snapshot(db);
    let (code, json, stderr) = refilter_json(db, &["--bits-per-key", "10"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains(why), "{stderr}");
    assert_eq!(json["committed"], false);
    assert!(json["error"].as_str().unwrap().contains(why), "{json}");
    let after = snapshot(db);
    assert!(
        before == after,
        "{}: files changed: {:?}",
        db.display(),
        after.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
}

/// Rewrites the live MANIFEST of `db` with the records `edit` makes of its records.
fn rewrite_manifest(db: &Path, edit: impl FnOnce(Vec<Vec<u8>>) -> Vec<Vec<u8>>) {
    let manifest = leveldb_table::db::manifest::live_version(db)
        .unwrap()
        .manifest;
    let mut reader = leveldb_table::db::log::open_log(&manifest).unwrap();
    let mut records = Vec::new();
    while let Some((_, record)) = reader.next_record().unwrap() {
        records.push(record);
    }
    let mut writer = leveldb_table::db::log_writer::LogWriter::new(Vec::new());
    for record in edit(records) {
        writer.add_record(&record).unwrap();
    }
    std::fs::write(&manifest, writer.into_inner()).unwrap();
}

/// Refused, and the error printed once: on stderr, the text report on stdout
/// saying only that nothing changed.
#[test]
fn a_database_a_program_holds_is_refused() {
    let db = refilter_db("none");
    let mut holder = Holder::hold(&db.0);
    let why = format!(
        "held by another process (a program has the database open: process {} holds LevelDB's LOCK)",
        holder.0.id()
    );
    refuses(&db.0, &why);
    let output = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .args(["refilter", "--bits-per-key", "10"])
        .arg(&db.0)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches(why.as_str()).count(), 1, "{stderr}");
    assert!(!stdout.contains(why.as_str()), "{stdout}");
    assert!(
        stdout.ends_with(": nothing changed (the error is on stderr).\n"),
        "{stdout}"
    );
    holder.release();
}

#[test]
fn another_comparator_is_kept_byte_for_byte() {
    // Keys in reverse order, under a name that is not UTF-8: LevelDB opens the
    // refiltered database only if the new MANIFEST repeats the name exactly.
    let script = |bits: u32, body: &str| {
        format!(
            "import plyvel, sys\n\
             cmp = lambda a, b: (a < b) - (a > b)\n\
             db = plyvel.DB(sys.argv[1], create_if_missing=True, bloom_filter_bits={bits}, comparator=cmp, comparator_name=b'rev\\xffersed')\n\
             {body}\n\
             db.close()"
        )
    };
    let db = Scratch::new();
    let write = "for i in range(2000): db.put(b'key %06d' % i, b'v' * 50)\n\
                 db.compact_range()";
    succeed(
        Command::new(PYTHON)
            .arg("-c")
            .arg(script(0, write))
            .arg(&db.0),
    );
    let (code, json, stderr) = refilter_json(&db.0, &["--bits-per-key", "10"]);
    assert_eq!(
        (code, &json["committed"]),
        (0, &serde_json::json!(true)),
        "{stderr}"
    );
    let version = leveldb_table::db::manifest::live_version(&db.0).unwrap();
    assert_eq!(version.comparator.as_deref(), Some(&b"rev\xffersed"[..]));
    let read = "assert all(db.get(b'key %06d' % i) == b'v' * 50 for i in range(2000))";
    succeed(
        Command::new(PYTHON)
            .arg("-c")
            .arg(script(10, read))
            .arg(&db.0),
    );
}

#[test]
fn a_manifest_naming_no_comparator_is_refused() {
    // LevelDB writes the comparator's name first in every MANIFEST: one without it
    // is no LevelDB's, and a new MANIFEST could not repeat it.
    let db = refilter_db("none");
    rewrite_manifest(&db.0, |records| {
        (records.iter())
            .map(|record| {
                let mut edit = leveldb_table::db::manifest::decode_edit(record).unwrap();
                edit.comparator = None;
                edit.encode()
            })
            .collect()
    });
    refuses(&db.0, "records no comparator");
}

#[test]
fn a_directory_that_is_no_database_is_left_alone() {
    let dir = Scratch::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    refuses(&dir.0, "CURRENT: No such file or directory");
    assert!(!dir.0.join("LOCK").exists(), "no LOCK made");
}

#[test]
fn a_manifest_record_of_an_unknown_kind_is_refused() {
    let db = refilter_db("none");
    rewrite_manifest(&db.0, |mut records| {
        // Tag 8: what LevelDB once used for large value references, unknown today.
        records.push(vec![8, 1, 2]);
        records
    });
    refuses(&db.0, "unknown tag 8");
}

#[test]
fn a_corrupt_table_is_refused_and_the_tables_written_before_it_removed() {
    let db = refilter_db("none");
    // The level-2 table, refiltered after the level-0 one.
    let last = live_table_files(&db.0).pop().unwrap();
    let mut bytes = std::fs::read(&last).unwrap();
    bytes[100] ^= 0x40;
    std::fs::write(&last, bytes).unwrap();
    refuses(
        &db.0,
        &format!("{}: at offset 0: checksum mismatch", last.display()),
    );
}

/// A tmpfs of `options` mounted on a new directory, unmounted when dropped; `None`
/// when this process may not mount (not root).
struct Tmpfs(Scratch);

impl Tmpfs {
    fn mount(options: &str) -> Option<Self> {
        if !test_support::root_for("the full-disk cases", "to mount a tmpfs") {
            return None;
        }
        let dir = Scratch::new();
        std::fs::create_dir_all(&dir.0).unwrap();
        succeed(
            Command::new("mount")
                .args(["-t", "tmpfs", "-o", options, "tmpfs"])
                .arg(&dir.0),
        );
        Some(Self(dir))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0 .0).status();
    }
}

#[test]
fn a_full_disk_is_refused_before_or_rolled_back_after() {
    let original = refilter_db("none");
    // Room for the database, not for its new tables: refused by the estimate.
    if let Some(small) = Tmpfs::mount("size=1200k") {
        copy_db(&original.0, &small.0 .0);
        refuses(&small.0 .0, "bytes free");
    }
    // Room for one more file only: the second table cannot be created; the first,
    // written and synced, is removed.
    let files = std::fs::read_dir(&original.0).unwrap().count();
    if let Some(few) = Tmpfs::mount(&format!("size=16m,nr_inodes={}", files + 2)) {
        copy_db(&original.0, &few.0 .0);
        let next = leveldb_table::db::manifest::live_version(&original.0)
            .unwrap()
            .next_file;
        refuses(
            &few.0 .0,
            &format!("{:06}.ldb: No space left on device", next + 1),
        );
    }
}
