//! The dry run's sums: a level's tables and the whole database's, per choice.

use super::*;

/// A table of `entries` entries whose filters (`filter_bytes`) let `fp` of absent
/// keys through, consulted by a quarter of absent Gets per 100 entries (a level's
/// ranges share the key space); `bits_per_key`: the candidate's, `None` for the
/// current filters.
fn table(bits_per_key: Option<u32>, entries: u64, filter_bytes: u64, fp: f64) -> TableCost {
    TableCost {
        entries,
        fp,
        consulted: entries as f64 / 400.0,
        cost: Cost {
            bits_per_key,
            tables_with_filter: 1,
            filter_bytes,
            ..Cost::default()
        },
    }
}

/// Two tables, each with its current filters and one candidate (10 bits per key).
fn two_tables() -> Vec<TableCost> {
    vec![
        table(None, 100, 0, 1.0),
        table(Some(10), 100, 125, 0.01),
        table(None, 300, 0, 1.0),
        table(Some(10), 300, 375, 0.03),
    ]
}

#[test]
fn a_level_sums_its_tables_per_choice_and_weights_the_rate_by_entries() {
    let level = sum_level(2, &two_tables(), 2);
    assert_eq!(
        (level.level, level.tables, level.entries),
        (Some(2), 2, 400)
    );
    assert_eq!(level.current.bits_per_key, None);
    assert_eq!(level.current.false_positive_percent, 100.0);
    let [candidate] = &level.candidates[..] else {
        panic!("one candidate")
    };
    assert_eq!(candidate.bits_per_key, Some(10));
    assert_eq!(
        (candidate.tables_with_filter, candidate.filter_bytes),
        (2, 500)
    );
    assert_eq!(candidate.true_bits_per_key, 10.0);
    // (100 × 0.01 + 300 × 0.03) / 400 entries.
    assert!((candidate.false_positive_percent - 2.5).abs() < 1e-9);
    // An absent Get consults the table whose range it falls in.
    assert!((candidate.expected_block_reads - 0.025).abs() < 1e-9);
}

#[test]
fn at_level_0_an_absent_get_reads_the_false_positives_of_the_tables_whose_range_holds_it() {
    let mut tables = two_tables();
    // Both ranges hold every key: both tables are consulted.
    tables.iter_mut().for_each(|t| t.consulted = 1.0);
    let level = sum_level(0, &tables, 2);
    assert!((level.candidates[0].expected_block_reads - 0.04).abs() < 1e-9);
    assert_eq!(level.current.expected_block_reads, 2.0);
    // The second table's range holds no key: never consulted.
    tables[2..].iter_mut().for_each(|t| t.consulted = 0.0);
    let level = sum_level(0, &tables, 2);
    assert!((level.candidates[0].expected_block_reads - 0.01).abs() < 1e-9);
    assert_eq!(level.current.expected_block_reads, 1.0);
}

#[test]
fn the_total_adds_the_levels_and_names_each_candidate_by_its_bits() {
    let levels = [
        sum_level(0, &two_tables(), 2),
        sum_level(1, &two_tables(), 2),
    ];
    let total = sum_total(&levels, &[BloomFilterPolicy::new(10)]);
    assert_eq!((total.level, total.tables, total.entries), (None, 4, 800));
    let candidate = &total.candidates[0];
    assert_eq!(candidate.bits_per_key, Some(10));
    assert_eq!(candidate.filter_bytes, 1000);
    assert!((candidate.false_positive_percent - 2.5).abs() < 1e-9);
    assert!((candidate.expected_block_reads - 0.05).abs() < 1e-9);
}

#[test]
fn a_database_without_tables_still_has_a_column_per_candidate_and_says_why() {
    let policies = [BloomFilterPolicy::new(6), BloomFilterPolicy::new(16)];
    let total = sum_total(&[], &policies);
    let bits: Vec<Option<u32>> = total.candidates.iter().map(|c| c.bits_per_key).collect();
    assert_eq!(bits, [Some(6), Some(16)]);
    assert_eq!(total.current.true_bits_per_key, 0.0);
    let report = DryRun {
        database: "db".into(),
        policy: policies[0].name(),
        levels: Vec::new(),
        total,
    };
    let text = report.text();
    assert!(
        text.starts_with("db: what a reader of leveldb.BuiltinBloomFilter2 pays"),
        "{text}"
    );
    assert!(text.contains("total   6 bits"), "{text}");
    assert!(text.contains("no live tables."), "{text}");
}
