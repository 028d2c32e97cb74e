//! A database's current version: `CURRENT` names the MANIFEST, a log of version
//! edits whose application in order, as LevelDB 1.23's
//! `VersionSet::Recover` applies them, gives the live tables of each level.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::coding::{get_length_prefixed, get_varint};
use crate::db::log::read_log;
use crate::error::{Error, ErrorKind, Result};
use crate::internal_key::{compare_internal_keys, InternalKey};
use crate::source::open_regular_file;

/// LevelDB's number of levels.
pub const NUM_LEVELS: usize = 7;
/// `CURRENT` holds one file name; anything much longer is not a `CURRENT`.
const MAX_CURRENT_LEN: u64 = 4096;

/// A table of the current version, as a version edit adds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveTable {
    pub level: usize,
    pub number: u64,
    pub size: u64,
    pub smallest: InternalKey,
    pub largest: InternalKey,
}

/// One version edit: what a MANIFEST record changes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct VersionEdit {
    pub comparator: Option<Vec<u8>>,
    pub log_number: Option<u64>,
    pub prev_log_number: Option<u64>,
    pub next_file: Option<u64>,
    pub last_sequence: Option<u64>,
    pub compact_pointers: Vec<(usize, InternalKey)>,
    pub deleted: Vec<(usize, u64)>,
    pub added: Vec<LiveTable>,
}

/// The database's current version: its tables per level, and the numbers LevelDB
/// keeps beside them.
#[derive(Debug)]
pub struct Version {
    pub manifest: PathBuf,
    /// The comparator's name, when the MANIFEST records one (LevelDB always does):
    /// its bytes, as a new MANIFEST must repeat them for LevelDB to open the database.
    pub comparator: Option<Vec<u8>>,
    pub log_number: u64,
    pub prev_log_number: u64,
    pub next_file: u64,
    pub last_sequence: u64,
    /// Where the next compaction of each level starts, as the last edit that set it
    /// says.
    pub compact_pointers: [Option<InternalKey>; NUM_LEVELS],
    pub levels: [Vec<LiveTable>; NUM_LEVELS],
}

impl Version {
    /// The tables of `level` in the order LevelDB's `Version::Get` consults them:
    /// level 0 newest (highest number) first, deeper levels by smallest key.
    pub fn files(&self, level: usize) -> &[LiveTable] {
        &self.levels[level]
    }
}

/// The file of table `number` in `db_dir`: `NNNNNN.ldb`, or `NNNNNN.sst` (the name
/// before LevelDB 1.14, which LevelDB still opens) when only that one exists.
pub fn table_file(db_dir: &Path, number: u64) -> PathBuf {
    let ldb = db_dir.join(format!("{number:06}.ldb"));
    let sst = db_dir.join(format!("{number:06}.sst"));
    if !ldb.exists() && sst.exists() {
        sst
    } else {
        ldb
    }
}

/// The file of table `number` at `level` of `db_dir`: [`table_file`], or, when
/// neither of its names exists, Basho's `sst_<level>/NNNNNN.sst` if that one does
/// (Basho's LevelDB keeps each level's tables in a directory of its own).
pub fn table_file_at_level(db_dir: &Path, level: usize, number: u64) -> PathBuf {
    let file = table_file(db_dir, number);
    let basho = db_dir
        .join(format!("sst_{level}"))
        .join(format!("{number:06}.sst"));
    if !file.exists() && basho.exists() {
        basho
    } else {
        file
    }
}

/// Decodes one MANIFEST record (a `VersionEdit`), as LevelDB's `DecodeFrom`: any
/// unknown tag, a level out of range or a field cut short is an error.
pub fn decode_edit(record: &[u8]) -> Result<VersionEdit> {
    let mut edit = VersionEdit::default();
    let mut pos = 0;
    let bad = |field| Error::new(ErrorKind::BadEditField(field));
    let varint64 = |pos: &mut usize, field| get_varint(record, pos).ok_or_else(|| bad(field));
    let level = |pos: &mut usize, field| {
        let level = get_varint(record, pos)
            .filter(|&l| l <= u64::from(u32::MAX))
            .ok_or_else(|| bad(field))?;
        usize::try_from(level)
            .ok()
            .filter(|&l| l < NUM_LEVELS)
            .ok_or_else(|| Error::new(ErrorKind::EditLevelOutOfRange { field, level }))
    };
    let slice = |pos: &mut usize, field| {
        get_length_prefixed(record, pos)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| bad(field))
    };
    let internal_key = |pos: &mut usize, field| {
        let bytes = slice(pos, field)?;
        if bytes.is_empty() {
            return Err(bad(field));
        }
        Ok(InternalKey(bytes))
    };
    while pos < record.len() {
        let tag = varint64(&mut pos, "tag")?;
        match tag {
            1 => edit.comparator = Some(slice(&mut pos, "comparator name")?),
            2 => edit.log_number = Some(varint64(&mut pos, "log number")?),
            3 => edit.next_file = Some(varint64(&mut pos, "next file number")?),
            4 => edit.last_sequence = Some(varint64(&mut pos, "last sequence number")?),
            5 => {
                let l = level(&mut pos, "compaction pointer")?;
                edit.compact_pointers
                    .push((l, internal_key(&mut pos, "compaction pointer")?));
            }
            6 => {
                let l = level(&mut pos, "deleted file")?;
                edit.deleted.push((l, varint64(&mut pos, "deleted file")?));
            }
            7 => {
                let level = level(&mut pos, "new-file entry")?;
                let number = varint64(&mut pos, "new-file entry")?;
                let size = varint64(&mut pos, "new-file entry")?;
                let smallest = internal_key(&mut pos, "new-file entry")?;
                let largest = internal_key(&mut pos, "new-file entry")?;
                edit.added.push(LiveTable {
                    level,
                    number,
                    size,
                    smallest,
                    largest,
                });
            }
            9 => edit.prev_log_number = Some(varint64(&mut pos, "previous log number")?),
            other => return Err(Error::new(ErrorKind::UnknownEditTag(other))),
        }
    }
    Ok(edit)
}

