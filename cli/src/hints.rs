//! What the tool says on a wrong turn, beyond the bare error: the way that works.

use anyhow::{anyhow, Result};
use std::path::Path;

/// The hint for clap's `error`, where one helps (a key that is not UTF-8: `--hex`).
pub fn of_parse_error(error: &clap::Error) -> Option<&'static str> {
    (error.kind() == clap::error::ErrorKind::InvalidUtf8).then_some(
        "keys are text; a key that is not UTF-8 is given in hex with --hex \
         (`printf 'caf\\351' | od -An -tx1 | tr -d ' '` gives 636166e9)",
    )
}

/// The error for a directory given where one table file is expected (`show`): which
/// files to pass instead.
pub fn table_expected(path: &Path) -> Option<String> {
    if !path.is_dir() {
        return None;
    }
    let mut tables: Vec<String> = std::fs::read_dir(path)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".ldb") || name.ends_with(".sst"))
        .collect();
    tables.sort();
    let example = match tables.first() {
        Some(table) => format!(", e.g. {}", path.join(table).display()),
        None => String::new(),
    };
    Some(format!(
        "{}: a directory; show draws the filters of one table: pass a table file{example} \
         (`leveldb-bloom audit {}` lists the live ones)",
        path.display(),
        path.display()
    ))
}

/// The error for a file given where a database directory is expected (`explain`):
/// the directory to pass instead.
pub fn database_expected(path: &Path) -> Option<String> {
    if path.is_dir() || !path.exists() {
        return None;
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    Some(format!(
        "{}: a file; explain follows keys through a whole database: pass its directory \
         ({}); to see one table's filters, `leveldb-bloom show {} --key KEY -o PAGE.html`",
        path.display(),
        dir.display(),
        path.display()
    ))
}

/// The keys of a `--keys-file`, one a line (a trailing `\r` dropped): their bytes, or,
/// with `hex`, the bytes their hex digits spell; an error names the file and line.
pub fn keys_of_file(
    file: &Path,
    text: &[u8],
    hex: bool,
    parse_hex: impl Fn(&str) -> Result<Vec<u8>>,
) -> Result<Vec<Vec<u8>>> {
    let mut lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|line| line.is_empty()) {
        lines.pop();
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(index, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !hex {
                return Ok(line.to_vec());
            }
            std::str::from_utf8(line)
                .map_err(|_| anyhow!("not hex (not even text)"))
                .and_then(&parse_hex)
                .map_err(|why| anyhow!("{} line {}: {why}", file.display(), index + 1))
        })
        .collect()
}

/// What the reader needs: LevelDB reads a table's filter only with a filter policy
/// of the filters' name, and writes tables with the reader's policy (none: none).
pub fn reader_needs(policy: leveldb_bloom::BloomFilterPolicy) -> &'static str {
    if policy.name() == leveldb_bloom::BloomFilterPolicy::new(10).name() {
        READER_NEEDS
    } else {
        LEGACY_READER_NEEDS
    }
}

const LEGACY_READER_NEEDS: &str = "LevelDB uses these filters only when the program opens the \
database with a filter policy of their name, leveldb.BuiltinBloomFilter (goleveldb's bloom filter; \
leveldb_bloom_legacy_policy_create(N) in C). Without one, LevelDB reads no filter, and its \
compactions write tables without these filters again.";

const READER_NEEDS: &str = "LevelDB uses these filters only when the program opens the database with \
a bloom filter policy: plyvel bloom_filter_bits=N, C leveldb_options_set_filter_policy(options, \
leveldb_filterpolicy_create_bloom(N)), C++ options.filter_policy = leveldb::NewBloomFilterPolicy(N), \
or LEVELDB_BLOOM_DEFAULT_BITS=N with libleveldb_bloom_default_bits.so preloaded (leveldb-bloom run \
--default-bits N). Without one, LevelDB \
reads no filter, and its compactions write tables without filters again.";

/// With no live table: the keys are in the log, which LevelDB writes to a table when
/// the program compacts or its memtable fills.
pub const KEYS_IN_LOG: &str =
    "Its keys, if any, are still in its log: LevelDB writes them to tables when \
the program's memtable fills (write_buffer_size) or when it compacts: plyvel db.compact_range(), \
C leveldb_compact_range(db, NULL, 0, NULL, 0), C++ db->CompactRange(nullptr, nullptr).";
