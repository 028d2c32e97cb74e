//! The writer against the reader: what is written reads back as written.

use crate::db::log::LogReader;
use crate::db::log_writer::LogWriter;
use crate::db::manifest::{decode_edit, LiveTable, VersionEdit};
use crate::filter_block::{FilterBlock, Lookup};
use crate::filter_block_builder::FilterBlockBuilder;
use crate::internal_key::InternalKey;

/// A "filter" of its keys' count and first bytes: enough to see which keys made it.
fn summary(keys: &[&[u8]], dst: &mut Vec<u8>) {
    dst.push(keys.len() as u8);
    dst.extend(keys.iter().map(|k| k[0]));
}

#[test]
fn filters_follow_data_block_offsets_with_empty_ones_between() {
    let mut builder = FilterBlockBuilder::new(summary);
    builder.start_block(0);
    builder.add_key(b"a");
    builder.add_key(b"b");
    builder.start_block(1000);
    builder.add_key(b"c");
    // The next block starts in the fourth 2 KiB range: two ranges without a block
    // start get empty filters (the second and third).
    builder.start_block(7000);
    builder.add_key(b"d");
    let block = builder.finish();
    let filters = FilterBlock::new(block, 0);
    assert_eq!(filters.base_lg(), 11);
    assert_eq!(filters.count(), 4);
    let got: Vec<_> = (0..4).map(|i| filters.lookup(i)).collect();
    assert_eq!(
        got,
        [
            Lookup::Filter(&[3, b'a', b'b', b'c']),
            Lookup::Filter(&[]),
            Lookup::Filter(&[]),
            Lookup::Filter(&[1, b'd']),
        ]
    );
    // No keys at all: no filter, only the array's offset and the base.
    assert_eq!(FilterBlockBuilder::new(summary).finish(), [0, 0, 0, 0, 11]);
}

#[test]
fn records_of_every_size_read_back_across_blocks() {
    let records: Vec<Vec<u8>> = [0usize, 1, 100, 32 * 1024 - 7, 32 * 1024 - 13, 100_000, 5]
        .iter()
        .enumerate()
        .map(|(i, &n)| (0..n).map(|j| (i * 31 + j) as u8).collect())
        .collect();
    let mut writer = LogWriter::new(Vec::new());
    for record in &records {
        writer.add_record(record).unwrap();
    }
    let bytes = writer.into_inner();
    let mut reader = LogReader::new(bytes.as_slice());
    for record in &records {
        assert_eq!(&reader.next_record().unwrap().unwrap().1, record);
    }
    assert!(reader.next_record().unwrap().is_none());
}

#[test]
fn version_edits_decode_as_encoded() {
    let key = |k: &[u8]| InternalKey([k, &[1, 0, 0, 0, 0, 0, 0, 0][..]].concat());
    let edit = VersionEdit {
        comparator: Some(b"leveldb.BytewiseComparator".to_vec()),
        log_number: Some(12),
        prev_log_number: Some(0),
        next_file: Some(1 << 40),
        last_sequence: Some(300_000),
        compact_pointers: vec![(1, key(b"m")), (3, key(b"q"))],
        deleted: vec![(2, 7)],
        added: vec![LiveTable {
            level: 6,
            number: 99,
            size: 123_456_789,
            smallest: key(b"a"),
            largest: key(b"z"),
        }],
    };
    assert_eq!(decode_edit(&edit.encode()).unwrap(), edit);
}
