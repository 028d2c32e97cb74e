//! LevelDB's `Hash(data, n, seed)`, a Murmur-like hash.

#![forbid(unsafe_code)]

use crate::format::HASH_SEED;

pub(crate) const MULTIPLIER: u32 = 0xc6a4a793;

/// LevelDB's `BloomHash`: the hash of a key in a bloom filter, [`hash`] with the
/// filters' seed.
///
/// ```
/// use leveldb_bloom::hash::{bloom_hash, hash};
///
/// assert_eq!(bloom_hash(b"hello"), hash(b"hello", 0xbc9f1d34));
/// ```
#[inline]
pub fn bloom_hash(key: &[u8]) -> u32 {
    hash(key, HASH_SEED)
}

/// [`bloom_hash`] with the tail bytes read as `tail` says: the hash a filter of
/// either format probes a key with, for readers that must try both readings.
///
/// ```
/// use leveldb_bloom::hash::{bloom_hash, bloom_hash_with, TailBytes};
///
/// assert_eq!(bloom_hash_with(b"hello", TailBytes::Unsigned), bloom_hash(b"hello"));
/// ```
#[inline]
pub fn bloom_hash_with(key: &[u8], tail: TailBytes) -> u32 {
    hash_with(key, HASH_SEED, tail)
}

/// How the 1–3 bytes after the last whole word are added in: the one point where
/// LevelDB's hash has had two readings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TailBytes {
    /// As unsigned values: LevelDB ≥ 1.18 (`leveldb.BuiltinBloomFilter2`), LevelDB
    /// before 1.18 on ARM, goleveldb.
    Unsigned,
    /// Sign-extended, as plain `char` is on x86: LevelDB before 1.18 on x86
    /// (`leveldb.BuiltinBloomFilter`), RocksDB's block-based filter.
    Signed,
}

/// Hashes `data` exactly as LevelDB ≥ 1.18 does: [`hash_with`] and
/// [`TailBytes::Unsigned`].
#[inline]
pub fn hash(data: &[u8], seed: u32) -> u32 {
    hash_with(data, seed, TailBytes::Unsigned)
}

/// LevelDB's hash with the tail bytes read as `tail` says. The two readings differ
/// only for keys whose last `len % 4` bytes include one ≥ 0x80 (see
/// [`tail_is_ambiguous`]); LevelDB 1.18 renamed its filter format to
/// `leveldb.BuiltinBloomFilter2` when it changed from signed to unsigned.
///
/// ```
/// use leveldb_bloom::hash::{hash_with, TailBytes};
///
/// assert_eq!(hash_with(&[0xc3, 0x97], 0xbc9f1d34, TailBytes::Unsigned), 0x5b663814);
/// assert_eq!(hash_with(&[0xc3, 0x97], 0xbc9f1d34, TailBytes::Signed), 0x0f2b_a540);
/// ```
#[inline]
pub fn hash_with(data: &[u8], seed: u32, tail: TailBytes) -> u32 {
    hash_rest(initial_state(data.len(), seed), data, tail)
}

/// Whether the signed and unsigned readings of `data`'s tail can differ: one of its
/// last `len % 4` bytes is ≥ 0x80.
#[inline]
pub fn tail_is_ambiguous(data: &[u8]) -> bool {
    data[data.len() - data.len() % 4..]
        .iter()
        .any(|&b| b >= 0x80)
}

/// The state before any byte is mixed in. `len` is size_t in LevelDB; only its
/// low 32 bits reach the result.
#[inline(always)]
pub(crate) fn initial_state(len: usize, seed: u32) -> u32 {
    seed ^ (len as u32).wrapping_mul(MULTIPLIER)
}

/// Mixes one little-endian 4-byte word into the state.
#[inline(always)]
pub(crate) fn mix_word(h: u32, word: u32) -> u32 {
    let h = h.wrapping_add(word).wrapping_mul(MULTIPLIER);
    h ^ (h >> 16)
}

