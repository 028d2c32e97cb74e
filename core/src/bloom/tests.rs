use super::probe::{all_set, probes};
use super::*;
use crate::bit_position::Unreduced;
use crate::format::MATCH_ALL_FILTER;
use crate::hash::bloom_hash;
use crate::simd::SimdLevel;

// Values of LevelDB's k: bits_per_key × 0.69, truncated, clamped to 1..=30; the
// reference harness (c_tests/) checks every bits_per_key against the real library.
#[test]
fn probes_follow_bits_per_key() {
    let k = |bpk| BloomFilterPolicy::new(bpk).num_probes();
    for (bpk, expected) in [(0, 1), (1, 1), (2, 1), (3, 2), (10, 6), (43, 29), (44, 30)] {
        assert_eq!(k(bpk), expected, "bits_per_key {bpk}");
    }
    for bpk in 0..=100u32 {
        let expected = ((f64::from(bpk) * 0.69) as u8).clamp(1, 30);
        assert_eq!(k(bpk), expected, "bits_per_key {bpk}");
        assert!(bpk == 0 || k(bpk) >= k(bpk - 1));
    }
    assert_eq!(k(u32::MAX), 30);
}

#[test]
fn filter_sizes() {
    let policy = BloomFilterPolicy::new(10);
    // 64-bit minimum, then whole bytes, then the k byte.
    assert_eq!(policy.filter_len(0), Some(9));
    assert_eq!(policy.filter_len(6), Some(9));
    assert_eq!(policy.filter_len(7), Some(10));
    assert_eq!(policy.filter_len(1000), Some(1251));
    assert_eq!(BloomFilterPolicy::new(3).filter_len(22), Some(10));
    assert_eq!(BloomFilterPolicy::new(0).filter_len(1_000_000), Some(9));
    assert_eq!(
        BloomFilterPolicy::new(u32::MAX).filter_len(usize::MAX),
        None
    );
    for n in 0..2000 {
        let len = policy.build_filter(vec![[0u8; 4]; n]).len();
        assert_eq!(Some(len), policy.filter_len(n));
    }
}

#[test]
fn leveldb_examples() {
    let policy = BloomFilterPolicy::new(10);
    let filter = policy.build_filter(&["hello", "world"]);
    assert_eq!(
        filter,
        [0x11, 0x40, 0x00, 0x41, 0x44, 0x10, 0x40, 0x10, 0x06]
    );
    let empty: [&[u8]; 0] = [];
    assert_eq!(policy.build_filter(&empty), [0, 0, 0, 0, 0, 0, 0, 0, 6]);
    assert!(policy.key_may_match(b"hello", &filter));
    assert!(policy.key_may_match(b"world", &filter));
    assert!(!policy.key_may_match(b"x", &policy.build_filter(&empty)));
}

#[test]
fn foreign_filters() {
    let m = |filter: &[u8]| Filter::new(filter).may_contain(b"key");
    assert!(!m(&[]));
    assert!(!m(&[0x00]));
    assert!(!m(&[0xff]));
    assert!(!m(&[0x00, 0x1e]));
    assert!(m(&[0x00, 0x1f]));
    assert!(m(&[0x00, 0x80]));
    assert!(m(&[0x00, 0xff]));
    assert!(m(&[0x00, 0x00]));
    assert!(m(&MATCH_ALL_FILTER));
    assert!(m(&[0xff, 0x1e]));
}

/// `Format::answer` answers as `key_may_match` does, and says "by rule" exactly for
/// the filters that answer by rule, in both formats, on filters of every shape.
#[test]
fn answers_say_how_they_were_reached() {
    let built = BloomFilterPolicy::new(10).build_filter(["key", "other"]);
    let legacy = BloomFilterPolicy::legacy(10).build_filter(["key"]);
    let filters: [&[u8]; 9] = [
        &[],
        &[0x00],
        &[0x00, 0x1e],
        &[0x00, 0x1f],
        &[0xff, 0x00],
        &[0xff, 0x06],
        &MATCH_ALL_FILTER,
        &built,
        &legacy,
    ];
    for format in [Format::Current, Format::Legacy] {
        for filter in filters {
            for key in [&b"key"[..], b"absent", b""] {
                let answer = format.answer(key, filter);
                assert_eq!(answer.may_match, format.key_may_match(key, filter));
                let by_rule = Filter::with_format(filter, format).answers_by_rule();
                assert_eq!(answer.by_rule, by_rule, "{filter:?}");
            }
        }
    }
}

#[test]
fn write_filter_checks_length() {
    let policy = BloomFilterPolicy::new(10);
    let mut short = [0u8; 8];
    assert_eq!(
        policy.write_filter(["a"], &mut short),
        Err(WrongFilterLength)
    );
    let mut exact = [0xaau8; 9];
    assert_eq!(policy.write_filter(["a"], &mut exact), Ok(()));
    assert_eq!(exact.to_vec(), policy.build_filter(&["a"]));
}

#[test]
fn added_keys_always_match() {
    for bpk in [0, 1, 5, 10, 20, 64] {
        let policy = BloomFilterPolicy::new(bpk);
        let keys: Vec<Vec<u8>> = (0u32..3000)
            .map(|i| i.to_le_bytes().repeat(i as usize % 7))
            .collect();
        let filter = policy.build_filter(&keys);
        let reader = Filter::new(&filter);
        assert!(
            keys.iter().all(|k| reader.may_contain(k)),
            "bits_per_key {bpk}"
        );
    }
}

