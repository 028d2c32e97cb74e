//! Auditing one table: which writer's bits its filters hold, and which of its keys
//! a reader of the filter's name would miss. The table is read a block at a time:
//! each data block's keys are checked against the filter LevelDB would consult for
//! them, then dropped.

pub mod bloom2;
pub mod command;
pub mod dialect;
pub mod readers;
pub mod report;
mod walk;

use leveldb_bloom::hash::{bloom_hash_with, TailBytes};
use leveldb_bloom::Filter;
use leveldb_table::{each_user_key_of, FilterBlock, Lookup, ReadAt, Table};
use serde::Serialize;

use crate::audit::dialect::Dialect;
use crate::audit::readers::Readings;
use crate::audit::walk::Walk;
use crate::command_line::Reader;

/// Random absent keys tested per table for the measured false-positive rate.
pub const FP_SAMPLES: usize = 10_000;

/// What the audit found in one table.
#[derive(Debug, Serialize)]
pub struct TableReport {
    pub file: String,
    /// The table's level in the database's current version, when read from its MANIFEST.
    pub level: Option<u32>,
    pub filter_name: Option<String>,
    pub dialect: Dialect,
    pub filters: usize,
    /// Entries of the data blocks: each value and each deletion of a key.
    pub entries: usize,
    /// User keys in the table, each counted once however many entries it has here.
    pub distinct_user_keys: usize,
    pub missed: usize,
    /// The consulted filters' bits per key they cover, k bytes left out: what the
    /// writer's bits per key gave (a requested bits per key is an integer, named
    /// `bits_per_key`). In JSON, `bits_per_key`, as the report has always named it.
    #[serde(rename = "bits_per_key")]
    pub measured_bits_per_key: f64,
    /// The filter block's bits per entry of the table, everything counted: the k
    /// bytes, the offset array, empty filters and the 64-bit minimum of small ones:
    /// what the table's filters cost in memory (well above `measured_bits_per_key` when a
    /// 2 KiB filter covers few keys).
    pub true_bits_per_key: f64,
    /// The filter block's length, offset array included.
    pub filter_block_bytes: usize,
    pub k: Option<u8>,
    pub filter_bytes: usize,
    /// The share of random absent keys, in percent, that the filters answer "may
    /// match" ([`FP_SAMPLES`] keys, each against a filter drawn in proportion to the
    /// keys it covers): measured on this table's filters, not a formula.
    pub false_positive_percent: Option<f64>,
    /// The missed keys in hex, each its first 64 bytes, "…" after them if longer;
    /// at most the `--max-missed` first (`missed` counts them all).
    pub missed_keys: Vec<String>,
    /// For `leveldb.BuiltinBloomFilter`: the keys its readers with the unsigned hash
    /// (goleveldb, LevelDB before 1.18 on ARM) would miss; in `missed` unless
    /// `--reader` left them out.
    pub missed_by_unsigned_readers: usize,
    /// For `leveldb.BuiltinBloomFilter`: the keys its readers with the signed hash
    /// (HyperLevelDB, LevelDB before 1.18 on x86) would miss; in `missed` unless
    /// `--reader` left them out.
    pub missed_by_signed_readers: usize,
    /// The hash readings whose misses `missed` counts.
    #[serde(skip)]
    pub readings: Readings,
    /// Why LevelDB ignores the table's filter block, when it does (every key then
    /// "may match": nothing is missed).
    pub filter_block_ignored: Option<String>,
}

