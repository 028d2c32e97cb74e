//! `leveldb-bloom refilter --dry-run`: what the database's filters cost and save
//! now, and what they would with each bits per key asked about, per level and in
//! total, without writing anything. The candidate filters are built in memory as
//! refilter would write them (`FilterBlockBuilder`, the core crate's policy). An
//! absent Get is counted on the tables whose key ranges it falls in (`ranges`).

mod ranges;

use std::path::Path;

use anyhow::{anyhow, Result};
use leveldb_bloom::BloomFilterPolicy;
use leveldb_table::db::manifest::{live_version, table_file, NUM_LEVELS};
use leveldb_table::{each_user_key, FilterBlock, FilterBlockBuilder, ReadAt, Table};
use serde::Serialize;

use crate::audit::{audit, consulted_filters, false_positives};
use crate::database::BYTEWISE;
use crate::hints::KEYS_IN_LOG;
use ranges::RangeCounter;

/// What a set of filters costs and saves.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Cost {
    /// The candidate's bits per key; `None` for the filters the database has.
    pub bits_per_key: Option<u32>,
    /// Tables whose filter LevelDB would consult; with an ignored name (another
    /// policy's); with no filter block at all.
    pub tables_with_filter: usize,
    pub tables_with_ignored_filter: usize,
    pub tables_without_filter: usize,
    /// The filter blocks' bytes, offset arrays and empty filters included (those
    /// LevelDB would consult).
    pub filter_bytes: u64,
    /// `filter_bytes` in bits per entry: what the filters cost in memory.
    pub true_bits_per_key: f64,
    /// The measured share of absent keys a consulted table's filter lets through,
    /// weighted by entries (100 for a table with no filter LevelDB consults).
    pub false_positive_percent: f64,
    /// Data blocks an absent Get reads, summed over the tables it consults (the
    /// level-0 tables whose key range holds it, and at most one table per deeper
    /// level), each read with its false-positive rate; absent keys taken to fall
    /// where the database's keys fall.
    pub expected_block_reads: f64,
}

/// One level's tables, as they are and with each candidate; the whole database's
/// for the total, which has no level.
#[derive(Debug, Serialize)]
pub struct LevelCosts {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<usize>,
    pub tables: usize,
    pub entries: u64,
    pub current: Cost,
    pub candidates: Vec<Cost>,
}

/// The dry run's report.
#[derive(Debug, Serialize)]
pub struct DryRun {
    pub database: String,
    /// The filter name of the reader these costs are for.
    pub policy: &'static str,
    pub levels: Vec<LevelCosts>,
    pub total: LevelCosts,
}

/// One table's cost, before being summed into its level's.
struct TableCost {
    entries: u64,
    fp: f64,
    /// The share of absent Gets that consult the table.
    consulted: f64,
    cost: Cost,
}

/// The dry run over the database in `dir`, for the reader of `policies[0]`'s name,
/// with a candidate per policy.
pub fn dry_run(dir: &Path, policies: &[BloomFilterPolicy]) -> Result<DryRun> {
    let version = live_version(dir)?;
    let name = policies[0].name();
    let bytewise = (version.comparator.as_deref()).is_none_or(|c| c == BYTEWISE.as_bytes());
    let mut ranges = RangeCounter::new(&version.levels, bytewise);
    let mut levels = Vec::new();
    let mut all: Vec<(usize, Vec<TableCost>)> = Vec::new();
    let mut index = 0;
    for level in 0..NUM_LEVELS {
        let mut tables = Vec::new();
        for table in version.files(level) {
            let path = table_file(dir, table.number);
            let named = |e: &dyn std::fmt::Display| anyhow!("{}: {e}", path.display());
            let file = leveldb_table::open_regular_file(&path).map_err(|e| named(&e))?;
            let current = current_cost(&path, &file, name).map_err(|e| named(&e))?;
            let count = &mut |key: &[u8]| ranges.count(key, index);
            let candidates = candidate_costs(&file, policies, count).map_err(|e| named(&e))?;
            tables.push(
                std::iter::once(current)
                    .chain(candidates)
                    .collect::<Vec<_>>(),
            );
            index += 1;
        }
        if !tables.is_empty() {
            all.push((level, tables.into_iter().flatten().collect()));
        }
    }
    let width = policies.len() + 1;
    // Every key read: each table's share of absent Gets is known now.
    let each_table = all
        .iter_mut()
        .flat_map(|(_, costs)| costs.chunks_mut(width));
    for (index, table) in each_table.enumerate() {
        table
            .iter_mut()
            .for_each(|cost| cost.consulted = ranges.share(index));
    }
    for (level, costs) in &all {
        levels.push(sum_level(*level, costs, width));
    }
    let total = sum_total(&levels, policies);
    Ok(DryRun {
        database: dir.display().to_string(),
        policy: name,
        levels,
        total,
    })
}

