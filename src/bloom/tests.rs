use super::*;

// Values from LevelDB's util/bloom.cc formula as recorded in shared facts; the
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
        let len = policy.create_filter(&vec![[0u8; 4]; n]).len();
        assert_eq!(Some(len), policy.filter_len(n));
    }
}

#[test]
fn leveldb_examples() {
    let policy = BloomFilterPolicy::new(10);
    let filter = policy.create_filter(&["hello", "world"]);
    assert_eq!(
        filter,
        [0x11, 0x40, 0x00, 0x41, 0x44, 0x10, 0x40, 0x10, 0x06]
    );
    let empty: [&[u8]; 0] = [];
    assert_eq!(policy.create_filter(&empty), [0, 0, 0, 0, 0, 0, 0, 0, 6]);
    assert!(policy.key_may_match(b"hello", &filter));
    assert!(policy.key_may_match(b"world", &filter));
    assert!(!policy.key_may_match(b"x", &policy.create_filter(&empty)));
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
    assert_eq!(exact.to_vec(), policy.create_filter(&["a"]));
}

#[test]
fn added_keys_always_match() {
    for bpk in [0, 1, 5, 10, 20, 64] {
        let policy = BloomFilterPolicy::new(bpk);
        let keys: Vec<Vec<u8>> = (0u32..3000)
            .map(|i| i.to_le_bytes().repeat(i as usize % 7))
            .collect();
        let filter = policy.create_filter(&keys);
        let reader = Filter::new(&filter);
        assert!(
            keys.iter().all(|k| reader.may_contain(k)),
            "bits_per_key {bpk}"
        );
    }
}

#[test]
fn remainder_matches_division() {
    let divisors = [
        1,
        7,
        8,
        64,
        72,
        1000,
        65_536,
        80_000_008,
        (1 << 31) + 8,
        u64::from(u32::MAX),
    ];
    let mut h: u32 = 0x9e37_79b9;
    for _ in 0..200_000 {
        h = h.wrapping_mul(0x0019_660d).wrapping_add(0x3c6e_f35f);
        for &d in &divisors {
            assert_eq!(
                u64::from(BitCount::new(d).reduce(h)),
                u64::from(h) % d,
                "{h} % {d}"
            );
        }
    }
    for d in [1u64 << 32, (1 << 32) + 8, 1 << 40] {
        for h in [0, 1, 12345, u32::MAX] {
            assert_eq!(BitCount::new(d).reduce(h), h);
        }
    }
}
