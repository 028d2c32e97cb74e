//! `leveldb-bloom show`: one self-contained HTML page that draws LevelDB's real
//! filters (a table's, or a playground's built from given keys) as grids of bits,
//! and lets a person ask them about keys. The page computes LevelDB's hash, probes
//! and filter building itself (show/page.js); the tests prove in a browser that it
//! gives this library's bytes and answers.

use std::path::Path;

use leveldb_bloom::{BloomFilterPolicy, LEGACY_POLICY_NAME, POLICY_NAME};
use leveldb_table::{FilterBlock, Lookup, ReadAt, Table};
use serde::Serialize;

const TEMPLATE: &str = include_str!("show/page.html");
const SCRIPT: &str = include_str!("show/page.js");
/// Keys of a table embedded in its page: beyond, only the chosen filter's keys are.
const MAX_EMBEDDED_KEYS: usize = 200_000;

/// A filter as the page shows it.
#[derive(Serialize)]
pub struct ShownFilter {
    pub index: usize,
    /// The data-block offsets it covers: `[index << base_lg, (index + 1) << base_lg)`.
    pub data_start: u64,
    pub data_end: u64,
    /// Its bytes in hex (k is the last byte); `None` where LevelDB consults no filter.
    pub hex: Option<String>,
    /// What LevelDB does without the bits, when it does (`absent`, `may match`).
    pub rule: Option<&'static str>,
    /// The user keys of the data blocks it covers, in hex; `None` when not embedded.
    pub keys: Option<Vec<String>>,
    pub key_count: usize,
}

/// Everything the page draws.
#[derive(Serialize)]
pub struct PageData {
    /// `table` or `playground`.
    pub mode: &'static str,
    pub title: String,
    pub filter_name: Option<String>,
    pub bits_per_key: Option<u32>,
    pub filters: Vec<ShownFilter>,
    /// The filter shown first.
    pub chosen: usize,
    /// A key to ask about when the page opens, in hex.
    pub key: Option<String>,
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The page for `data`: the template with the data and the script in it.
pub fn page(data: &PageData) -> String {
    // `</` inside a script element would end it: JSON lets `/` be escaped.
    let json = serde_json::to_string(data)
        .expect("plain data")
        .replace("</", "<\\/");
    TEMPLATE
        .replace("/*PAGE_DATA*/", &json)
        .replace("/*PAGE_SCRIPT*/", SCRIPT)
}

/// The playground: the filter LevelDB builds for `keys` at `bits_per_key`, asked
/// about `key` when the page opens.
pub fn playground(bits_per_key: u32, keys: &[Vec<u8>], key: Option<&[u8]>) -> PageData {
    let filter = BloomFilterPolicy::new(bits_per_key).build_filter(keys);
    PageData {
        mode: "playground",
        title: format!("{} keys, {bits_per_key} bits per key", keys.len()),
        filter_name: Some(POLICY_NAME.to_string()),
        bits_per_key: Some(bits_per_key),
        filters: vec![ShownFilter {
            index: 0,
            data_start: 0,
            data_end: 0,
            hex: Some(hex(&filter)),
            rule: None,
            keys: Some(keys.iter().map(|k| hex(k)).collect()),
            key_count: keys.len(),
        }],
        chosen: 0,
        key: key.map(hex),
    }
}

/// A table's filters, with the keys each covers; `chosen` the one shown first (or
/// the one covering `key`'s block, or the first with keys).
pub fn from_table(
    path: &Path,
    chosen: Option<usize>,
    key: Option<&[u8]>,
) -> Result<PageData, String> {
    let file =
        leveldb_table::open_regular_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
    table_page(&path.display().to_string(), &file, chosen, key)
        .map_err(|e| format!("{}: {e}", path.display()))
}

fn table_page<R: ReadAt + ?Sized>(
    title: &str,
    source: &R,
    chosen: Option<usize>,
    key: Option<&[u8]>,
) -> Result<PageData, String> {
    let table = Table::open(source).map_err(|e| e.to_string())?;
    let (name, handle) = [POLICY_NAME, LEGACY_POLICY_NAME]
        .into_iter()
        .find_map(|name| Some((name, table.filter_block_handle(name).ok()??)))
        .ok_or("the table has no filter block of LevelDB's (leveldb.BuiltinBloomFilter2 or the legacy name)")?;
    let block = table.block(handle).map_err(|e| e.to_string())?;
    let filters = FilterBlock::parse(&block, handle.offset)
        .map_err(|e| format!("LevelDB ignores this filter block: {e}"))?;
    let keys = table.keys_by_filter(&filters).map_err(|e| e.to_string())?;
    let total: usize = keys.iter().map(Vec::len).sum();
    let key_filter = match key {
        Some(key) => Some(filter_of_key(&table, &filters, key)?),
        None => None,
    };
    let chosen = chosen
        .or(key_filter)
        .or_else(|| keys.iter().position(|k| !k.is_empty()))
        .unwrap_or(0);
    if chosen >= filters.count().max(1) {
        return Err(format!(
            "no filter {chosen}: the table has {}",
            filters.count()
        ));
    }
    let span = |i: usize| (i as u64) << filters.base_lg;
    let shown = (0..filters.count())
        .map(|i| {
            let (hex_bytes, rule) = match filters.lookup(i) {
                Lookup::Filter(bytes) => (Some(hex(bytes)), None),
                Lookup::Absent => (None, Some("absent")),
                Lookup::MayMatch => (None, Some("may match")),
            };
            let embed = total <= MAX_EMBEDDED_KEYS || i == chosen;
            ShownFilter {
                index: i,
                data_start: span(i),
                data_end: span(i + 1),
                hex: hex_bytes,
                rule,
                keys: embed.then(|| keys[i].iter().map(|k| hex(k)).collect()),
                key_count: keys[i].len(),
            }
        })
        .collect();
    Ok(PageData {
        mode: "table",
        title: title.to_string(),
        filter_name: Some(name.to_string()),
        bits_per_key: None,
        filters: shown,
        chosen,
        key: key.map(hex),
    })
}

/// The filter LevelDB consults for `key` in `table`: the one covering the data block
/// the index leads the key to.
fn filter_of_key<R: ReadAt + ?Sized>(
    table: &Table<'_, R>,
    filters: &FilterBlock,
    key: &[u8],
) -> Result<usize, String> {
    let index = table.block(table.index).map_err(|e| e.to_string())?;
    let mut found = None;
    leveldb_table::each_entry(&index, table.index.offset, |separator, value| {
        let user = &separator[..separator
            .len()
            .saturating_sub(leveldb_table::INTERNAL_KEY_TAG_LEN)];
        if found.is_none() && user >= key {
            found = Some(leveldb_table::handle_value(value, table.index.offset)?);
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    let handle = found.ok_or("the key sorts after the table's last block")?;
    Ok(filters.index_of(handle.offset))
}
