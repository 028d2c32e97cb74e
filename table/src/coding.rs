//! LevelDB's integer and slice encodings (`PutVarint64`, `DecodeFixed32`,
//! `PutLengthPrefixedSlice` and their kin), written and read:
//! varints (7 bits a byte, low bits first), little-endian fixed-width integers, and
//! byte strings prefixed with their length as a varint. Reading never panics: bytes
//! cut short, or a varint longer than 64 bits, give `None`.

/// Appends `value` as a varint.
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

/// The varint at `*pos` in `data`, `*pos` moved past it.
pub(crate) fn get_varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *data.get(*pos)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(value);
        }
    }
    None
}

/// The length-prefixed bytes at `*pos` in `data`, `*pos` moved past them.
pub(crate) fn get_length_prefixed<'a>(data: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = usize::try_from(get_varint(data, pos)?).ok()?;
    let bytes = data.get(*pos..pos.checked_add(len)?)?;
    *pos += len;
    Some(bytes)
}

/// The little-endian 32-bit integer at `at` in `data`.
pub(crate) fn decode_fixed32(data: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(
        data.get(at..at.checked_add(4)?)?.try_into().ok()?,
    ))
}

/// The little-endian 64-bit integer at `at` in `data`.
pub(crate) fn decode_fixed64(data: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(
        data.get(at..at.checked_add(8)?)?.try_into().ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_of_every_length() {
        for value in [0, 1, 127, 128, 300, 1 << 21, u64::from(u32::MAX), u64::MAX] {
            let mut bytes = Vec::new();
            put_varint(&mut bytes, value);
            let mut pos = 0;
            assert_eq!(get_varint(&bytes, &mut pos), Some(value));
            assert_eq!(pos, bytes.len());
            // Cut short: no value.
            let mut pos = 0;
            assert_eq!(get_varint(&bytes[..bytes.len() - 1], &mut pos), None);
        }
        // Eleven continuation bytes: longer than any u64.
        let mut pos = 0;
        assert_eq!(get_varint(&[0x80; 11], &mut pos), None);
    }

    #[test]
    fn length_prefixed_bytes_read_back_and_cut_short_are_none() {
        let mut bytes = Vec::new();
        put_length_prefixed(&mut bytes, b"abc");
        let mut pos = 0;
        assert_eq!(get_length_prefixed(&bytes, &mut pos), Some(&b"abc"[..]));
        assert_eq!(pos, bytes.len());
        assert_eq!(get_length_prefixed(&bytes[..3], &mut 0), None);
    }

    #[test]
    fn fixed_width_integers_are_little_endian_and_bounded() {
        let bytes = [1, 2, 3, 4, 5, 6, 7, 8];
        assert_eq!(decode_fixed32(&bytes, 4), Some(0x0807_0605));
        assert_eq!(decode_fixed64(&bytes, 0), Some(0x0807_0605_0403_0201));
        assert_eq!(decode_fixed32(&bytes, 5), None);
        assert_eq!(decode_fixed32(&bytes, usize::MAX), None);
    }
}
