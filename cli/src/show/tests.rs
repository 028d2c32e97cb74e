//! The page's data: the playground's filter, its refusals, and the data's place in
//! the page.

use super::*;

fn keys(keys: &[&str]) -> Vec<Vec<u8>> {
    keys.iter().map(|k| k.as_bytes().to_vec()).collect()
}

#[test]
fn the_playground_draws_the_filter_leveldb_builds() {
    let data = playground(10, &keys(&["hello", "world"]), Some(b"hello")).unwrap();
    assert_eq!(
        (data.mode, data.bits_per_key, data.chosen),
        ("playground", Some(10), 0)
    );
    assert_eq!(data.filter_name.as_deref(), Some(POLICY_NAME));
    // LevelDB 1.23's NewBloomFilterPolicy(10) for these keys (include/leveldb_bloom.hpp).
    assert_eq!(data.filters[0].hex.as_deref(), Some("114000414410401006"));
    assert_eq!(data.filters[0].key_count, 2);
    assert_eq!(data.key.as_deref(), Some("68656c6c6f"));
}

#[test]
fn the_playground_refuses_bits_past_its_range_saying_what_leveldb_builds() {
    let too_many_bits = playground(MAX_PLAYGROUND_BITS_PER_KEY + 1, &keys(&["k"]), None);
    let error = too_many_bits.err().expect("refused").to_string();
    assert!(error.contains("LevelDB would build a filter of"), "{error}");
}

#[test]
fn data_cannot_end_the_page_s_script() {
    let mut data = playground(10, &keys(&["k"]), None).unwrap();
    data.title = "</script><script>alert(1)".into();
    let page = page(&data);
    assert!(
        !page.contains("</script><script>alert"),
        "the title closed the script"
    );
    assert!(page.contains("\\u003c/script>\\u003cscript>alert(1)"));
}
