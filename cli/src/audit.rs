//! Auditing one table: which writer's bits its filters hold, and which of its keys
//! a reader of the filter's name would miss.

use std::collections::BTreeMap;

use leveldb_bloom::hash::{hash_with, tail_is_ambiguous, TailBytes};
use leveldb_bloom::{BloomFilterPolicy, Filter, LEGACY_POLICY_NAME, POLICY_NAME};
use serde::Serialize;

use leveldb_table::{entries, handle_value, FilterBlock, Table, TableError};

const SEED: u32 = 0xbc9f1d34;
/// RocksDB's retired block-based filter: LevelDB's layout, the signed hash.
const ROCKSDB_BLOCK_BASED: &str = "rocksdb.BuiltinBloomFilter";
/// Random absent keys tested per table for the measured false-positive rate.
const FP_SAMPLES: usize = 10_000;
/// Bytes of a missed key shown in hex.
const SHOWN_KEY_BYTES: usize = 64;

/// Whose bits a table's filters hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Dialect {
    /// `leveldb.BuiltinBloomFilter2`, byte for byte LevelDB ≥ 1.18's.
    Leveldb,
    /// `leveldb.BuiltinBloomFilter` with the unsigned hash: LevelDB < 1.18 on ARM, goleveldb.
    LegacyUnsigned,
    /// `leveldb.BuiltinBloomFilter` with the signed hash: LevelDB < 1.18 on x86.
    LegacySigned,
    /// `leveldb.BuiltinBloomFilter` with both readings set: this library's legacy policy.
    LegacyBoth,
    /// A name this tool knows, with bits matching none of the above (basho's bloom2…).
    Foreign,
    /// A filter name this tool does not know.
    UnknownName,
    /// No filter block.
    None,
}

impl Dialect {
    pub fn name(self) -> &'static str {
        match self {
            Self::Leveldb => "leveldb",
            Self::LegacyUnsigned => "legacy-unsigned",
            Self::LegacySigned => "legacy-signed",
            Self::LegacyBoth => "legacy-both",
            Self::Foreign => "foreign",
            Self::UnknownName => "unknown-name",
            Self::None => "none",
        }
    }
}

/// What the audit found in one table.
#[derive(Debug, Serialize)]
pub struct TableReport {
    pub file: String,
    pub filter_name: Option<String>,
    pub dialect: Dialect,
    pub filters: usize,
    pub keys: usize,
    pub missed: usize,
    pub bits_per_key: f64,
    pub k: Option<u8>,
    pub filter_bytes: usize,
    pub fp_measured: Option<f64>,
    pub fp_theory: Option<f64>,
    /// The missed keys in hex, each its first 64 bytes, "…" after them if longer.
    pub missed_keys: Vec<String>,
    /// For `leveldb.BuiltinBloomFilter`: keys that LevelDB before 1.18 on x86 (the
    /// signed reading) would miss besides. A warning, not a failure: that reader is
    /// long retired, while goleveldb and this library's legacy policy read the name.
    pub missed_by_old_x86_leveldb: usize,
}

/// The hash reading of the readers of filter `name` today, whose misses fail the
/// audit: LevelDB ≥ 1.18 for `leveldb.BuiltinBloomFilter2`; goleveldb (and
/// this library's legacy policy) for `leveldb.BuiltinBloomFilter`; RocksDB for its
/// block-based filter. `None` for a name no reader here knows.
fn reader(name: &str) -> Option<TailBytes> {
    match name {
        POLICY_NAME | LEGACY_POLICY_NAME => Some(TailBytes::Unsigned),
        ROCKSDB_BLOCK_BASED => Some(TailBytes::Signed),
        _ => None,
    }
}

/// A filter as LevelDB's reader takes it (`None`: it answers "may match" without
/// one), and the user keys of the data blocks it covers.
type Covered<'a> = (Option<&'a [u8]>, Vec<&'a [u8]>);

