//! Filter statistics from Rust: the counts equal what the program did, per format.
//! One test in its own binary: the counts are the whole process's.

use leveldb_bloom::{stats, BloomFilterPolicy, Filter};

#[test]
fn counts_equal_what_the_program_did() {
    let policy = BloomFilterPolicy::new(10);
    let legacy = BloomFilterPolicy::legacy(10);
    let keys: Vec<String> = (0..500).map(|i| format!("key{i}")).collect();
    let absent: Vec<String> = (0..500).map(|i| format!("absent{i}")).collect();

    policy.build_filter(&keys);
    assert_eq!(
        stats::snapshot(),
        stats::Stats::default(),
        "off until enabled"
    );

    stats::enable();
    let filter = policy.build_filter(&keys);
    let legacy_filter = legacy.build_filter(&keys);
    let decoded = Filter::new(&filter);
    let one_key_absent = absent
        .iter()
        .filter(|key| !decoded.may_contain(key))
        .count() as u64;
    let mut results = vec![false; absent.len()];
    decoded.may_contain_batch(&absent, &mut results);
    let batch_absent = results.iter().filter(|&&r| !r).count() as u64;
    assert!(keys
        .iter()
        .all(|key| legacy.key_may_match(key, &legacy_filter)));
    assert!(!Filter::new(&[0]).may_contain("by rule"));

    let now = stats::snapshot();
    stats::disable();
    assert_eq!(
        now.current,
        stats::Counts {
            queries: 1000 + 1,
            absent: one_key_absent + batch_absent + 1,
            may_match: 1000 - one_key_absent - batch_absent,
            by_rule: 1,
            filters_built: 1,
            keys_added: 500,
            filter_bytes: filter.len() as u64,
        }
    );
    assert_eq!(
        now.legacy,
        stats::Counts {
            queries: 500,
            absent: 0,
            may_match: 500,
            by_rule: 0,
            filters_built: 1,
            keys_added: 500,
            filter_bytes: legacy_filter.len() as u64,
        }
    );
    assert_eq!(now.total().queries, 1501);
    stats::reset();
    assert_eq!(stats::snapshot(), stats::Stats::default());
}
