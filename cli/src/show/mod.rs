//! `leveldb-bloom show`: one self-contained HTML page that draws LevelDB's real
//! filters (a table's, or a playground's built from given keys) as grids of bits,
//! and lets a person ask them about keys. The page computes LevelDB's hash, probes
//! and filter building itself (show/page.js); the tests prove in a browser that it
//! gives this library's bytes and answers.

pub mod command;

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use leveldb_bloom::{BloomFilterPolicy, LEGACY_POLICY_NAME, POLICY_NAME};
use leveldb_table::internal_key::{lookup_key, MAX_SEQUENCE};
use leveldb_table::{FilterBlock, Lookup, ReadAt, Table};
use serde::Serialize;

use crate::hex::hex;

const TEMPLATE: &str = include_str!("page.html");
const SCRIPT: &str = include_str!("page.js");
/// Keys of a table embedded in its page: beyond, only the chosen filter's keys are.
pub const MAX_EMBEDDED_KEYS: usize = 200_000;
/// Bytes of keys embedded in a page, likewise (the chosen filter's keys are left
/// out too when they alone are more).
pub const MAX_EMBEDDED_KEY_BYTES: usize = 32 << 20;
/// The most filter bytes a page draws: 64 MiB, the filters of some 50 million keys
/// at 10 bits per key (a table's, or a playground's). A table's filters are also
/// refused when they add up to more than their filter block: LevelDB's never
/// overlap, and a crafted block's offsets could make every filter the whole block.
pub const MAX_PAGE_FILTER_BYTES: usize = 64 << 20;
/// The playground's largest bits per key: LevelDB's k stops growing at 30, from 44
/// bits per key on; past 100, only the filter's size grows.
pub const MAX_PLAYGROUND_BITS_PER_KEY: u32 = 100;

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

/// The page for `data`: the template with the data and the script in it.
pub fn page(data: &PageData) -> String {
    // Inside a script element, `</script`, `<!--` and `<script` change how the HTML
    // parser reads on; `<` occurs in JSON only inside strings, where `\u003c` is the
    // same character. The data goes in last, so nothing in it is taken for the
    // template's other placeholder.
    let json = serde_json::to_string(data)
        .expect("plain data")
        .replace('<', "\\u003c");
    let (before, after) = TEMPLATE
        .split_once("/*PAGE_DATA*/")
        .expect("the template has the data's place");
    let after = after.replacen("/*PAGE_SCRIPT*/", SCRIPT, 1);
    format!("{before}{json}{after}")
}

/// The playground: the filter LevelDB builds for `keys` at `bits_per_key`, asked
/// about `key` when the page opens; refused past [`MAX_PLAYGROUND_BITS_PER_KEY`]
/// or [`MAX_PAGE_FILTER_BYTES`], saying what LevelDB would build.
pub fn playground(bits_per_key: u32, keys: &[Vec<u8>], key: Option<&[u8]>) -> Result<PageData> {
    let policy = BloomFilterPolicy::new(bits_per_key);
    let n = keys.len();
    let what_leveldb_builds = || {
        match policy.filter_len(n) {
        Some(len) if (n as u64).saturating_mul(bits_per_key.into()) <= i32::MAX as u64 => {
            format!(
                "LevelDB would build a filter of {len} bytes for these {n} keys, k = {}",
                policy.num_probes()
            )
        }
        _ => format!(
            "LevelDB computes {n} keys × {bits_per_key} bits in an int, which overflows (undefined behaviour)"
        ),
    }
    };
    if bits_per_key > MAX_PLAYGROUND_BITS_PER_KEY {
        bail!(
            "--bits-per-key {bits_per_key}: {}; the playground draws 0 to {MAX_PLAYGROUND_BITS_PER_KEY} bits per key (k stops growing at 30, from 44 on)",
            what_leveldb_builds()
        );
    }
    if policy
        .filter_len(n)
        .is_none_or(|len| len > MAX_PAGE_FILTER_BYTES)
    {
        bail!(
            "{}; a page draws at most {MAX_PAGE_FILTER_BYTES} bytes of filter",
            what_leveldb_builds()
        );
    }
    let filter = policy.build_filter(keys);
    if policy.filter_len(n) != Some(filter.len()) {
        bail!("{}, which could not be built here", what_leveldb_builds());
    }
    Ok(PageData {
        mode: "playground",
        title: format!("{n} keys, {bits_per_key} bits per key"),
        filter_name: Some(POLICY_NAME.to_string()),
        bits_per_key: Some(bits_per_key),
        filters: vec![ShownFilter {
            index: 0,
            data_start: 0,
            data_end: 0,
            hex: Some(hex(&filter)),
            rule: None,
            keys: Some(keys.iter().map(|k| hex(k)).collect()),
            key_count: n,
        }],
        chosen: 0,
        key: key.map(hex),
    })
}

/// A table's filters, with the keys each covers; `chosen` the one shown first (or
/// the one covering `key`'s block, or the first with keys).
pub fn from_table(path: &Path, chosen: Option<usize>, key: Option<&[u8]>) -> Result<PageData> {
    let named = |e: &dyn std::fmt::Display| anyhow!("{}: {e}", path.display());
    let file = leveldb_table::open_regular_file(path).map_err(|e| named(&e))?;
    table_page(&path.display().to_string(), &file, chosen, key).map_err(|e| named(&e))
}