/// Audits the table file `data`, reported as `file`.
pub fn audit(file: String, data: &[u8]) -> Result<TableReport, TableError> {
    let table = Table::open(data)?;
    let metaindex = table.block(table.metaindex)?;
    let filter_entry = entries(&metaindex, table.metaindex.offset)?
        .into_iter()
        .find_map(|(key, value)| Some((key.strip_prefix(b"filter.")?.to_vec(), value.to_vec())));
    let index = table.block(table.index)?;
    // User keys by the data block offset they start at.
    let mut blocks = Vec::new();
    for (_, value) in entries(&index, table.index.offset)? {
        let handle = handle_value(value, table.index.offset)?;
        let block = table.block(handle)?;
        let keys = entries(&block, handle.offset)?
            .into_iter()
            .map(|(mut key, _)| {
                key.truncate(key.len().saturating_sub(8));
                key
            })
            .collect::<Vec<_>>();
        blocks.push((handle.offset, keys));
    }
    let keys = blocks.iter().map(|(_, keys)| keys.len()).sum();
    let mut report = TableReport {
        file,
        filter_name: None,
        dialect: Dialect::None,
        filters: 0,
        keys,
        missed: 0,
        bits_per_key: 0.0,
        k: None,
        filter_bytes: 0,
        fp_measured: None,
        fp_theory: None,
        missed_keys: Vec::new(),
        missed_by_old_x86_leveldb: 0,
    };
    let Some((name, handle)) = filter_entry else {
        return Ok(report);
    };
    let name = String::from_utf8_lossy(&name).into_owned();
    let handle = handle_value(&handle, table.metaindex.offset)?;
    let block = table.block(handle)?;
    let filters = FilterBlock::parse(&block, handle.offset)?;
    // The keys each filter covers: those of the data blocks starting in its range.
    let mut covered: BTreeMap<usize, Vec<&[u8]>> = BTreeMap::new();
    for (offset, keys) in &blocks {
        let entry = covered.entry(filters.index_of(*offset)).or_default();
        entry.extend(keys.iter().map(Vec::as_slice));
    }
    let groups: Vec<Covered> = covered
        .into_iter()
        .map(|(i, keys)| (filters.filter(i), keys))
        .collect();

    report.filters = filters.count();
    report.filter_bytes = (0..filters.count())
        .filter_map(|i| filters.filter(i))
        .map(<[u8]>::len)
        .sum();
    let bits: usize = (0..filters.count())
        .filter_map(|i| filters.filter(i))
        .map(|f| 8 * f.len().saturating_sub(1))
        .sum();
    report.bits_per_key = if keys == 0 {
        0.0
    } else {
        bits as f64 / keys as f64
    };
    report.k = groups
        .iter()
        .find_map(|(f, _)| f.and_then(|f| f.last().copied()));
    report.dialect = dialect(&name, &groups);
    let found = |filter: &Filter, key: &[u8], reading| {
        filter.may_contain_hash(hash_with(key, SEED, reading))
    };
    for (filter, keys) in &groups {
        // No filter where LevelDB's reader would consult one: it answers "may match".
        let Some(filter) = filter.map(Filter::new) else {
            continue;
        };
        for key in keys {
            if reader(&name).is_some_and(|reading| !found(&filter, key, reading)) {
                report.missed += 1;
                report.missed_keys.push(shown(key));
            }
            if name == LEGACY_POLICY_NAME && !found(&filter, key, TailBytes::Signed) {
                report.missed_by_old_x86_leveldb += 1;
            }
        }
    }
    if let Some(reading) = reader(&name) {
        let (measured, theory) = false_positives(&groups, reading);
        report.fp_measured = measured;
        report.fp_theory = theory;
    }
    report.filter_name = Some(name);
    Ok(report)
}

fn shown(key: &[u8]) -> String {
    let mut hex: String = key
        .iter()
        .take(SHOWN_KEY_BYTES)
        .map(|b| format!("{b:02x}"))
        .collect();
    if key.len() > SHOWN_KEY_BYTES {
        hex.push('…');
    }
    hex
}

