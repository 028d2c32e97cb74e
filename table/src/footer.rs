//! The frame of a table (LevelDB's `BlockHandle`, `Footer`, `ReadBlock`), written and read:
//! block handles, the 48-byte footer, and the 5-byte trailer after every block (a
//! compression type and a masked crc32c), with the block's contents decompressed.

use crate::checksum::{masked_crc, unmask};
use crate::coding::{decode_fixed32, decode_fixed64, get_varint, put_varint};
use crate::compression::{decompress, Codec, Family};
use crate::error::{corrupt, ErrorKind, Result};

/// The number at the end of every table.
pub(crate) const MAGIC: u64 = 0xdb47_7524_8b80_fb57;
/// The footer's length: two handles padded to 40 bytes, then the magic number.
pub(crate) const FOOTER_LEN: usize = 48;
/// Type byte and masked crc32c after every block.
pub(crate) const TRAILER_LEN: usize = 5;

/// A block's place in the file (its trailer follows it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockHandle {
    pub offset: u64,
    pub size: u64,
}

impl BlockHandle {
    /// Decodes a handle (two varint64s) at the start of `data` (at `at` in its
    /// file, for errors), and how many bytes it took.
    pub(crate) fn decode(data: &[u8], at: u64) -> Result<(Self, usize)> {
        let mut pos = 0;
        match (get_varint(data, &mut pos), get_varint(data, &mut pos)) {
            (Some(offset), Some(size)) => Ok((Self { offset, size }, pos)),
            _ => corrupt(at, ErrorKind::BadBlockHandle),
        }
    }

    /// Appends the handle as LevelDB's `BlockHandle::EncodeTo` does: two varints.
    pub fn encode_to(self, out: &mut Vec<u8>) {
        put_varint(out, self.offset);
        put_varint(out, self.size);
    }

    /// The offset just past this block's trailer, if it has one.
    pub fn end(self) -> Option<u64> {
        self.offset
            .checked_add(self.size)?
            .checked_add(TRAILER_LEN as u64)
    }
}

/// Decodes an index or metaindex value (in the block at `offset`, for errors): a
/// block handle.
pub fn handle_value(value: &[u8], offset: u64) -> Result<BlockHandle> {
    BlockHandle::decode(value, offset).map(|(handle, _)| handle)
}

/// The metaindex and index handles of the footer read at `start`, once its magic
/// number is checked.
pub(crate) fn decode_footer(
    footer: &[u8; FOOTER_LEN],
    start: u64,
) -> Result<(BlockHandle, BlockHandle)> {
    let magic = decode_fixed64(footer, FOOTER_LEN - 8).expect("48 bytes");
    if magic != MAGIC {
        return corrupt(start + 40, ErrorKind::BadMagic(magic));
    }
    let (metaindex, used) = BlockHandle::decode(footer, start)?;
    let (index, _) = BlockHandle::decode(&footer[used..], start)?;
    Ok((metaindex, index))
}

/// The footer: both handles, zero padding to 40 bytes, the magic number.
pub(crate) fn encode_footer(metaindex: BlockHandle, index: BlockHandle) -> Vec<u8> {
    let mut footer = Vec::with_capacity(FOOTER_LEN);
    metaindex.encode_to(&mut footer);
    index.encode_to(&mut footer);
    footer.resize(FOOTER_LEN - 8, 0);
    footer.extend_from_slice(&MAGIC.to_le_bytes());
    footer
}

/// The trailer LevelDB writes after a block stored with `block_type` (0 raw): the
/// type byte and the masked crc32c of the contents and that byte.
pub fn block_trailer(contents: &[u8], block_type: u8) -> [u8; TRAILER_LEN] {
    let mut trailer = [block_type, 0, 0, 0, 0];
    trailer[1..].copy_from_slice(&masked_crc(contents, block_type).to_le_bytes());
    trailer
}

/// Checks `raw` (the block of `handle` and its trailer) against its checksum.
pub(crate) fn verify_trailer(raw: &[u8], handle: BlockHandle) -> Result<()> {
    let (contents, trailer) = raw.split_at(handle.size as usize);
    let stored = unmask(decode_fixed32(trailer, 1).expect("5-byte trailer"));
    let computed = unmask(masked_crc(contents, trailer[0]));
    if stored != computed {
        return corrupt(handle.offset, ErrorKind::BlockChecksum { stored, computed });
    }
    Ok(())
}

/// A block read with its trailer into `raw`: its contents, once the checksum is
/// verified, in `out`, decompressed as `family` means its type (reusing `raw` when
/// stored as is).
pub(crate) fn decode_block(
    mut raw: Vec<u8>,
    handle: BlockHandle,
    family: Family,
    out: &mut Vec<u8>,
) -> Result<()> {
    if raw.get(handle.size as usize) == Some(&0) {
        verify_trailer(&raw, handle)?;
        raw.truncate(handle.size as usize);
        *out = raw;
        return Ok(());
    }
    let len = decode_block_into(&raw, handle, family, out)?.len();
    out.truncate(len);
    Ok(())
}

/// The contents of `raw` (a block and its trailer), once the checksum is verified:
/// `raw` itself when stored as is, else decompressed into `out` as `family` means
/// its type.
pub(crate) fn decode_block_into<'a>(
    raw: &'a [u8],
    handle: BlockHandle,
    family: Family,
    out: &'a mut Vec<u8>,
) -> Result<&'a [u8]> {
    verify_trailer(raw, handle)?;
    let (contents, trailer) = raw.split_at(handle.size as usize);
    match Codec::of(trailer[0], family, contents, handle.offset)? {
        None => Ok(contents),
        Some(codec) => {
            let len = decompress(codec, contents, out, handle.offset)?;
            Ok(&out[..len])
        }
    }
}