/// The page's data for the table in `source`, titled `title`. Bounded by the file:
/// only the filters a data block of it can be covered by are shown (see
/// [`FilterBlock::reachable_count`]), their bytes up to the filter block's and
/// [`MAX_PAGE_FILTER_BYTES`],
/// and keys are embedded up to [`MAX_EMBEDDED_KEYS`] and
/// [`MAX_EMBEDDED_KEY_BYTES`] (counted in a first pass, collected in a second).
pub fn table_page<R: ReadAt + ?Sized>(
    title: &str,
    source: &R,
    chosen: Option<usize>,
    key: Option<&[u8]>,
) -> Result<PageData> {
    let table = Table::open(source)?;
    let (name, filters) = leveldb_filter_block(&table)?;
    if let Some(e) = filters.ignored() {
        bail!("LevelDB ignores this filter block: {e}");
    }
    let block_len = filters.contents().len();
    let reachable = filters.reachable_count(table.file_len());
    let filter_bytes: usize = (0..reachable)
        .map(|i| match filters.lookup(i) {
            Lookup::Filter(bytes) => bytes.len(),
            _ => 0,
        })
        .fold(0, usize::saturating_add);
    if filter_bytes > block_len {
        bail!(
            "the filters add up to {filter_bytes} bytes in a filter block of {block_len}: its offsets make them overlap, which LevelDB never writes; not drawn"
        );
    }
    if filter_bytes > MAX_PAGE_FILTER_BYTES {
        bail!(
            "the filters add up to {filter_bytes} bytes, more than a page draws ({MAX_PAGE_FILTER_BYTES})"
        );
    }
    // Keys and key bytes per filter.
    let mut sizes = vec![(0usize, 0usize); reachable];
    each_covered_key(&table, reachable, &filters, |i, key| {
        sizes[i].0 += 1;
        sizes[i].1 += key.len();
    })?;
    let key_filter = match key {
        Some(key) => Some(filter_of_key(&table, &filters, key)?),
        None => None,
    };
    let chosen = chosen
        .or(key_filter)
        .or_else(|| sizes.iter().position(|&(n, _)| n > 0))
        .unwrap_or(0);
    if chosen >= reachable.max(1) {
        bail!(
            "no filter {chosen}: the table's data blocks are covered by {reachable} (its filter block counts {})",
            filters.count()
        );
    }
    let (total_keys, total_bytes) = sizes
        .iter()
        .fold((0, 0), |(n, b), &(kn, kb)| (n + kn, b + kb));
    let embed_all = total_keys <= MAX_EMBEDDED_KEYS && total_bytes <= MAX_EMBEDDED_KEY_BYTES;
    let embedded = |i: usize| embed_all || (i == chosen && sizes[i].1 <= MAX_EMBEDDED_KEY_BYTES);
    let mut keys: Vec<Option<Vec<String>>> =
        (0..reachable).map(|i| embedded(i).then(Vec::new)).collect();
    each_covered_key(&table, reachable, &filters, |i, key| {
        if let Some(keys) = &mut keys[i] {
            keys.push(hex(key));
        }
    })?;
    let span = |i: usize| (i as u64) << filters.base_lg();
    let shown = keys
        .into_iter()
        .enumerate()
        .map(|(i, keys)| {
            let (hex_bytes, rule) = match filters.lookup(i) {
                Lookup::Filter(bytes) => (Some(hex(bytes)), None),
                Lookup::Absent => (None, Some("absent")),
                Lookup::MayMatch => (None, Some("may match")),
            };
            ShownFilter {
                index: i,
                data_start: span(i),
                data_end: span(i + 1),
                hex: hex_bytes,
                rule,
                keys,
                key_count: sizes[i].0,
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

/// The filter block LevelDB reads (`filter.leveldb.BuiltinBloomFilter2`), or the
/// legacy name's, and the name; an unreadable metaindex is said as such, not as "no
/// filter".
fn leveldb_filter_block<R: ReadAt + ?Sized>(
    table: &Table<'_, R>,
) -> Result<(&'static str, FilterBlock)> {
    for name in [POLICY_NAME, LEGACY_POLICY_NAME] {
        let found = table
            .filter_block_handle(name)
            .map_err(|e| anyhow!("the metaindex block cannot be read: {e}"))?;
        if let Some(handle) = found {
            return Ok((name, table.read_filter(handle)?));
        }
    }
    bail!("the table has no filter block of LevelDB's (leveldb.BuiltinBloomFilter2 or the legacy name)")
}

/// Calls `visit` with the index of the filter covering each user key of the table
/// (those of the first `reachable` filters), block by block, holding one block.
fn each_covered_key<R: ReadAt + ?Sized>(
    table: &Table<'_, R>,
    reachable: usize,
    filters: &FilterBlock,
    mut visit: impl FnMut(usize, &[u8]),
) -> leveldb_table::Result<()> {
    table.for_each_data_block(|handle, block| {
        let i = filters.index_of(handle.offset);
        if i >= reachable {
            return Ok(());
        }
        leveldb_table::each_user_key(block, handle.offset, |key| visit(i, key))
    })
}

/// The filter LevelDB consults for `key` in `table`: the one covering the data block
/// a Get of the key reads.
fn filter_of_key<R: ReadAt + ?Sized>(
    table: &Table<'_, R>,
    filters: &FilterBlock,
    key: &[u8],
) -> Result<usize> {
    let handle = table
        .seek(&lookup_key(key, MAX_SEQUENCE))?
        .ok_or_else(|| anyhow!("the key sorts after the table's last block"))?;
    Ok(filters.index_of(handle.offset))
}

#[cfg(test)]
mod tests;
