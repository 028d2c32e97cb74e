//! LevelDB's encodings, written: varints, fixed-width integers, block handles and a
//! block's 5-byte trailer (util/coding.cc, table/format.cc).

use crate::block::BlockHandle;
use crate::masked_crc;

/// Appends `value` as a varint (7 bits a byte, low bits first).
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Appends `bytes` prefixed with their length as a varint (LevelDB's
/// `PutLengthPrefixedSlice`).
pub fn put_length_prefixed(out: &mut Vec<u8>, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

impl BlockHandle {
    /// Appends the handle as LevelDB's `BlockHandle::EncodeTo` does: two varints.
    pub fn encode_to(self, out: &mut Vec<u8>) {
        put_varint(out, self.offset);
        put_varint(out, self.size);
    }
}

/// The trailer LevelDB writes after a block stored with `block_type` (0 raw): the
/// type byte and the masked crc32c of the contents and that byte.
pub fn block_trailer(contents: &[u8], block_type: u8) -> [u8; 5] {
    let mut trailer = [block_type, 0, 0, 0, 0];
    trailer[1..].copy_from_slice(&masked_crc(contents, block_type).to_le_bytes());
    trailer
}