/// The table's filters as a reader of `name` sees them, from the audit.
fn current_cost(path: &Path, file: &std::fs::File, name: &str) -> leveldb_table::Result<TableCost> {
    let report = audit(path.display().to_string(), file, 0, &[], &|_| {})?;
    let mut cost = Cost::default();
    let consulted =
        report.filter_name.as_deref() == Some(name) && report.filter_block_ignored.is_none();
    let fp = if consulted {
        cost.tables_with_filter = 1;
        cost.filter_bytes = report.filter_block_bytes as u64;
        report.false_positive_percent.unwrap_or(100.0) / 100.0
    } else {
        if report.filter_name.is_some() {
            cost.tables_with_ignored_filter = 1;
        } else {
            cost.tables_without_filter = 1;
        }
        1.0
    };
    Ok(TableCost {
        entries: report.entries as u64,
        fp,
        consulted: 0.0,
        cost,
    })
}

/// The filters each policy would write for the table, built and measured; `count`
/// is shown each user key.
fn candidate_costs<R: ReadAt + ?Sized>(
    source: &R,
    policies: &[BloomFilterPolicy],
    count: &mut dyn FnMut(&[u8]),
) -> leveldb_table::Result<Vec<TableCost>> {
    let table = Table::open(source)?;
    let mut builders: Vec<_> = policies
        .iter()
        .map(|&policy| {
            FilterBlockBuilder::new(move |keys: &[&[u8]], dst: &mut Vec<u8>| {
                policy.append_filter(keys.iter(), dst)
            })
        })
        .collect();
    let mut entries = 0u64;
    table.for_each_data_block(|handle, block| {
        each_user_key(block, handle.offset, |key| {
            builders.iter_mut().for_each(|b| b.add_key(key));
            count(key);
            entries += 1;
        })?;
        let end = handle.end().expect("within the file");
        builders.iter_mut().for_each(|b| b.start_block(end));
        Ok(())
    })?;
    Ok(builders
        .into_iter()
        .zip(policies)
        .map(|(builder, policy)| {
            let (block, keys_per_filter) = builder.finish_counted();
            let filters = FilterBlock::new(block, 0);
            let consulted = consulted_filters(&filters, &keys_per_filter);
            let fp = if entries == 0 {
                0.0
            } else {
                false_positives(&consulted, entries as usize)
            };
            TableCost {
                entries,
                fp,
                consulted: 0.0,
                cost: Cost {
                    bits_per_key: Some(policy.bits_per_key()),
                    tables_with_filter: 1,
                    filter_bytes: filters.contents().len() as u64,
                    ..Cost::default()
                },
            }
        })
        .collect())
}