/// Audits the table read from `source`, reported as `file`, for `readers` (every
/// known reader of the filter's name when empty: [`Readings::of`]), listing at most
/// `max_missed` missed keys; `read` is told the bytes of each data block read.
pub fn audit<R: ReadAt + ?Sized>(
    file: String,
    source: &R,
    max_missed: usize,
    readers: &[Reader],
    read: &dyn Fn(u64),
) -> leveldb_table::Result<TableReport> {
    let table = Table::open(source)?;
    let filter_entry = table
        .first_filter_block()?
        .map(|(name, handle)| (String::from_utf8_lossy(&name).into_owned(), handle));
    let mut report = TableReport {
        file,
        level: None,
        filter_name: None,
        dialect: Dialect::None,
        filters: 0,
        entries: 0,
        distinct_user_keys: 0,
        missed: 0,
        measured_bits_per_key: 0.0,
        true_bits_per_key: 0.0,
        filter_block_bytes: 0,
        k: None,
        filter_bytes: 0,
        false_positive_percent: None,
        missed_keys: Vec::new(),
        missed_by_unsigned_readers: 0,
        missed_by_signed_readers: 0,
        readings: Readings::default(),
        filter_block_ignored: None,
    };
    let filter_block = match &filter_entry {
        Some((_, handle)) => Some(table.read_filter(*handle)?),
        None => None,
    };
    report.filter_block_ignored = (filter_block.as_ref())
        .and_then(|block| block.ignored())
        .map(|e| e.to_string());
    // The filters LevelDB reads: none from a block it ignores.
    let filters = filter_block
        .as_ref()
        .filter(|block| block.ignored().is_none());
    let name = filter_entry.map(|(name, _)| name);
    // Only the filters a data block of this file can be covered by are kept count
    // of: a filter block may claim millions more, which no Get consults.
    let reachable = filters.map_or(0, |f| f.reachable_count(table.file_len()));
    let mut walk = Walk::new(
        name.as_deref(),
        (table.family(), readers),
        filters,
        reachable,
        max_missed,
    );
    let (mut previous_key, mut previous_hash) = (Vec::new(), 0);
    table.for_each_data_block(|handle, block| {
        read(handle.size);
        walk.enter(handle.offset);
        each_user_key_of(block, handle.offset, table.family(), |user_key| {
            let hash = bloom_hash_with(user_key, TailBytes::Unsigned);
            report.entries += 1;
            // Entries of one user key are neighbours; its hash spares most comparisons.
            if report.entries == 1 || hash != previous_hash || previous_key != user_key {
                report.distinct_user_keys += 1;
            }
            previous_key.clear();
            previous_key.extend_from_slice(user_key);
            previous_hash = hash;
            walk.key(user_key, hash);
        })
    })?;
    walk.finish_filter();
    if let Some(block) = &filter_block {
        let len = block.contents().len();
        report.filter_block_bytes = len;
        if report.entries > 0 {
            report.true_bits_per_key = 8.0 * len as f64 / report.entries as f64;
        }
    }
    let Some(name) = name else {
        return Ok(report);
    };
    report.dialect = match filters {
        // Bits Basho's bloom2 finds every key in are its; any other bits lose keys.
        Some(_) if walk.bloom2 && walk.missed.is_empty() => Dialect::BashoBloom2,
        Some(_) if walk.bloom2 => Dialect::Foreign,
        Some(_) => walk
            .writers
            .found(walk.consulted_keys.iter().any(|&n| n > 0)),
        None => Dialect::Foreign,
    };
    (report.missed, report.missed_keys) = (walk.missed.count, walk.missed.keys);
    (
        report.missed_by_unsigned_readers,
        report.missed_by_signed_readers,
    ) = (walk.missed_unsigned, walk.missed_signed);
    report.readings = walk.readings;
    if let Some(filters) = filters {
        // bloom2's false positives are not LevelDB's, and filters no reader reads
        // let nothing through: neither is measured.
        let measured = walk.readings.any() && !walk.bloom2;
        summarize_filters(&mut report, filters, &walk.consulted_keys, measured);
    }
    report.filter_name = Some(name);
    Ok(report)
}

/// The filters' count, bytes, bits per key, k, and measured false-positive rate.
fn summarize_filters(
    report: &mut TableReport,
    filters: &FilterBlock,
    consulted_keys: &[usize],
    measured: bool,
) {
    report.filters = filters.count();
    let consulted = consulted_filters(filters, consulted_keys);
    report.filter_bytes = consulted
        .iter()
        .map(|(f, _)| f.len())
        .fold(0, usize::saturating_add);
    report.k = consulted.iter().find_map(|(f, _)| f.last().copied());
    let (measured_bits_per_key, false_positive_percent) = measure(&consulted);
    report.measured_bits_per_key = measured_bits_per_key;
    if measured {
        report.false_positive_percent = false_positive_percent;
    }
}

/// The filters of `filters` that LevelDB consults (neither empty nor invalid), each
/// with the keys it covers (`consulted_keys`, by filter index).
pub fn consulted_filters<'a>(
    filters: &'a FilterBlock,
    consulted_keys: &[usize],
) -> Vec<(&'a [u8], usize)> {
    (0..consulted_keys.len())
        .filter_map(|i| match filters.lookup(i) {
            Lookup::Filter(filter) => Some((filter, consulted_keys[i])),
            _ => None,
        })
        .collect()
}

/// The bits per key of `consulted` filters (each with the keys it covers; the k
/// byte left out), and the measured false-positive rate in percent when they cover
/// keys.
pub fn measure(consulted: &[(&[u8], usize)]) -> (f64, Option<f64>) {
    let bits: usize = consulted
        .iter()
        .map(|(f, _)| 8 * f.len().saturating_sub(1))
        .fold(0, usize::saturating_add);
    let keys: usize = consulted.iter().map(|&(_, n)| n).sum();
    if keys == 0 {
        return (0.0, None);
    }
    (
        bits as f64 / keys as f64,
        Some(100.0 * false_positives(consulted, keys)),
    )
}

/// The share of random absent keys the filters answer "may match", each filter asked
/// in proportion to the keys it covers (as the Gets of absent keys spread over a
/// table's key range: the samples are spread evenly over the keys). An absent key's
/// hash is taken as a random 32-bit value, which is what LevelDB's hash makes of
/// keys the filter has not seen.
pub fn false_positives(consulted: &[(&[u8], usize)], keys: usize) -> f64 {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let (mut positives, mut filter, mut covered) = (0, 0, consulted[0].1);
    for sample in 0..FP_SAMPLES {
        let key = sample * keys / FP_SAMPLES;
        while key >= covered {
            filter += 1;
            covered += consulted[filter].1;
        }
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let hash = (state >> 32) as u32;
        positives += usize::from(Filter::new(consulted[filter].0).may_contain_hash(hash));
    }
    positives as f64 / FP_SAMPLES as f64
}

#[cfg(test)]
mod tests;
