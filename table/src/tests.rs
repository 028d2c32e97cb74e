//! The reader's parts on bytes written out by hand from LevelDB's table format.

use crate::block::each_entry;
use crate::checksum::{mask, masked_crc, unmask};
use crate::coding::put_varint;
use crate::compression::Family;
use crate::error::Result;
use crate::filter_block::{FilterBlock, Lookup};
use crate::footer::{decode_block_into, handle_value, BlockHandle};
use crate::source::ReadAt;
use crate::table::Table;

/// The entries of a block (`offset` is the block's, for errors), in order: each
/// whole key and its value.
fn entries(block: &[u8], offset: u64) -> Result<Vec<(Vec<u8>, &[u8])>> {
    let mut found = Vec::new();
    each_entry(block, offset, |key, value| {
        found.push((key.to_vec(), value));
        Ok(())
    })?;
    Ok(found)
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
    let block = FilterBlock::new(bytes.clone(), 0);
    assert_eq!((block.count(), block.base_lg()), (3, 11));
    assert_eq!(block.lookup(0), Lookup::Filter(b"abc"));
    assert_eq!(block.lookup(1), Lookup::Filter(b""));
    assert_eq!(block.lookup(2), Lookup::Filter(b"de"));
    assert_eq!(block.lookup(3), Lookup::MayMatch);
    assert_eq!(
        (
            block.index_of(0),
            block.index_of(2047),
            block.index_of(2048)
        ),
        (0, 0, 1)
    );
    assert!(
        FilterBlock::new(vec![0; 4], 0).ignored().is_some(),
        "shorter than 5 bytes"
    );
    let mut past = bytes.clone();
    let n = past.len();
    past[n - 5..n - 1].copy_from_slice(&1000u32.to_le_bytes());
    let past = FilterBlock::new(past, 0);
    assert!(past.ignored().is_some(), "offset array past the end");
    // LevelDB's reader then holds no filter: "may match" for every block.
    assert_eq!((past.count(), past.for_block(4096)), (0, Lookup::MayMatch));
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

/// Each branch of LevelDB 1.23's `FilterBlockReader::KeyMayMatch`.
#[test]
fn lookups_follow_leveldbs_filter_block_reader_branch_by_branch() {
    // Filters "abc" at 0..3 and "de" at 3..5; the offset array at 5.
    let good = filter_block(&[b"abc", b"de"]);
    let with_offsets = |first: (u32, u32)| {
        let mut bytes = good.clone();
        bytes[5..9].copy_from_slice(&first.0.to_le_bytes());
        // filter 0's limit is filter 1's start.
        bytes[9..13].copy_from_slice(&first.1.to_le_bytes());
        bytes
    };
    let lookup0 = |first: (u32, u32), expected: Lookup| {
        let block = FilterBlock::new(with_offsets(first), 0);
        assert_eq!(block.lookup(0), expected, "offsets {first:?}");
    };
    // start <= limit <= array: the policy is asked (an empty filter too).
    lookup0((1, 3), Lookup::Filter(b"bc"));
    lookup0((2, 2), Lookup::Filter(b""));
    lookup0((5, 5), Lookup::Filter(b""));
    // start == limit past the array: "absent" for every key, without the policy.
    lookup0((6, 6), Lookup::Absent);
    lookup0((u32::MAX, u32::MAX), Lookup::Absent);
    // start > limit, or limit past the array: "may match".
    lookup0((3, 2), Lookup::MayMatch);
    lookup0((0, 6), Lookup::MayMatch);
    // No filter of that index: "may match".
    let block = FilterBlock::new(good.clone(), 0);
    assert_eq!(block.lookup(2), Lookup::MayMatch);
    assert_eq!(block.lookup(usize::MAX), Lookup::MayMatch);
    // An array whose length is not a multiple of 4: LevelDB's count rounds down.
    let mut odd = b"x".to_vec();
    odd.extend_from_slice(&good);
    let n = odd.len();
    odd[n - 5..n - 1].copy_from_slice(&4u32.to_le_bytes());
    let block = FilterBlock::new(odd, 0);
    assert_eq!(block.count(), (n - 5 - 4) / 4);
}

#[test]
fn the_filter_index_shifts_as_x86_64_and_aarch64_do() {
    let mut bytes = filter_block(&[b"abc"]);
    let n = bytes.len();
    for (base_lg, offset, index) in [
        (11, 4096, 2),
        (0, 4096, 4096),
        (64, 4096, 4096),
        (75, 4096, 2),
    ] {
        bytes[n - 1] = base_lg;
        assert_eq!(FilterBlock::new(bytes.clone(), 0).index_of(offset), index);
    }
}

/// A table of one uncompressed data block of `entries`, an empty metaindex and
/// its index, written as LevelDB lays them out.
fn table_bytes(entries: &[(u64, &[u8], &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    let put_block = |out: &mut Vec<u8>, contents: &[u8]| {
        let handle = BlockHandle {
            offset: out.len() as u64,
            size: contents.len() as u64,
        };
        out.extend_from_slice(contents);
        out.push(0);
        let crc = masked_crc(contents, 0);
        out.extend_from_slice(&crc.to_le_bytes());
        handle
    };
    let data = put_block(&mut out, &block(entries, &[0]));
    let metaindex = put_block(&mut out, &block(&[], &[]));
    let mut handle = Vec::new();
    put_varint(&mut handle, data.offset);
    put_varint(&mut handle, data.size);
    let index = put_block(&mut out, &block(&[(0, b"zzzzzzzzz", &handle)], &[0]));
    let mut footer = Vec::new();
    for h in [metaindex, index] {
        put_varint(&mut footer, h.offset);
        put_varint(&mut footer, h.size);
    }
    footer.resize(40, 0);
    footer.extend_from_slice(&0xdb47_7524_8b80_fb57u64.to_le_bytes());
    out.extend_from_slice(&footer);
    out
}

#[test]
fn data_blocks_are_read_from_slices_and_checked() {
    let bytes = table_bytes(&[(0, b"key1\x01\0\0\0\0\0\0\0", b"v")]);
    let table = Table::open(&bytes[..]).unwrap();
    let mut seen = Vec::new();
    table
        .for_each_data_block(|handle, block| {
            each_entry(block, handle.offset, |key, value| {
                seen.push((key.to_vec(), value.to_vec()));
                Ok(())
            })
        })
        .unwrap();
    assert_eq!(seen, [(b"key1\x01\0\0\0\0\0\0\0".to_vec(), b"v".to_vec())]);
    // One flipped bit in the data block: its checksum says so.
    let mut flipped = bytes.clone();
    flipped[5] ^= 1;
    let error = Table::open(&flipped[..])
        .unwrap()
        .for_each_data_block(|_, _| Ok(()))
        .unwrap_err();
    assert!(error.to_string().contains("checksum mismatch"), "{error}");
}

/// A source that claims `len` bytes of zeros, holding none of them.
struct Huge {
    len: u64,
    tail: Vec<u8>,
}

impl ReadAt for Huge {
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.len)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
        let tail_start = self.len - self.tail.len() as u64;
        for (i, byte) in buf.iter_mut().enumerate() {
            let at = offset + i as u64;
            *byte = if at >= tail_start {
                self.tail[(at - tail_start) as usize]
            } else {
                0
            };
        }
        Ok(())
    }
}

#[test]
fn block_sizes_are_checked_before_anything_of_their_size_is_allocated() {
    // A footer whose index claims a terabyte block: larger than any block read.
    let footer = |index: BlockHandle| {
        let mut footer = Vec::new();
        for h in [BlockHandle { offset: 0, size: 0 }, index] {
            put_varint(&mut footer, h.offset);
            put_varint(&mut footer, h.size);
        }
        footer.resize(40, 0);
        footer.extend_from_slice(&0xdb47_7524_8b80_fb57u64.to_le_bytes());
        footer
    };
    let huge = Huge {
        len: 1 << 42,
        tail: footer(BlockHandle {
            offset: 0,
            size: 1 << 40,
        }),
    };
    let table = Table::open(&huge).unwrap();
    let error = table.block(table.index()).unwrap_err();
    assert!(error.to_string().contains("larger than any"), "{error}");
    // Within the limit but past the end of the file.
    let bytes = table_bytes(&[]);
    let mut past = bytes.clone();
    let n = past.len();
    past[n - 48..].copy_from_slice(&footer(BlockHandle {
        offset: 10,
        size: 1 << 20,
    }));
    let table = Table::open(&past[..]).unwrap();
    let error = table.block(table.index()).unwrap_err();
    assert!(error.to_string().contains("runs past the end"), "{error}");
    // Snappy claiming a gigabyte from a few bytes.
    let mut contents = Vec::new();
    put_varint(&mut contents, 1 << 30);
    contents.extend_from_slice(&[0; 4]);
    let mut raw = contents.clone();
    raw.push(1);
    raw.extend_from_slice(&masked_crc(&contents, 1).to_le_bytes());
    let handle = BlockHandle {
        offset: 0,
        size: contents.len() as u64,
    };
    let mut out = Vec::new();
    let error = decode_block_into(&raw, handle, Family::Leveldb, &mut out).unwrap_err();
    assert!(error.to_string().contains("claims"), "{error}");
    assert!(out.capacity() < 1 << 20);
}

#[test]
fn bashos_expiry_keys_lose_their_expiry_time_with_their_tag() {
    // "k1" a value (type 1); "k2" with an expiry time (type 3) before its tag.
    let plain = [b"k1".as_slice(), &[1, 0, 0, 0, 0, 0, 0, 0]].concat();
    let expiring = [b"k2".as_slice(), &[9; 8], &[3, 0, 0, 0, 0, 0, 0, 0]].concat();
    let data = block(&[(0, &plain, b"v"), (0, &expiring, b"v")], &[0]);
    let keys = |family| {
        let mut keys = Vec::new();
        crate::block::each_user_key_of(&data, 0, family, |k| keys.push(k.to_vec())).unwrap();
        keys
    };
    assert_eq!(keys(Family::Basho), [b"k1".to_vec(), b"k2".to_vec()]);
    assert_eq!(keys(Family::Leveldb)[1], expiring[..10]);
}