/// A level's costs: `costs` holds, table after table, the current cost and each
/// candidate's (`width` in all).
fn sum_level(level: usize, costs: &[TableCost], width: usize) -> LevelCosts {
    let column = |c: usize| {
        let column: Vec<&TableCost> = costs.iter().skip(c).step_by(width).collect();
        let entries: u64 = column.iter().map(|t| t.entries).sum();
        let mut cost = column[0].cost.clone();
        cost.tables_with_filter = column.iter().map(|t| t.cost.tables_with_filter).sum();
        cost.tables_with_ignored_filter = column
            .iter()
            .map(|t| t.cost.tables_with_ignored_filter)
            .sum();
        cost.tables_without_filter = column.iter().map(|t| t.cost.tables_without_filter).sum();
        cost.filter_bytes = column.iter().map(|t| t.cost.filter_bytes).sum();
        cost.true_bits_per_key = per_entry(8 * cost.filter_bytes, entries);
        let weighted: f64 = column.iter().map(|t| t.fp * t.entries as f64).sum();
        let fp = if entries == 0 {
            0.0
        } else {
            weighted / entries as f64
        };
        cost.false_positive_percent = 100.0 * fp;
        cost.expected_block_reads = column.iter().map(|t| t.consulted * t.fp).sum();
        (entries, cost)
    };
    let (entries, current) = column(0);
    LevelCosts {
        level: Some(level),
        tables: costs.len() / width,
        entries,
        current,
        candidates: (1..width).map(|c| column(c).1).collect(),
    }
}

/// The whole database's costs: the levels' summed, their false-positive rates
/// weighted by entries; a column per policy after the current filters' (each named
/// by its bits per key, also when no level has tables).
fn sum_total(levels: &[LevelCosts], policies: &[BloomFilterPolicy]) -> LevelCosts {
    let entries: u64 = levels.iter().map(|l| l.entries).sum();
    let column = |c: usize| {
        let costs: Vec<&Cost> = levels
            .iter()
            .map(|l| {
                if c == 0 {
                    &l.current
                } else {
                    &l.candidates[c - 1]
                }
            })
            .collect();
        let mut total = Cost {
            bits_per_key: c.checked_sub(1).map(|p| policies[p].bits_per_key()),
            ..Cost::default()
        };
        for (cost, level) in costs.iter().zip(levels) {
            total.tables_with_filter += cost.tables_with_filter;
            total.tables_with_ignored_filter += cost.tables_with_ignored_filter;
            total.tables_without_filter += cost.tables_without_filter;
            total.filter_bytes += cost.filter_bytes;
            total.expected_block_reads += cost.expected_block_reads;
            total.false_positive_percent += cost.false_positive_percent * level.entries as f64;
        }
        total.false_positive_percent /= entries.max(1) as f64;
        total.true_bits_per_key = per_entry(8 * total.filter_bytes, entries);
        total
    };
    LevelCosts {
        level: None,
        tables: levels.iter().map(|l| l.tables).sum(),
        entries,
        current: column(0),
        candidates: (1..=policies.len()).map(column).collect(),
    }
}

fn per_entry(bits: u64, entries: u64) -> f64 {
    if entries == 0 {
        0.0
    } else {
        bits as f64 / entries as f64
    }
}

impl DryRun {
    /// The report as a table: one row per level and choice, then the totals.
    pub fn text(&self) -> String {
        let mut out = format!(
            "{}: what a reader of {} pays, now and with each bits per key (nothing written)\n\
             {:<7} {:<9} {:>12} {:>10} {:>8} {:>16}  tables consulted / ignored name / no filter\n",
            self.database,
            self.policy,
            "level",
            "choice",
            "filter bytes",
            "true bits",
            "fp %",
            "absent-Get reads"
        );
        for level in self.levels.iter().chain([&self.total]) {
            let shown = level
                .level
                .map_or("total".to_string(), |level| format!("L{level}"));
            for cost in std::iter::once(&level.current).chain(&level.candidates) {
                let choice = cost
                    .bits_per_key
                    .map_or("current".to_string(), |b| format!("{b} bits"));
                out += &format!(
                    "{shown:<7} {choice:<9} {:>12} {:>10.2} {:>8.3} {:>16.4}  {} / {} / {}\n",
                    cost.filter_bytes,
                    cost.true_bits_per_key,
                    cost.false_positive_percent,
                    cost.expected_block_reads,
                    cost.tables_with_filter,
                    cost.tables_with_ignored_filter,
                    cost.tables_without_filter,
                );
            }
        }
        if self.levels.is_empty() {
            out += &format!("no live tables. {KEYS_IN_LOG}\n");
        }
        out
    }
}

#[cfg(test)]
mod tests;
