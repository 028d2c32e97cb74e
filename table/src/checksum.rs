//! The checksums LevelDB stores after each block and each log record.

/// The checksum LevelDB stores after a block: the crc32c of its contents and its
/// type byte, masked.
pub fn masked_crc(contents: &[u8], block_type: u8) -> u32 {
    mask(crc32c::crc32c_append(
        crc32c::crc32c(contents),
        &[block_type],
    ))
}

/// LevelDB stores crc32c values masked, so that checksums of data holding
/// checksums stay well distributed.
pub(crate) fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

pub(crate) fn unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

const MASK_DELTA: u32 = 0xa282_ead8;
