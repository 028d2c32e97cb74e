//! What a block's compression type byte means, and its contents decompressed. The
//! LevelDB family agrees on 0 (none) and 1 (snappy) and disagrees on 2: zstd in
//! upstream LevelDB after 1.23 and Mojang's later fork, zlib in Mojang's first fork
//! (Minecraft Bedrock worlds), LZ4 in Basho's. A zstd frame and a zlib stream each
//! say what they are in their first bytes, so id 2 is told apart by its header,
//! never by trying one decoder and then the other; Basho's tables are known by their
//! `stats.sst1` meta block ([`Family`]). Mojang's forks add 3 (zstd) and 4 (raw
//! deflate, what Bedrock writes).

use std::io::Read;

use crate::coding::decode_fixed32;
use crate::error::{corrupt, ErrorKind, Result};
use crate::limits::MAX_BLOCK_LEN;

/// Which of the family wrote a table, as far as its compression ids depend on it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Family {
    /// Upstream LevelDB and every fork sharing its ids (Mojang's, HyperLevelDB,
    /// goleveldb): id 2 is zstd or zlib, as the block's header says.
    #[default]
    Leveldb,
    /// Basho's (Riak): id 2 is LZ4; known by its `stats.sst1` meta block.
    Basho,
}

/// The algorithms the family's compression ids name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    Snappy,
    Zstd,
    /// Deflate in a zlib stream (RFC 1950): Mojang's first fork's id 2.
    Zlib,
    /// Deflate with no header (RFC 1951): Mojang's id 4, what Bedrock worlds hold.
    RawDeflate,
    /// A fixed32 decompressed length, then an LZ4 block: Basho's id 2.
    Lz4,
}

impl Codec {
    pub fn name(self) -> &'static str {
        match self {
            Self::Snappy => "snappy",
            Self::Zstd => "zstd",
            Self::Zlib => "zlib",
            Self::RawDeflate => "raw deflate",
            Self::Lz4 => "LZ4",
        }
    }

    /// The codec of a block of `family` stored with type byte `id` whose contents
    /// start with `head`; `None` for 0 (stored as is); an error for an id no writer
    /// of the family uses, or an id 2 block whose header is neither zstd's nor zlib's.
    pub fn of(id: u8, family: Family, head: &[u8], at: u64) -> Result<Option<Self>> {
        Ok(Some(match (id, family) {
            (0, _) => return Ok(None),
            (1, _) => Self::Snappy,
            (2, Family::Basho) => Self::Lz4,
            (2, Family::Leveldb) if head.starts_with(&ZSTD_MAGIC) => Self::Zstd,
            (2, Family::Leveldb) if is_zlib_header(head) => Self::Zlib,
            (2, Family::Leveldb) => return corrupt(at, ErrorKind::CompressionTwoUnrecognised),
            (3, _) => Self::Zstd,
            (4, _) => Self::RawDeflate,
            (other, _) => return corrupt(at, ErrorKind::UnknownCompression(other)),
        }))
    }
}

/// A zstd frame's first four bytes (RFC 8878).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// A zlib stream's header (RFC 1950): CMF 0x78 (deflate, 32 KiB window, the only
/// one zlib writes by default) and an FLG making CMF·256 + FLG a multiple of 31.
fn is_zlib_header(head: &[u8]) -> bool {
    match head {
        [cmf @ 0x78, flg, ..] => (u16::from(*cmf) * 256 + u16::from(*flg)) % 31 == 0,
        _ => false,
    }
}

/// Snappy's format expands at most 64 bytes per 3-byte copy; a block claiming a
/// larger decompressed size is corrupt, found before allocating it.
const SNAPPY_MAX_EXPANSION: u64 = 22;
/// LZ4's format expands at most 255 bytes per byte of a match length.
const LZ4_MAX_EXPANSION: u64 = 255;

/// Decompresses `contents` (a block at `at`) with `codec` into `out`: at most
/// [`MAX_BLOCK_LEN`] bytes, a length a block's header claims checked before it is
/// allocated. Returns how many bytes of `out` hold the block (`out` may be longer:
/// it is grown, never cleared, zeroing what the decoder overwrites costing as much
/// as a good part of decompressing).
pub fn decompress(codec: Codec, contents: &[u8], out: &mut Vec<u8>, at: u64) -> Result<usize> {
    match codec {
        Codec::Snappy => {
            let len = snap::raw::decompress_len(contents)
                .or_else(|e| corrupt(at, ErrorKind::Snappy(e)))?;
            let bound = (contents.len() as u64 * SNAPPY_MAX_EXPANSION).min(MAX_BLOCK_LEN);
            if len as u64 > bound {
                return corrupt(at, ErrorKind::SnappyTooLarge { len });
            }
            if out.len() < len {
                out.resize(len, 0);
            }
            snap::raw::Decoder::new()
                .decompress(contents, &mut out[..len])
                .or_else(|e| corrupt(at, ErrorKind::Snappy(e)))
        }
        Codec::Lz4 => {
            let claimed = decode_fixed32(contents, 0).map(u64::from);
            let body = contents.get(4..).unwrap_or_default();
            let bound = (body.len() as u64 * LZ4_MAX_EXPANSION).min(MAX_BLOCK_LEN);
            let len = match claimed {
                Some(len) if len <= bound => len as usize,
                _ => return corrupt(at, ErrorKind::Lz4Length),
            };
            if out.len() < len {
                out.resize(len, 0);
            }
            match lz4_flex::block::decompress_into(body, &mut out[..len]) {
                Ok(written) if written == len => Ok(len),
                _ => corrupt(at, ErrorKind::Lz4Length),
            }
        }
        Codec::Zstd => {
            let decoder = zstd::stream::read::Decoder::new(contents)
                .or_else(|error| failed(codec, at, error))?;
            read_bounded(decoder, out, at, codec)
        }
        Codec::Zlib => read_bounded(flate2::read::ZlibDecoder::new(contents), out, at, codec),
        Codec::RawDeflate => {
            read_bounded(flate2::read::DeflateDecoder::new(contents), out, at, codec)
        }
    }
}