/// The writer whose bits every filter holds, trying each `bits_per_key` that gives
/// the filters their lengths and k.
fn dialect(name: &str, groups: &[Covered]) -> Dialect {
    let candidates: &[Dialect] = match name {
        POLICY_NAME => &[Dialect::Leveldb],
        LEGACY_POLICY_NAME => &[
            Dialect::LegacyUnsigned,
            Dialect::LegacySigned,
            Dialect::LegacyBoth,
        ],
        ROCKSDB_BLOCK_BASED => &[],
        _ => return Dialect::UnknownName,
    };
    let built = |dialect: Dialect, policy: BloomFilterPolicy, keys: &[&[u8]], out: &mut [u8]| {
        let hashes = |reading| keys.iter().map(move |key| hash_with(key, SEED, reading));
        match dialect {
            Dialect::Leveldb | Dialect::LegacyUnsigned => {
                policy.write_filter_of_hashes(hashes(TailBytes::Unsigned), out)
            }
            Dialect::LegacySigned => policy.write_filter_of_hashes(hashes(TailBytes::Signed), out),
            _ => BloomFilterPolicy::legacy(policy.bits_per_key()).write_filter(keys.iter(), out),
        }
        .is_ok()
    };
    // With no key whose tail the readings disagree on, unsigned and signed are one.
    let ambiguous = groups
        .iter()
        .any(|(_, keys)| keys.iter().any(|k| tail_is_ambiguous(k)));
    for &dialect in candidates {
        if !ambiguous && dialect != candidates[0] {
            break;
        }
        for bits_per_key in 0..=100 {
            let policy = BloomFilterPolicy::new(bits_per_key);
            let mut out = Vec::new();
            // Filters LevelDB's reader would not consult (bad offsets) prove nothing.
            let mut consulted = groups
                .iter()
                .filter_map(|(f, keys)| Some((f.as_ref()?, keys)));
            let mut any = false;
            let matches = consulted.all(|(filter, keys)| {
                any = true;
                policy.filter_len(keys.len()) == Some(filter.len())
                    && filter.last() == Some(&policy.num_probes())
                    && {
                        out.clear();
                        out.resize(filter.len(), 0);
                        built(dialect, policy, keys, &mut out) && out == **filter
                    }
            });
            if matches && any {
                return dialect;
            }
        }
    }
    Dialect::Foreign
}

/// The false-positive rate of random absent keys against the filters, measured
/// (under `reading`) and in theory, `(1 - e^(-kn/m))^k`, averaged the same way.
fn false_positives(groups: &[Covered], reading: TailBytes) -> (Option<f64>, Option<f64>) {
    let probed: Vec<_> = groups
        .iter()
        .filter_map(|(filter, keys)| Some((Filter::new((*filter)?), *filter.as_ref()?, keys.len())))
        .filter(|(_, bytes, _)| bytes.len() >= 2)
        .collect();
    if probed.is_empty() {
        return (None, None);
    }
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let (mut positives, mut theory) = (0usize, 0.0);
    for sample in 0..FP_SAMPLES {
        let (filter, bytes, n) = probed[sample % probed.len()];
        // Random keys behind a prefix no real table is likely to hold: were one
        // present after all, it would count as a false positive, by 1/FP_SAMPLES.
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut key = *b"leveldb-bloom-fp:........";
        key[17..].copy_from_slice(&state.to_le_bytes());
        positives += usize::from(filter.may_contain_hash(hash_with(&key, SEED, reading)));
        let (k, m) = (
            f64::from(*bytes.last().unwrap()),
            8.0 * (bytes.len() - 1) as f64,
        );
        theory += if k == 0.0 || k > 30.0 {
            1.0
        } else {
            (1.0 - (-k * n as f64 / m).exp()).powf(k)
        };
    }
    (
        Some(positives as f64 / FP_SAMPLES as f64),
        Some(theory / FP_SAMPLES as f64),
    )
}