/// Finishes a hash from `state`, the state after the words before `rest` were
/// mixed in (so the SIMD hashers can hand over any whole-word prefix).
#[inline(always)]
pub(crate) fn hash_rest(state: u32, rest: &[u8], tail_bytes: TailBytes) -> u32 {
    let mut h = state;
    // Sixteen bytes a round, then the last whole words one at a time: a short key
    // then takes no unrolling prologue. Each round shortens what is left, so the
    // length it compares is the one it already has.
    let mut rest = rest;
    while let Some((block, after)) = rest.split_first_chunk::<16>() {
        for w in block.chunks_exact(4) {
            h = mix_word(h, u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        }
        rest = after;
    }
    // At most three words: tested, not looped over, so nothing is unrolled for more.
    for i in 0..3 {
        if let Some(&[a, b, c, d]) = rest.get(4 * i..4 * i + 4) {
            h = mix_word(h, u32::from_le_bytes([a, b, c, d]));
        }
    }
    let tail = rest.chunks_exact(4).remainder();
    if !tail.is_empty() {
        // Byte i is added shifted left by 8i: summed last byte first, each step
        // shifting what came before by 8 (a constant shift, in few registers).
        let sum = tail.iter().rev().fold(0u32, |sum, &b| {
            let b = match tail_bytes {
                TailBytes::Unsigned => u32::from(b),
                // `(int)(char)b << 8i`, wrapped to 32 bits as the compilers did.
                TailBytes::Signed => i32::from(b as i8) as u32,
            };
            (sum << 8).wrapping_add(b)
        });
        h = h.wrapping_add(sum).wrapping_mul(MULTIPLIER);
        h ^= h >> 24;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::{hash, hash_with, tail_is_ambiguous, TailBytes};

    // The vectors LevelDB's own hash test checks, bytes ≥ 0x80 in the tail included.
    #[test]
    fn leveldb_published_vectors() {
        const SEED: u32 = 0xbc9f1d34;
        assert_eq!(hash(&[], SEED), SEED);
        assert_eq!(hash(&[0x62], SEED), 0xef1345c4);
        assert_eq!(hash(&[0xc3, 0x97], SEED), 0x5b663814);
        assert_eq!(hash(&[0xe2, 0x99, 0xa5], SEED), 0x323c078f);
        assert_eq!(hash(&[0xe1, 0x80, 0xb9, 0x32], SEED), 0xed21633a);
        let data: [u8; 48] = [
            0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x14,
            0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ];
        assert_eq!(hash(&data, 0x12345678), 0xf333dabb);
    }

    // Worked out by hand (an independent script of the pre-1.18 loop with the tail
    // bytes sign-extended), seed 0xbc9f1d34; the first and fourth have no byte
    // ≥ 0x80 in their tail and so equal the published unsigned vectors.
    #[test]
    fn signed_tail_vectors() {
        const SEED: u32 = 0xbc9f1d34;
        let signed = |data: &[u8]| hash_with(data, SEED, TailBytes::Signed);
        assert_eq!(signed(&[0x62]), 0xef1345c4);
        assert_eq!(signed(&[0xc3, 0x97]), 0x0f2ba540);
        assert_eq!(signed(&[0xe2, 0x99, 0xa5]), 0x530174ee);
        assert_eq!(signed(&[0xe1, 0x80, 0xb9, 0x32]), 0xed21633a);
        assert_eq!(signed(&[0xff]), 0x1d66774f);
        assert_eq!(signed(&[0x01, 0x80]), 0x5ffe05b6);
        assert_eq!(signed(b"abcd\xfe"), 0x55935652);
        assert_eq!(hash(b"abcd\xfe", SEED), 0xfa3ae9fd);
    }

    #[test]
    fn ambiguous_tails() {
        assert!(!tail_is_ambiguous(b""));
        assert!(!tail_is_ambiguous(&[0x80, 0x80, 0x80, 0x80]));
        assert!(tail_is_ambiguous(&[0, 0, 0, 0, 0x80]));
        assert!(!tail_is_ambiguous(&[0x80, 0, 0, 0, 0x7f]));
        for data in [&b"abcd\xfe"[..], &[0xff], &[0x01, 0x80]] {
            assert!(tail_is_ambiguous(data));
            assert_ne!(hash(data, 7), hash_with(data, 7, TailBytes::Signed));
        }
    }
}