/// Keys of many lengths (0..=120, so every SIMD group mixes chunk counts and tails)
/// and every byte value, from a fixed seed.
fn mixed_keys(count: usize, seed: u32) -> Vec<Vec<u8>> {
    let mut state = seed;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    };
    (0..count)
        .map(|i| {
            let len = match i % 4 {
                0 => 16,
                1 => 100,
                _ => next() as usize % 121,
            };
            (0..len).map(|_| next() as u8).collect()
        })
        .collect()
}

/// Per key, scalar: the filter `set_all` builds one key at a time.
fn filter_one_key_at_a_time(policy: &BloomFilterPolicy, keys: &[Vec<u8>]) -> Vec<u8> {
    let mut filter = vec![0; policy.filter_len(keys.len()).unwrap()];
    let (k, array) = filter.split_last_mut().unwrap();
    *k = policy.num_probes();
    let BitCount::Small(bits) = BitCount::new(array.len()) else {
        unreachable!("small test filters");
    };
    for key in keys {
        set_all(array, bloom_hash(key), policy.num_probes(), bits);
    }
    filter
}

#[test]
fn every_level_builds_the_same_filter() {
    for level in SimdLevel::each_available() {
        for (bpk, n) in [
            (10, 0),
            (10, 1),
            (10, 63),
            (10, 64),
            (10, 65),
            (1, 500),
            (7, 3000),
            (40, 2000),
        ] {
            let policy = BloomFilterPolicy::new(bpk);
            let keys = mixed_keys(n, 0x1234 + n as u32);
            let mut filter = vec![0xa5; policy.filter_len(n).unwrap()];
            policy.write_filter_at(&keys, &mut filter, level).unwrap();
            assert_eq!(
                filter,
                filter_one_key_at_a_time(&policy, &keys),
                "{:?}, bits_per_key {bpk}, {n} keys",
                level.name()
            );
        }
    }
}

#[test]
fn every_level_answers_batches_as_one_key_at_a_time() {
    let policy = BloomFilterPolicy::new(10);
    let present = mixed_keys(2000, 1);
    let absent = mixed_keys(5000, 2);
    let filter = policy.build_filter(&present);
    let mut foreign = vec![0x5au8; 300];
    let mut filters: Vec<Vec<u8>> = vec![filter, vec![], vec![0], vec![0, 0], vec![0xff, 31]];
    for k in [1, 6, 30] {
        foreign[299] = k;
        filters.push(foreign.clone());
    }
    let queries: Vec<&Vec<u8>> = present.iter().chain(&absent).collect();
    for level in SimdLevel::each_available() {
        for filter in &filters {
            let reader = Filter::new(filter);
            let expected: Vec<bool> = queries.iter().map(|key| reader.may_contain(key)).collect();
            for window in [1, 15, 16, 17, 64, 65, 1000, queries.len()] {
                let mut results = vec![0u8; window];
                for start in (0..queries.len()).step_by(window.max(997)) {
                    let keys = &queries[start..(start + window).min(queries.len())];
                    let results = &mut results[..keys.len()];
                    let slices = keys.iter().map(|key| key.as_slice());
                    reader.batch_at(batch::EachKey(slices), results, level);
                    let expected = &expected[start..start + keys.len()];
                    assert!(
                        results
                            .iter()
                            .zip(expected)
                            .all(|(&r, &e)| r == u8::from(e)),
                        "{:?}, filter of {} bytes, keys {start}..",
                        level.name(),
                        filter.len()
                    );
                }
            }
        }
    }
}

#[test]
fn batches_through_the_public_api() {
    let policy = BloomFilterPolicy::new(10);
    let keys = mixed_keys(300, 3);
    let filter = policy.build_filter(&keys[..100]);
    let reader = Filter::new(&filter);
    let mut results = vec![false; keys.len()];
    reader.may_contain_batch(&keys, &mut results);
    assert!(results[..100].iter().all(|&r| r));
    for (key, result) in keys.iter().zip(&results) {
        assert_eq!(*result, reader.may_contain(key));
    }
    let empty: [&[u8]; 0] = [];
    reader.may_contain_batch(&empty, &mut [false; 0]);
}

#[test]
#[should_panic(expected = "one result per key")]
fn batch_needs_one_result_per_key() {
    Filter::new(&MATCH_ALL_FILTER).may_contain_batch(&["a", "b"], &mut [false]);
}

/// Filters of 2^32 bits or more take the unreduced path: h itself is the position.
/// A 512 MiB filter is too much for a unit test, so the probe functions run on a
/// 1 MiB array with hashes whose probes stay in it: h = 2^22 + j·2^17 has δ = 32 + j.
#[test]
fn unreduced_probes_are_the_hash_itself() {
    let mut array = vec![0u8; 1 << 20];
    for j in 0..8u32 {
        let h = (1 << 22) + (j << 17);
        let positions: Vec<u32> = (0..6).map(|i| h + i * (32 + j)).collect();
        let located: Vec<(usize, u32)> = probes(h, 6, Unreduced).collect();
        let expected: Vec<(usize, u32)> =
            positions.iter().map(|&p| (p as usize / 8, p % 8)).collect();
        assert_eq!(located, expected);
        assert!(!all_set(&array, h, 6, Unreduced));
        set_all(&mut array, h, 6, Unreduced);
        assert!(all_set(&array, h, 6, Unreduced));
        for p in positions {
            assert_ne!(array[p as usize / 8] & (1 << (p % 8)), 0);
        }
    }
}
