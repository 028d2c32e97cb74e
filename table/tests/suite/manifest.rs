//! The MANIFEST reader against LevelDB 1.23 itself (plyvel on Debian's LevelDB): the
//! live tables it finds, with their levels, numbers and sizes, are exactly those
//! LevelDB lists in its `leveldb.sstables` property; broken `CURRENT` and MANIFEST
//! files are clear errors, never panics or hangs.

use std::path::Path;
use std::process::Command;

use leveldb_table::db::log::LogReader;
use leveldb_table::db::manifest::{decode_edit, live_version};
use test_support::Scratch;

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
const PYTHON: &str = "/usr/bin/python3";

fn python(script: &str, dir: &Path) -> String {
    let output = Command::new(PYTHON)
        .arg("-c")
        .arg(script)
        .arg(dir)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// A database of several levels written by LevelDB (tests/loaders/python_db.py), and
/// LevelDB's own list of its live tables: (level, number, size) from
/// `leveldb.sstables` (lines ` NUMBER:SIZE[...]` under `--- level L ---`).
fn database() -> (Scratch, Vec<(usize, u64, u64)>) {
    let dir = Scratch::new();
    let status = Command::new(PYTHON)
        .arg(Path::new(REPO).join("tests/loaders/python_db.py"))
        .args(["plyvel", "write"])
        .arg(&dir.0)
        .output()
        .unwrap();
    assert!(status.status.success());
    // More writes after the compactions, each flush spanning the whole key range: a
    // MANIFEST of many edits. Then the database is brought to rest before LevelDB
    // lists its tables, so that no flush or compaction running in the background
    // can change the MANIFEST between the listing and `close()`: a full compaction
    // (which flushes the memtable and waits), then three flushes of a few keys across
    // the whole range, each made and waited for by `compact_range` over a range no
    // table holds. They give level 0 (or 1) fewer tables than LevelDB compacts at
    // (4), so nothing more is scheduled.
    let listing = python(
        "import plyvel, sys\n\
         db = plyvel.DB(sys.argv[1], write_buffer_size=64 << 10)\n\
         for i in range(1800):\n    db.put(bytes([i * 7 % 256]) + b' late %06d' % i, b'v' * 100)\n\
         db.compact_range()\n\
         for r in range(3):\n    \
             for i in range(50):\n        db.put(bytes([i * 5]) + b' last %d %02d' % (r, i), b'v' * 100)\n    \
             db.compact_range(start=b'\\xff\\xff', stop=b'\\xff\\xff\\xff')\n\
         print(db.get_property(b'leveldb.sstables').decode())\n\
         db.close()\n",
        &dir.0,
    );
    let mut level = 0;
    let mut tables = Vec::new();
    for line in listing.lines() {
        if let Some(l) = line.strip_prefix("--- level ") {
            level = l.trim_end_matches(" ---").parse().unwrap();
        } else if let Some((number, rest)) = line.trim().split_once(':') {
            let size = rest.split('[').next().unwrap().parse().unwrap();
            tables.push((level, number.parse().unwrap(), size));
        }
    }
    (dir, tables)
}

#[test]
fn the_live_tables_are_the_ones_leveldb_lists() {
    let (db, leveldb) = database();
    let version = live_version(&db.0).unwrap();
    assert_eq!(
        version.comparator.as_deref(),
        Some(&b"leveldb.BytewiseComparator"[..])
    );
    let mut ours: Vec<(usize, u64, u64)> = (0..7)
        .flat_map(|level| version.files(level).iter())
        .map(|t| (t.level, t.number, t.size))
        .collect();
    let mut theirs = leveldb.clone();
    ours.sort();
    theirs.sort();
    assert_eq!(ours, theirs);
    let levels: std::collections::BTreeSet<usize> = theirs.iter().map(|t| t.0).collect();
    assert!(levels.len() >= 2 && levels.contains(&0), "{levels:?}");
    // Level 0 newest first; deeper levels in key order, not overlapping.
    let l0: Vec<u64> = version.files(0).iter().map(|t| t.number).collect();
    assert!(l0.windows(2).all(|w| w[0] > w[1]), "{l0:?}");
    for level in 1..7 {
        for pair in version.files(level).windows(2) {
            assert!(pair[0].largest.user_key() < pair[1].smallest.user_key());
        }
    }
    // Every live table is a file of the database.
    for (_, number, size) in theirs {
        let file = db.0.join(format!("{number:06}.ldb"));
        assert_eq!(std::fs::metadata(&file).unwrap().len(), size);
    }
    eprintln!(
        "{} live tables on levels {levels:?}, as LevelDB lists them",
        ours.len()
    );
}

#[test]
fn broken_current_and_manifest_files_are_errors() {
    let (db, _) = database();
    let version = live_version(&db.0).unwrap();
    let manifest = version.manifest.clone();
    let bytes = std::fs::read(&manifest).unwrap();
    let current = db.0.join("CURRENT");
    let current_bytes = std::fs::read(&current).unwrap();
    let expect = |what: &str, needle: &str| {
        let error = live_version(&db.0).expect_err(what).to_string();
        assert!(error.contains(needle), "{what}: {error}");
        eprintln!("{what}: {error}");
    };
    // A flipped byte in the first record's payload.
    let mut flipped = bytes.clone();
    flipped[10] ^= 0x40;
    std::fs::write(&manifest, &flipped).unwrap();
    expect("a flipped byte", "checksum mismatch");
    // Only part of the first record: as LevelDB, the log ends there, with no
    // next-file entry read.
    std::fs::write(&manifest, &bytes[..12]).unwrap();
    expect("a truncated MANIFEST", "no next-file entry");
    std::fs::write(&manifest, &bytes).unwrap();
    // CURRENT without its newline; naming something else; missing; a FIFO.
    std::fs::write(&current, current_bytes.trim_ascii_end()).unwrap();
    expect("CURRENT without a newline", "newline");
    std::fs::write(&current, "../../etc/passwd\n").unwrap();
    expect("CURRENT naming another file", "not a MANIFEST");
    std::fs::remove_file(&current).unwrap();
    expect("no CURRENT", "No such file");
    let path = std::ffi::CString::new(current.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path, valid for the call.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    expect("a FIFO named CURRENT", "a FIFO");
}

/// Log records written by hand as doc/log_format.md lays them out.
fn log_record(out: &mut Vec<u8>, kind: u8, payload: &[u8]) {
    let crc = crc32c::crc32c_append(crc32c::crc32c(&[kind]), payload);
    let masked = crc.rotate_right(15).wrapping_add(0xa282_ead8);
    out.extend_from_slice(&masked.to_le_bytes());
    out.extend_from_slice(&(payload.len() as u16).to_le_bytes());
    out.push(kind);
    out.extend_from_slice(payload);
}

#[test]
fn log_records_are_assembled_across_blocks() {
    let mut log = Vec::new();
    log_record(&mut log, 1, b"first");
    // A record of 40,000 bytes: FIRST to the end of the first block, then LAST.
    let big: Vec<u8> = (0..40_000u32).map(|i| i as u8).collect();
    let room = 32768 - log.len() - 7;
    log_record(&mut log, 2, &big[..room]);
    log_record(&mut log, 4, &big[room..]);
    // Six bytes left in the second block would be padding; a FULL record after.
    let mut reader = LogReader::new(&log[..]);
    assert_eq!(reader.next_record().unwrap().unwrap().1, b"first");
    assert_eq!(reader.next_record().unwrap().unwrap().1, big);
    assert!(reader.next_record().unwrap().is_none());
    // A LAST with no FIRST, an unknown type: errors with their offsets.
    let mut bad = Vec::new();
    log_record(&mut bad, 4, b"orphan");
    assert!(LogReader::new(&bad[..]).next_record().is_err());
    let mut bad = Vec::new();
    log_record(&mut bad, 9, b"?");
    assert!(LogReader::new(&bad[..]).next_record().is_err());
    // A record cut by the end of the file: the end of the log, as in LevelDB.
    assert!(LogReader::new(&log[..20]).next_record().unwrap().unwrap().1 == b"first");
    let mut cut = LogReader::new(&log[..20]);
    cut.next_record().unwrap();
    assert!(cut.next_record().unwrap().is_none());
}

#[test]
fn version_edits_decode_every_tag_and_reject_the_rest() {
    let mut edit = Vec::new();
    edit.extend_from_slice(&[1, 26]);
    edit.extend_from_slice(b"leveldb.BytewiseComparator");
    edit.extend_from_slice(&[2, 5, 9, 4, 3, 7, 4, 100]);
    edit.extend_from_slice(&[6, 1, 3]);
    edit.extend_from_slice(&[7, 2, 8, 200, 1, 9]);
    edit.extend_from_slice(b"a\x01\0\0\0\0\0\0\0");
    edit.extend_from_slice(&[9]);
    edit.extend_from_slice(b"z\x01\0\0\0\0\0\0\0");
    let decoded = decode_edit(&edit).unwrap();
    assert_eq!(decoded.log_number, Some(5));
    assert_eq!(decoded.prev_log_number, Some(4));
    assert_eq!(decoded.next_file, Some(7));
    assert_eq!(decoded.last_sequence, Some(100));
    assert_eq!(decoded.deleted, [(1, 3)]);
    assert_eq!(decoded.added[0].number, 8);
    assert_eq!(decoded.added[0].size, 200);
    assert_eq!(decoded.added[0].largest.user_key(), b"z");
    assert!(decode_edit(&[8, 1])
        .unwrap_err()
        .to_string()
        .contains("unknown tag 8"));
    assert!(decode_edit(&[6, 7, 1])
        .unwrap_err()
        .to_string()
        .contains("level 7"));
    assert!(decode_edit(&[7, 1, 2]).is_err());
    assert!(decode_edit(&[1, 200]).is_err());
}