/// The error of `codec` failing on the block at `at`.
fn failed<T>(codec: Codec, at: u64, error: std::io::Error) -> Result<T> {
    let codec = codec.name();
    corrupt(at, ErrorKind::Decompress { codec, error })
}

/// Reads `decoder` to its end into `out`, failing past [`MAX_BLOCK_LEN`] bytes.
fn read_bounded(decoder: impl Read, out: &mut Vec<u8>, at: u64, codec: Codec) -> Result<usize> {
    out.clear();
    decoder
        .take(MAX_BLOCK_LEN + 1)
        .read_to_end(out)
        .or_else(|error| failed(codec, at, error))?;
    if out.len() as u64 > MAX_BLOCK_LEN {
        return corrupt(
            at,
            ErrorKind::DecompressTooLarge {
                codec: codec.name(),
            },
        );
    }
    Ok(out.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn decoded(id: u8, family: Family, contents: &[u8]) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        match Codec::of(id, family, contents, 0)? {
            None => Ok(contents.to_vec()),
            Some(codec) => {
                let len = decompress(codec, contents, &mut out, 0)?;
                Ok(out[..len].to_vec())
            }
        }
    }

    fn deflated(zlib: bool, data: &[u8]) -> Vec<u8> {
        let level = flate2::Compression::default();
        if zlib {
            let mut encoder = flate2::write::ZlibEncoder::new(Vec::new(), level);
            encoder.write_all(data).unwrap();
            encoder.finish().unwrap()
        } else {
            let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), level);
            encoder.write_all(data).unwrap();
            encoder.finish().unwrap()
        }
    }

    #[test]
    fn each_id_is_read_as_the_family_writes_it() {
        let data = b"chunk chunk chunk chunk chunk data".repeat(20);
        let zstd = zstd::bulk::compress(&data, 3).unwrap();
        let leveldb = Family::Leveldb;
        assert_eq!(decoded(2, leveldb, &zstd).unwrap(), data);
        assert_eq!(decoded(3, leveldb, &zstd).unwrap(), data);
        assert_eq!(decoded(2, leveldb, &deflated(true, &data)).unwrap(), data);
        assert_eq!(decoded(4, leveldb, &deflated(false, &data)).unwrap(), data);
        // Basho's id 2: the length, then an LZ4 block (here five literals).
        let lz4 = [&5u32.to_le_bytes()[..], &[0x50], b"hello"].concat();
        assert_eq!(decoded(2, Family::Basho, &lz4).unwrap(), b"hello");
    }

    #[test]
    fn id_2_is_told_apart_by_its_header_and_unknown_ids_say_what_the_forks_mean() {
        assert_eq!(
            Codec::of(2, Family::Leveldb, &[0x28, 0xb5, 0x2f, 0xfd], 0).unwrap(),
            Some(Codec::Zstd)
        );
        assert_eq!(
            Codec::of(2, Family::Leveldb, &[0x78, 0x9c], 0).unwrap(),
            Some(Codec::Zlib)
        );
        // 0x78 0x9d is no zlib header: (0x78 * 256 + 0x9d) % 31 != 0.
        let neither = Codec::of(2, Family::Leveldb, &[0x78, 0x9d], 7).unwrap_err();
        assert_eq!(neither.offset(), Some(7));
        assert!(neither.to_string().contains("LZ4 in Basho's"), "{neither}");
        let unknown = Codec::of(9, Family::Leveldb, b"", 0).unwrap_err();
        assert!(
            unknown.to_string().contains("4 raw deflate (Mojang's"),
            "{unknown}"
        );
    }

    #[test]
    fn bad_streams_and_lengths_are_errors_not_panics() {
        for (id, family, contents) in [
            (3, Family::Leveldb, &b"\x28\xb5\x2f\xfd garbage"[..]),
            (2, Family::Leveldb, b"\x78\x9c garbage"),
            (4, Family::Leveldb, b"\xff\xff\xff"),
            (2, Family::Basho, b"\x05\x00"),
            (2, Family::Basho, b"\xff\xff\xff\x7f\x50hello"),
            (2, Family::Basho, b"\x06\x00\x00\x00\x50hello"),
        ] {
            assert!(decoded(id, family, contents).is_err(), "{contents:?}");
        }
    }

    #[test]
    fn a_block_inflating_past_the_largest_is_cut_short() {
        let mut encoder =
            flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        let zeros = vec![0u8; 1 << 20];
        for _ in 0..=(MAX_BLOCK_LEN >> 20) {
            encoder.write_all(&zeros).unwrap();
        }
        let bomb = encoder.finish().unwrap();
        let error = decoded(4, Family::Leveldb, &bomb).unwrap_err();
        assert!(error.to_string().contains("past the largest"), "{error}");
    }
}
