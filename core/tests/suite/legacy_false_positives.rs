//! What the legacy policy's safety costs in false positives, at 10 bits per key:
//! a key with a tail byte ≥ 0x80 sets the bits of two hashes, and an absent such key
//! is tried under two. Printed as the README's table (`cargo test --release --test
//! legacy_false_positives -- --nocapture`), each figure checked against the
//! standard bloom filter estimate, and keys without such bytes shown to cost nothing.

use leveldb_bloom::hash::tail_is_ambiguous;
use leveldb_bloom::{BloomFilterPolicy, Filter};

const BITS_PER_KEY: u32 = 10;
const NUM_KEYS: u32 = 10_000;
const NUM_ABSENT: u32 = 1_000_000;
const FIRST_ABSENT: u32 = 1_000_000_000;

/// LevelDB's test key (the number as 4 little-endian bytes) and one tail byte, ≥ 0x80
/// when `high`: every key has a 1-byte tail.
fn key(i: u32, high: bool) -> [u8; 5] {
    let [a, b, c, d] = i.to_le_bytes();
    [a, b, c, d, (i & 0x7f) as u8 | if high { 0x80 } else { 0 }]
}

/// The false-positive rate of `policy`'s filter of `NUM_KEYS` keys, `high_per_mille`
/// of them with a high tail byte, for absent keys with (`absent_high`) or without one.
fn rate(policy: BloomFilterPolicy, high_per_mille: u32, absent_high: bool) -> f64 {
    let keys: Vec<[u8; 5]> = (0..NUM_KEYS)
        .map(|i| key(i, i % 1000 < high_per_mille))
        .collect();
    let bytes = policy.build_filter(&keys);
    let filter = Filter::with_format(&bytes, policy.format());
    assert!(keys.iter().all(|k| filter.may_contain(k)), "a key was lost");
    let hits = (FIRST_ABSENT..FIRST_ABSENT + NUM_ABSENT)
        .filter(|&i| filter.may_contain(key(i, absent_high)))
        .count();
    hits as f64 / f64::from(NUM_ABSENT)
}

/// The estimate (1 - e^(-k·s/b))^k for one hash reading, s hash readings set per key
/// on average; an absent key tried under `tries` readings matches under any.
fn estimate(sets_per_key: f64, tries: i32) -> f64 {
    let (k, b) = (6.0, f64::from(BITS_PER_KEY));
    let one = (1.0 - (-k * sets_per_key / b).exp()).powf(k);
    1.0 - (1.0 - one).powi(tries)
}

#[test]
fn legacy_false_positive_cost() {
    let (current, legacy) = (
        BloomFilterPolicy::new(BITS_PER_KEY),
        BloomFilterPolicy::legacy(BITS_PER_KEY),
    );
    assert!(tail_is_ambiguous(&key(1, true)) && !tail_is_ambiguous(&key(1, false)));
    println!("| keys with a high tail byte | absent keys | current | legacy | estimate |");
    println!("|---:|---|---:|---:|---:|");
    for high_per_mille in [0, 100, 500, 1000] {
        for absent_high in [false, true] {
            let (ours, legacy_rate) = (
                rate(current, high_per_mille, absent_high),
                rate(legacy, high_per_mille, absent_high),
            );
            let sets_per_key = 1.0 + f64::from(high_per_mille) / 1000.0;
            let expected = estimate(sets_per_key, if absent_high { 2 } else { 1 });
            println!(
                "| {}% | {} | {:.2}% | {:.2}% | {:.2}% |",
                high_per_mille / 10,
                if absent_high {
                    "high tail"
                } else {
                    "plain tail"
                },
                ours * 100.0,
                legacy_rate * 100.0,
                expected * 100.0
            );
            if high_per_mille == 0 && !absent_high {
                // The same filter and the same single reading: no cost at all.
                assert_eq!(legacy_rate, ours);
            }
            assert!(
                (legacy_rate - expected).abs() < expected * 0.15,
                "{legacy_rate} vs {expected}"
            );
        }
    }
}
