//! The reader's parts on bytes written out by hand from LevelDB's table format.

use super::*;

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[test]
fn varints_of_every_length() {
    for value in [0, 1, 127, 128, 300, 1 << 21, u64::from(u32::MAX), u64::MAX] {
        let mut bytes = Vec::new();
        put_varint(&mut bytes, value);
        let mut pos = 0;
        assert_eq!(varint(&bytes, &mut pos), Some(value));
        assert_eq!(pos, bytes.len());
        // Cut short: no value.
        let mut pos = 0;
        assert_eq!(varint(&bytes[..bytes.len() - 1], &mut pos), None);
    }
    // Eleven continuation bytes: longer than any u64.
    let mut pos = 0;
    assert_eq!(varint(&[0x80; 11], &mut pos), None);
}

#[test]
fn block_handles_are_two_varints() {
    let mut bytes = Vec::new();
    put_varint(&mut bytes, 4096);
    put_varint(&mut bytes, 300);
    bytes.push(0xaa);
    let (handle, used) = BlockHandle::decode(&bytes, 0).unwrap();
    assert_eq!(
        (handle.offset, handle.size, used),
        (4096, 300, bytes.len() - 1)
    );
    assert!(BlockHandle::decode(&bytes[..2], 7).is_err());
    assert_eq!(handle_value(&bytes, 0).unwrap().offset, 4096);
}

/// A block of `entries` (shared prefix, unshared bytes, value) and its restarts.
fn block(entries: &[(u64, &[u8], &[u8])], restarts: &[u32]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(shared, unshared, value) in entries {
        put_varint(&mut out, shared);
        put_varint(&mut out, unshared.len() as u64);
        put_varint(&mut out, value.len() as u64);
        out.extend_from_slice(unshared);
        out.extend_from_slice(value);
    }
    for restart in restarts {
        out.extend_from_slice(&restart.to_le_bytes());
    }
    out.extend_from_slice(&(restarts.len() as u32).to_le_bytes());
    out
}

#[test]
fn entries_rebuild_prefix_compressed_keys_up_to_the_restart_array() {
    let bytes = block(
        &[
            (0, b"apple", b"1"),
            (2, b"ricot", b"2"),
            (0, b"banana", b""),
        ],
        &[0, 12],
    );
    let found = entries(&bytes, 0).unwrap();
    let keys: Vec<&[u8]> = found.iter().map(|(key, _)| key.as_slice()).collect();
    assert_eq!(keys, [&b"apple"[..], b"apricot", b"banana"]);
    assert_eq!(found[1].1, b"2");
    // A block of only its restart count.
    assert!(entries(&block(&[], &[]), 0).unwrap().is_empty());
}

#[test]
fn malformed_blocks_are_errors_not_panics() {
    // Shorter than the restart count; a count larger than the block; a shared prefix
    // longer than the key before; a value running past the restart array.
    assert!(entries(&[1, 0], 5).is_err());
    assert!(entries(&1000u32.to_le_bytes(), 5).is_err());
    assert!(entries(&block(&[(4, b"x", b"")], &[0]), 5).is_err());
    let mut long_value = block(&[(0, b"k", b"v")], &[0]);
    long_value[2] = 100;
    assert!(entries(&long_value, 5).is_err());
}

/// A filter block of `filters`, with base_lg 11.
fn filter_block(filters: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut offsets = Vec::new();
    for filter in filters {
        offsets.push(out.len() as u32);
        out.extend_from_slice(filter);
    }
    let array = out.len() as u32;
    for offset in offsets {
        out.extend_from_slice(&offset.to_le_bytes());
    }
    out.extend_from_slice(&array.to_le_bytes());
    out.push(11);
    out
}

#[test]
fn filter_offsets_give_each_filter() {
    let bytes = filter_block(&[b"abc", b"", b"de"]);
    let block = FilterBlock::parse(&bytes, 0).unwrap();
    assert_eq!((block.count(), block.base_lg), (3, 11));
    assert_eq!(block.filter(0), Some(&b"abc"[..]));
    assert_eq!(block.filter(1), Some(&b""[..]));
    assert_eq!(block.filter(2), Some(&b"de"[..]));
    assert_eq!(block.filter(3), None);
    assert_eq!(
        (
            block.index_of(0),
            block.index_of(2047),
            block.index_of(2048)
        ),
        (0, 0, 1)
    );
    assert!(
        FilterBlock::parse(&[0; 4], 0).is_err(),
        "shorter than 5 bytes"
    );
    let mut past = bytes.clone();
    let n = past.len();
    past[n - 5..n - 1].copy_from_slice(&1000u32.to_le_bytes());
    assert!(
        FilterBlock::parse(&past, 0).is_err(),
        "offset array past the end"
    );
}

#[test]
fn checksums_are_masked_as_leveldb_masks_them() {
    // crc32c("") = 0; masking rotates right by 15 and adds 0xa282ead8.
    assert_eq!(mask(0), 0xa282_ead8);
    for crc in [0, 1, 0xdead_beef, u32::MAX] {
        assert_eq!(unmask(mask(crc)), crc);
    }
    assert_eq!(masked_crc(b"", 0), mask(crc32c::crc32c(&[0])));
}
