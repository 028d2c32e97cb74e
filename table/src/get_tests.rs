//! `Table::filter` and `Table::get` on small tables laid out as LevelDB lays them
//! out, with a stand-in policy whose filters list their keys: what a Get reads,
//! what the filter answers and what it finds.

use crate::filter_block::{FilterBlock, Lookup};
use crate::filter_block_builder::FilterBlockBuilder;
use crate::footer::{block_trailer, encode_footer, BlockHandle};
use crate::get::{FilterPolicy, FilterSeen, Got};
use crate::internal_key::lookup_key;
use crate::table::{Table, FILTER_PREFIX};

/// The stand-in policy's name.
const NAME: &str = "test.ListOfKeys";

/// A "filter" listing its keys, each followed by 0xff.
fn list_keys(keys: &[&[u8]], dst: &mut Vec<u8>) {
    for key in keys {
        dst.extend_from_slice(key);
        dst.push(0xff);
    }
}

/// The stand-in policy's `KeyMayMatch`: exact, so an absent key is never a false
/// positive.
fn listed(key: &[u8], filter: &[u8]) -> bool {
    filter.split(|&b| b == 0xff).any(|listed| listed == key)
}

/// The internal key of a value of `user_key` at sequence 1.
fn internal(user_key: &[u8]) -> Vec<u8> {
    let mut key = user_key.to_vec();
    key.extend_from_slice(&(1u64 << 8 | 1).to_le_bytes());
    key
}

