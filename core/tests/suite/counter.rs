//! Counting from Rust: a `Counter` counts exactly what was done through it, from any
//! number of threads, and the crate counts nothing by itself.

use leveldb_bloom::{BloomFilterPolicy, Counter, Counts, Filter};

#[test]
fn counts_equal_what_was_done_through_the_counter() {
    let policy = BloomFilterPolicy::new(10);
    let keys: Vec<String> = (0..500).map(|i| format!("key{i}")).collect();
    let absent: Vec<String> = (0..500).map(|i| format!("absent{i}")).collect();
    let counter = Counter::default();

    policy.build_filter(&keys);
    Filter::new(&[0, 1]).may_contain("uncounted");
    assert_eq!(
        counter.counts(),
        Counts::default(),
        "only what goes through it"
    );

    let filter = counter.build_filter(&policy, &keys);
    let decoded = Filter::new(&filter);
    let one_key_absent = absent
        .iter()
        .filter(|key| !counter.may_contain(&decoded, key))
        .count() as u64;
    let mut results = vec![false; absent.len()];
    let batch_absent = counter.may_contain_batch(&decoded, &absent, &mut results) as u64;
    assert_eq!(batch_absent, results.iter().filter(|&&r| !r).count() as u64);
    assert!(!counter.may_contain(&Filter::new(&[0]), "by rule"));

    assert_eq!(
        counter.counts(),
        Counts {
            queries: 1000 + 1,
            absent: one_key_absent + batch_absent + 1,
            may_match: 1000 - one_key_absent - batch_absent,
            by_rule: 1,
            filters_built: 1,
            keys_added: 500,
            filter_bytes: filter.len() as u64,
        }
    );
}

#[test]
fn threads_count_into_one_counter() {
    let filter = BloomFilterPolicy::new(10).build_filter(["key"]);
    let decoded = Filter::new(&filter);
    let counter = Counter::default();
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for _ in 0..1000 {
                    assert!(counter.may_contain(&decoded, "key"));
                }
            });
        }
    });
    let counts = counter.counts();
    assert_eq!((counts.queries, counts.may_match), (4000, 4000));
    assert_eq!(
        counts + counts,
        Counts {
            queries: 8000,
            may_match: 8000,
            ..counts
        }
    );
}
