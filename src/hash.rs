//! LevelDB's `Hash(data, n, seed)` (util/hash.cc), a Murmur-like hash.

pub(crate) const MULTIPLIER: u32 = 0xc6a4a793;

/// Hashes `data` exactly as LevelDB ≥ 1.18 does.
///
/// The 1–3 tail bytes are added as *unsigned* values. LevelDB before 1.18
/// sign-extended them (plain `char`), which is why the filter format was renamed
/// to `leveldb.BuiltinBloomFilter2`.
#[inline]
pub fn hash(data: &[u8], seed: u32) -> u32 {
    hash_rest(initial_state(data.len(), seed), data)
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
pub(crate) fn hash_rest(state: u32, rest: &[u8]) -> u32 {
    let mut h = state;
    // Sixteen bytes a round, then the last whole words one at a time: a short key
    // then takes no unrolling prologue.
    let mut blocks = rest.chunks_exact(16);
    for b in &mut blocks {
        for w in b.chunks_exact(4) {
            h = mix_word(h, u32::from_le_bytes([w[0], w[1], w[2], w[3]]));
        }
    }
    let rest = blocks.remainder();
    // At most three words: tested, not looped over, so nothing is unrolled for more.
    for i in 0..3 {
        if let Some(&[a, b, c, d]) = rest.get(4 * i..4 * i + 4) {
            h = mix_word(h, u32::from_le_bytes([a, b, c, d]));
        }
    }
    let tail = rest.chunks_exact(4).remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate().rev() {
            h = h.wrapping_add(u32::from(b) << (8 * i));
        }
        h = h.wrapping_mul(MULTIPLIER);
        h ^= h >> 24;
    }
    h
}

#[cfg(test)]
mod tests {
    use super::hash;

    // LevelDB's util/hash_test.cc, "SignedUnsignedIssue".
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
}