/// A block of `entries` (whole keys, no shared prefixes) and one restart point.
fn block(entries: &[(Vec<u8>, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    for (key, value) in entries {
        crate::coding::put_varint(&mut out, 0);
        crate::coding::put_varint(&mut out, key.len() as u64);
        crate::coding::put_varint(&mut out, value.len() as u64);
        out.extend_from_slice(key);
        out.extend_from_slice(value);
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&1u32.to_le_bytes());
    out
}

/// Appends `contents` as a raw block with its trailer; its handle.
fn put_block(out: &mut Vec<u8>, contents: &[u8]) -> BlockHandle {
    let handle = BlockHandle {
        offset: out.len() as u64,
        size: contents.len() as u64,
    };
    out.extend_from_slice(contents);
    out.extend_from_slice(&block_trailer(contents, 0));
    handle
}

/// A table of one data block per group of `blocks` (each key's value is the key
/// upper-cased), its filter block as LevelDB's builder makes it with the stand-in
/// policy (edited by `edit_filters` before it is written), a metaindex naming it,
/// the index and the footer.
fn table(blocks: &[&[&[u8]]], edit_filters: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
    let mut out = Vec::new();
    let mut filters = FilterBlockBuilder::new(list_keys);
    filters.start_block(0);
    let mut index = Vec::new();
    for keys in blocks {
        let entries: Vec<_> = (keys.iter())
            .map(|key| (internal(key), key.to_ascii_uppercase()))
            .collect();
        keys.iter().for_each(|key| filters.add_key(key));
        let handle = put_block(&mut out, &block(&entries));
        filters.start_block(out.len() as u64);
        let mut value = Vec::new();
        handle.encode_to(&mut value);
        index.push((entries.last().expect("keys").0.clone(), value));
    }
    let mut filter_block = filters.finish();
    edit_filters(&mut filter_block);
    let filter_handle = put_block(&mut out, &filter_block);
    let mut value = Vec::new();
    filter_handle.encode_to(&mut value);
    let metaindex_key = [FILTER_PREFIX, NAME.as_bytes()].concat();
    let metaindex = put_block(&mut out, &block(&[(metaindex_key, value)]));
    let index = put_block(&mut out, &block(&index));
    out.extend_from_slice(&encode_footer(metaindex, index));
    out
}

/// A Get of `user_key` in `bytes` with the stand-in policy.
fn get(bytes: &[u8], user_key: &[u8]) -> Got {
    let policy = FilterPolicy {
        name: NAME,
        key_may_match: &listed,
    };
    let table = Table::open(bytes).unwrap();
    table.get(&lookup_key(user_key, 1), Some(policy)).unwrap()
}

/// The filter's index and answer, when one was asked.
fn asked(got: &Got) -> Option<(usize, bool)> {
    match &got.filter {
        FilterSeen::Asked {
            index, may_match, ..
        } => Some((*index, *may_match)),
        _ => None,
    }
}

/// Two small data blocks, of "b" and of "d": both start in the first 2 KiB, so one
/// filter, of both keys, covers them.
fn two_blocks() -> Vec<u8> {
    table(&[&[b"b"], &[b"d"]], |_| {})
}

#[test]
fn a_present_key_is_found_in_the_block_its_index_entry_names() {
    let bytes = two_blocks();
    let got = get(&bytes, b"d");
    let data = got.data_block.expect("a block");
    assert!(data.offset > 0, "the second block");
    assert_eq!(asked(&got), Some((0, true)));
    assert!(got.block_read);
    let (key, value) = got.entry.expect("an entry");
    assert_eq!((key, value), (internal(b"d"), b"D".to_vec()));
}

#[test]
fn an_absent_key_is_answered_by_the_filter_without_a_block_read() {
    let bytes = two_blocks();
    let got = get(&bytes, b"c");
    assert!(got.data_block.is_some());
    assert_eq!(asked(&got), Some((0, false)));
    assert!(got.filter.absent());
    assert!(!got.block_read && got.entry.is_none());
    // Without a policy the block is read, and sought: its first entry at or after
    // the key is "d"'s.
    let table = Table::open(&bytes[..]).unwrap();
    let got = table.get(&lookup_key(b"c", 1), None).unwrap();
    assert!(matches!(got.filter, FilterSeen::NotRead) && got.block_read);
    assert_eq!(got.entry.expect("an entry").0, internal(b"d"));
}

#[test]
fn a_key_past_the_last_block_reads_neither_filter_nor_block() {
    let got = get(&two_blocks(), b"e");
    assert_eq!(got.data_block, None);
    assert!(matches!(got.filter, FilterSeen::NotRead));
    assert!(!got.block_read && got.entry.is_none());
}

#[test]
fn an_empty_table_has_an_empty_filter_block_and_no_block_for_any_key() {
    let bytes = table(&[], |_| {});
    let table = Table::open(&bytes[..]).unwrap();
    let filters = table.filter(NAME).unwrap().expect("a filter block");
    assert!(filters.ignored().is_none());
    assert_eq!((filters.count(), filters.base_lg()), (0, 11));
    assert_eq!(filters.for_block(0), Lookup::MayMatch);
    assert!(table.filter("another.Policy").unwrap().is_none());
    assert_eq!(get(&bytes, b"a").data_block, None);
}

#[test]
fn the_filter_for_a_block_offset_follows_the_base_the_block_stores() {
    // Base 0: one filter per byte of offsets; the second block's filter is the one
    // of its offset, and holds no filter here ("may match").
    let bytes = table(&[&[b"b"], &[b"d"]], |block| *block.last_mut().unwrap() = 0);
    let parsed = Table::open(&bytes[..]).unwrap();
    let filters: FilterBlock = parsed.filter(NAME).unwrap().expect("a filter block");
    assert_eq!(filters.base_lg(), 0);
    let got = get(&bytes, b"d");
    let data = got.data_block.expect("a block");
    assert_eq!(asked(&got), Some((data.offset as usize, true)));
    assert_eq!(filters.for_block(data.offset), Lookup::MayMatch);
    assert!(got.block_read && got.entry.is_some());
}

#[test]
fn a_corrupted_filter_block_degrades_to_may_match() {
    // Four bytes, checksum valid: LevelDB's reader holds no filter.
    let bytes = table(&[&[b"b"], &[b"d"]], |block| block.truncate(4));
    let got = get(&bytes, b"b");
    let FilterSeen::Asked { filters, .. } = &got.filter else {
        panic!("the filter block is read");
    };
    assert!(filters.ignored().is_some());
    assert_eq!(asked(&got).map(|(_, may_match)| may_match), Some(true));
    assert!(got.block_read);
    assert_eq!(got.entry.expect("found").1, b"B");
    // An absent key is then looked for in its block, and not found there.
    let got = get(&bytes, b"c");
    assert!(got.block_read);
    assert_eq!(got.entry.expect("the next entry").0, internal(b"d"));
}
