//! Properties of the safe core that hold for every input, checked on generated key
//! sets, bits_per_key values and filter bytes (proptest; failures shrink to a
//! minimal case). The byte-for-byte agreement with LevelDB itself is checked by the
//! C++ harnesses against the real library; these are the rules that need no reference.
//!
//! The generators are in `strategy`, shared by every property.

use leveldb_bloom::{BloomFilterPolicy, Filter, MATCH_ALL_FILTER};
use proptest::prelude::*;

mod strategy {
    use proptest::collection::vec;
    use proptest::prelude::*;

    /// Keys of 0 to 40 arbitrary bytes, duplicates possible.
    pub fn key() -> impl Strategy<Value = Vec<u8>> {
        vec(any::<u8>(), 0..40)
    }

    /// 0 to 300 keys, so every filter size from the 64-bit minimum upwards occurs.
    pub fn key_set() -> impl Strategy<Value = Vec<Vec<u8>>> {
        vec(key(), 0..300)
    }

    /// Mostly the usual range, where k grows with bits_per_key, and sometimes far above.
    pub fn bits_per_key() -> impl Strategy<Value = u32> {
        prop_oneof![4 => 0u32..=64, 1 => 65u32..=2000]
    }

    /// Any bits_per_key at all, for properties that build no filter.
    pub fn any_bits_per_key() -> impl Strategy<Value = u32> {
        prop_oneof![bits_per_key(), any::<u32>(), Just(u32::MAX)]
    }

    /// Any bytes as a filter: 0 to 300 of them, with the k byte (the last) often one
    /// of the values where LevelDB's reading changes.
    pub fn filter_bytes() -> impl Strategy<Value = Vec<u8>> {
        let k = prop_oneof![
            any::<u8>(),
            prop::sample::select(vec![0u8, 1, 29, 30, 31, 0x80, 0xff])
        ];
        (vec(any::<u8>(), 0..300), k).prop_map(|(mut bytes, k)| {
            if let Some(last) = bytes.last_mut() {
                *last = k;
            }
            bytes
        })
    }
}

/// The length LevelDB builds: max(64, n × bits_per_key) bits in whole bytes,
/// plus the k byte; `None` when the bit count does not fit LevelDB's 64-bit `size_t`
/// or the length exceeds what memory can address.
fn promised_len(num_keys: usize, bits_per_key: u32) -> Option<usize> {
    let bits = (num_keys as u128 * u128::from(bits_per_key)).max(64);
    let len = bits.div_ceil(8) + 1;
    (bits <= u128::from(u64::MAX) && len <= isize::MAX as u128).then_some(len as usize)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_added_key_matches(keys in strategy::key_set(), bits_per_key in strategy::bits_per_key()) {
        let policy = BloomFilterPolicy::new(bits_per_key);
        let filter = policy.build_filter(&keys);
        let reader = Filter::new(&filter);
        for key in &keys {
            prop_assert!(reader.may_contain(key), "false negative for {key:?}");
            prop_assert!(policy.key_may_match(key, &filter));
        }
    }

    #[test]
    fn built_filter_length_follows_the_formula(keys in strategy::key_set(), bits_per_key in strategy::bits_per_key()) {
        let policy = BloomFilterPolicy::new(bits_per_key);
        let filter = policy.build_filter(&keys);
        prop_assert_eq!(Some(filter.len()), promised_len(keys.len(), bits_per_key));
        prop_assert_eq!(filter.last().copied(), Some(policy.num_probes()));
    }

    #[test]
    fn filter_len_follows_the_formula(num_keys in any::<usize>(), bits_per_key in strategy::any_bits_per_key()) {
        prop_assert_eq!(
            BloomFilterPolicy::new(bits_per_key).filter_len(num_keys),
            promised_len(num_keys, bits_per_key)
        );
    }

    #[test]
    fn filter_agrees_with_key_may_match(
        filter in strategy::filter_bytes(),
        keys in proptest::collection::vec(strategy::key(), 1..20),
        bits_per_key in strategy::any_bits_per_key(),
    ) {
        // The policy's own settings play no part in reading a filter.
        let policy = BloomFilterPolicy::new(bits_per_key);
        let reader = Filter::new(&filter);
        for key in &keys {
            prop_assert_eq!(reader.may_contain(key), policy.key_may_match(key, &filter));
            prop_assert_eq!(reader.may_contain(key), BloomFilterPolicy::new(10).key_may_match(key, &filter));
        }
    }

    #[test]
    fn short_and_reserved_filters_answer_as_documented(filter in strategy::filter_bytes(), key in strategy::key()) {
        let answer = Filter::new(&filter).may_contain(&key);
        match filter.len() {
            0 | 1 => prop_assert!(!answer, "a filter shorter than 2 bytes answers no"),
            _ if filter[filter.len() - 1] == 0 || filter[filter.len() - 1] > 30 => prop_assert!(answer),
            _ => {}
        }
        prop_assert!(Filter::new(&MATCH_ALL_FILTER).may_contain(&key));
    }

    #[test]
    fn write_append_and_create_agree(
        keys in strategy::key_set(),
        bits_per_key in strategy::bits_per_key(),
        prefix in strategy::key(),
    ) {
        let policy = BloomFilterPolicy::new(bits_per_key);
        let created = policy.build_filter(&keys);
        let mut appended = prefix.clone();
        policy.append_filter(&keys, &mut appended);
        prop_assert_eq!(&appended[..prefix.len()], &prefix[..]);
        prop_assert_eq!(&appended[prefix.len()..], &created[..]);
        // write_filter overwrites whatever the buffer held.
        let mut written = vec![0xa5; created.len()];
        prop_assert!(policy.write_filter(&keys, &mut written).is_ok());
        prop_assert_eq!(written, created);
    }

    #[test]
    fn batch_answers_as_one_key_at_a_time(
        filter in prop_oneof![
            strategy::filter_bytes(),
            (strategy::key_set(), strategy::bits_per_key())
                .prop_map(|(keys, bpk)| BloomFilterPolicy::new(bpk).build_filter(&keys)),
        ],
        keys in proptest::collection::vec(strategy::key(), 0..100),
    ) {
        let reader = Filter::new(&filter);
        let mut results = vec![false; keys.len()];
        reader.may_contain_batch(&keys, &mut results);
        for (key, &batch) in keys.iter().zip(&results) {
            prop_assert_eq!(batch, reader.may_contain(key), "key {:?}", key);
        }
    }
}