/// Where a database's files are opened: a directory named by its path (every file
/// looked up by path, symlinks followed), or a handle the caller opened once.
pub trait DatabaseFiles {
    /// The directory as messages name it.
    fn path(&self) -> &Path;
    /// Opens the file `name` of the directory for reading: a regular file, or an
    /// error saying what it is instead.
    fn open_regular(&self, name: &str) -> io::Result<File>;
    /// Whether `name` is a symlink (whose target's contents must not be shown).
    fn is_symlink(&self, name: &str) -> bool;
}

impl DatabaseFiles for Path {
    fn path(&self) -> &Path {
        self
    }

    fn open_regular(&self, name: &str) -> io::Result<File> {
        open_regular_file(&self.join(name))
    }

    fn is_symlink(&self, name: &str) -> bool {
        self.join(name).is_symlink()
    }
}

/// Reads `CURRENT` in `db_dir` and the MANIFEST it names, and applies its edits.
/// Only regular files are read (a FIFO named `CURRENT` is an error, not a hang).
/// The comparator is returned, not checked: that is the caller's to judge.
pub fn live_version(db_dir: &Path) -> Result<Version> {
    live_version_in(db_dir)
}

/// [`live_version`] of the database whose files `db` opens.
pub fn live_version_in<D: DatabaseFiles + ?Sized>(db: &D) -> Result<Version> {
    let db_dir = db.path();
    let current_path = db_dir.join("CURRENT");
    let in_current = |kind| Error::new(kind).in_file(&current_path);
    let mut current = Vec::new();
    db.open_regular("CURRENT")
        .and_then(|file| file.take(MAX_CURRENT_LEN).read_to_end(&mut current))
        .map_err(|e| in_current(ErrorKind::Open(e)))?;
    let name = match current.split_last() {
        Some((b'\n', name)) if !name.is_empty() => name,
        _ => return Err(in_current(ErrorKind::CurrentWithoutNewline)),
    };
    let name = std::str::from_utf8(name)
        .ok()
        .filter(|n| n.starts_with("MANIFEST-") && !n.contains('/'))
        .ok_or_else(|| {
            // What CURRENT holds is shown only when CURRENT is a file of the database
            // itself, and only its start: a CURRENT that is a symlink to another
            // file (a password file) must not have that file printed.
            in_current(if db.is_symlink("CURRENT") {
                ErrorKind::CurrentSymlinkNotManifest { len: current.len() }
            } else {
                ErrorKind::CurrentNamesNoManifest(name.to_vec())
            })
        })?;
    let manifest = db_dir.join(name);
    let in_manifest = |e: Error| e.in_file(&manifest);
    let mut log = db
        .open_regular(name)
        .map(read_log)
        .map_err(|e| in_manifest(Error::new(ErrorKind::Open(e))))?;
    let mut version = Version {
        manifest: manifest.clone(),
        comparator: None,
        log_number: 0,
        prev_log_number: 0,
        next_file: 0,
        last_sequence: 0,
        compact_pointers: Default::default(),
        levels: Default::default(),
    };
    let (mut have_log, mut have_next, mut have_last) = (false, false, false);
    let mut tables: [BTreeMap<u64, LiveTable>; NUM_LEVELS] = Default::default();
    while let Some((offset, record)) = log.next_record().map_err(in_manifest)? {
        let edit = decode_edit(&record).map_err(|e| in_manifest(e.with_offset(offset)))?;
        if let Some(name) = edit.comparator {
            version.comparator = Some(name);
        }
        if let Some(n) = edit.log_number {
            (version.log_number, have_log) = (n, true);
        }
        if let Some(n) = edit.prev_log_number {
            version.prev_log_number = n;
        }
        if let Some(n) = edit.next_file {
            (version.next_file, have_next) = (n, true);
        }
        if let Some(n) = edit.last_sequence {
            (version.last_sequence, have_last) = (n, true);
        }
        for (level, key) in edit.compact_pointers {
            version.compact_pointers[level] = Some(key);
        }
        for (level, number) in edit.deleted {
            tables[level].remove(&number);
        }
        for table in edit.added {
            tables[table.level].insert(table.number, table);
        }
    }
    for (what, have) in [
        ("next-file", have_next),
        ("log-number", have_log),
        ("last-sequence", have_last),
    ] {
        if !have {
            return Err(in_manifest(Error::new(ErrorKind::MissingManifestEntry(
                what,
            ))));
        }
    }
    for (level, tables) in tables.into_iter().enumerate() {
        let mut files: Vec<LiveTable> = tables.into_values().collect();
        if level == 0 {
            files.sort_by_key(|table| std::cmp::Reverse(table.number));
        } else {
            files.sort_by(|a, b| {
                compare_internal_keys(&a.smallest.0, &b.smallest.0).then(a.number.cmp(&b.number))
            });
        }
        version.levels[level] = files;
    }
    Ok(version)
}
