//! Crafting LevelDB files byte by byte for tests that attack the tool: blocks of
//! entries, tables of such blocks (stored or zstd-compressed), log files of
//! records (the MANIFEST and the write-ahead log), and version edits.

use leveldb_table::masked_crc;

pub fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A block of `entries` (key, value), each whole (no shared prefix), one restart.
pub fn block(entries: &[(&[u8], &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, value) in entries {
        out.push(0);
        varint(key.len() as u64, &mut out);
        varint(value.len() as u64, &mut out);
        out.extend_from_slice(key);
        out.extend_from_slice(value);
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    out
}

/// A block handle's encoding (two varints).
pub fn handle(offset: u64, size: u64) -> Vec<u8> {
    let mut out = Vec::new();
    varint(offset, &mut out);
    varint(size, &mut out);
    out
}

/// An internal key: `user` and a value tag of sequence 1.
pub fn internal(user: &[u8]) -> Vec<u8> {
    let mut key = user.to_vec();
    key.extend_from_slice(&(1u64 << 8 | 1).to_le_bytes());
    key
}

/// A table file being written: blocks appended with their trailers.
#[derive(Default)]
pub struct TableBytes(pub Vec<u8>);

impl TableBytes {
    /// Appends `contents` stored as is; its handle (offset, size).
    pub fn stored(&mut self, contents: &[u8]) -> (u64, u64) {
        self.put(contents, 0)
    }

    /// Appends `contents` compressed with zstd (type 2, as LevelDB 1.23 writes it).
    pub fn zstd(&mut self, contents: &[u8]) -> (u64, u64) {
        self.put(&zstd::bulk::compress(contents, 19).unwrap(), 2)
    }

    fn put(&mut self, raw: &[u8], kind: u8) -> (u64, u64) {
        let at = self.0.len() as u64;
        self.0.extend_from_slice(raw);
        self.0.push(kind);
        self.0
            .extend_from_slice(&masked_crc(raw, kind).to_le_bytes());
        (at, raw.len() as u64)
    }

    /// The file: a metaindex naming `filter` (a filter block's name and handle),
    /// the index block's handle, the footer.
    pub fn finish(mut self, filter: Option<(&[u8], (u64, u64))>, index: (u64, u64)) -> Vec<u8> {
        let metaindex = match filter {
            Some((name, (offset, size))) => self.stored(&block(&[(name, &handle(offset, size))])),
            None => self.stored(&block(&[])),
        };
        self.0
            .extend_from_slice(&super::table_footer(metaindex, index));
        self.0
    }
}

/// A table of one data block holding `keys`, with a filter block named
/// `filter_name` of `filter_block`'s contents (zstd-compressed) and an index of one
/// entry; `index` replaces the index block's contents when given.
pub fn table(
    keys: &[&[u8]],
    filter_name: &[u8],
    filter_block: &[u8],
    index: Option<&[u8]>,
) -> Vec<u8> {
    let mut t = TableBytes::default();
    let internal_keys: Vec<Vec<u8>> = keys.iter().map(|k| internal(k)).collect();
    let entries: Vec<(&[u8], &[u8])> = internal_keys
        .iter()
        .map(|k| (k.as_slice(), &b"v"[..]))
        .collect();
    let data = t.stored(&block(&entries));
    let filter = t.zstd(filter_block);
    let last = internal(b"\xff\xff");
    let index = match index {
        Some(contents) => t.zstd(contents),
        None => t.stored(&block(&[(&last, &handle(data.0, data.1))])),
    };
    t.finish(Some((filter_name, filter)), index)
}

/// A log file (MANIFEST or write-ahead log) of `records`, fragmented over 32 KiB
/// blocks as LevelDB's `log::Writer` writes them.
pub fn log(records: &[Vec<u8>]) -> Vec<u8> {
    const BLOCK: usize = 32 * 1024;
    let mut out = Vec::new();
    for record in records {
        let mut rest = &record[..];
        let mut first = true;
        loop {
            let left = BLOCK - out.len() % BLOCK;
            if left < 7 {
                out.resize(out.len() + left, 0);
                continue;
            }
            let n = rest.len().min(left - 7);
            let last = n == rest.len();
            let kind = match (first, last) {
                (true, true) => 1,
                (true, false) => 2,
                (false, false) => 3,
                (false, true) => 4,
            };
            let crc = crc32c::crc32c_append(crc32c::crc32c(&[kind]), &rest[..n]);
            let masked = (crc.rotate_right(15)).wrapping_add(0xa282_ead8);
            out.extend_from_slice(&masked.to_le_bytes());
            out.extend_from_slice(&(n as u16).to_le_bytes());
            out.push(kind);
            out.extend_from_slice(&rest[..n]);
            rest = &rest[n..];
            first = false;
            if last {
                break;
            }
        }
    }
    out
}

/// The version edit of a new database: the bytewise comparator, log number
/// `log_number`, next file 1000000, last sequence 1000.
pub fn base_edit(log_number: u64) -> Vec<u8> {
    let mut edit = Vec::new();
    let name = b"leveldb.BytewiseComparator";
    edit.push(1);
    varint(name.len() as u64, &mut edit);
    edit.extend_from_slice(name);
    for (tag, value) in [(2, log_number), (3, 1_000_000), (4, 1000)] {
        edit.push(tag);
        varint(value, &mut edit);
    }
    edit
}

/// A version edit adding table `number` at level 6, keys `a` to `z`.
pub fn add_table(edit: &mut Vec<u8>, number: u64) {
    edit.push(7);
    varint(6, edit);
    varint(number, edit);
    varint(1000, edit);
    for key in [internal(b"a"), internal(b"z")] {
        varint(key.len() as u64, edit);
        edit.extend_from_slice(&key);
    }
}

/// A database directory `dir` made of `records` as its MANIFEST-000001 and CURRENT.
pub fn database(dir: &std::path::Path, records: &[Vec<u8>]) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("MANIFEST-000001"), log(records)).unwrap();
    std::fs::write(dir.join("CURRENT"), "MANIFEST-000001\n").unwrap();
}
