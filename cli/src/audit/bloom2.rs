//! Basho's bloom2 (Riak's LevelDB, `util/bloom2.cc`), written from its published
//! description: the filter Basho stores under LevelDB's own name,
//! `leveldb.BuiltinBloomFilter2`, with other bits. A bit array of a prime number of
//! bits (the largest prime at most the array's bits, for arrays of fewer than
//! 12,498 bytes; all of its bits beyond), then the byte k. Key i sets, for j in
//! 0..k, bit (h + (j+1)·h2) mod prime (computed in 64 bits), then h += delta,
//! delta being rotate-right(h, 17) of the first h: h is
//! LevelDB's hash with the tail bytes read as plain `char` (signed on x86), h2 the
//! low 32 bits of MurmurHash64A with seed 0x5bd1e995. Sizing: bits = max(n·bpk, 61),
//! grown to the first byte count whose prime holds them.

use leveldb_bloom::hash::{bloom_hash_with, TailBytes};

/// Byte counts below this have a prime bit count; from it on, every bit is used.
const PRIME_TABLE_LEN: u32 = 12_498;
/// MurmurHash64A's seed in bloom2.
const MURMUR_SEED: u32 = 0x5bd1_e995;

/// Whether bloom2 answers "may match" for `key` with `filter`, as Basho's
/// `KeyMayMatch` does: fewer than 2 bytes, "absent"; k above 30, "may match".
pub fn key_may_match(key: &[u8], filter: &[u8]) -> bool {
    let Some((&k, array)) = filter.split_last().filter(|_| filter.len() >= 2) else {
        return false;
    };
    if k > 30 {
        return true;
    }
    let prime = prime_of_bytes(array.len() as u32);
    probes(key, k, prime).all(|bit| array[(bit / 8) as usize] & (1 << (bit % 8)) != 0)
}

/// The filter bloom2 builds for `keys` at `bits_per_key`.
pub fn create_filter(keys: &[&[u8]], bits_per_key: u32) -> Vec<u8> {
    let k = ((f64::from(bits_per_key) * 0.69) as u8).clamp(1, 30);
    let bits = (keys.len() as u32 * bits_per_key).max(61);
    let mut bytes = bits.div_ceil(8);
    while bytes < PRIME_TABLE_LEN && prime_of_bytes(bytes) < bits {
        bytes += 1;
    }
    let prime = prime_of_bytes(bytes);
    let mut filter = vec![0; bytes as usize];
    for key in keys {
        for bit in probes(key, k, prime) {
            filter[(bit / 8) as usize] |= 1 << (bit % 8);
        }
    }
    filter.push(k);
    filter
}

/// The bit positions bloom2 probes for `key`.
fn probes(key: &[u8], k: u8, prime: u32) -> impl Iterator<Item = u32> {
    let mut h = bloom_hash_with(key, TailBytes::Signed);
    let h2 = murmur_hash_64a(key, MURMUR_SEED) as u32;
    let delta = h.rotate_right(17);
    (1..=u64::from(k)).map(move |j| {
        // In 64 bits: the probe index is a size_t.
        let bit = ((u64::from(h) + j * u64::from(h2)) % u64::from(prime.max(1))) as u32;
        h = h.wrapping_add(delta);
        bit
    })
}

/// The bits of an array of `bytes` bytes that bloom2 uses.
fn prime_of_bytes(bytes: u32) -> u32 {
    if bytes >= PRIME_TABLE_LEN {
        return bytes.wrapping_mul(8);
    }
    (1..=bytes * 8).rev().find(|&n| is_prime(n)).unwrap_or(0)
}

fn is_prime(n: u32) -> bool {
    n >= 2
        && (2..)
            .take_while(|d| d * d <= n)
            .all(|d| !n.is_multiple_of(d))
}

/// Austin Appleby's MurmurHash64A (64-bit words little-endian, as on x86-64).
fn murmur_hash_64a(key: &[u8], seed: u32) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = u64::from(seed) ^ (key.len() as u64).wrapping_mul(M);
    let mut words = key.chunks_exact(8);
    for word in &mut words {
        let mut k = u64::from_le_bytes(word.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn primes_are_the_largest_within_the_arrays_bits() {
        assert_eq!(prime_of_bytes(1), 7);
        assert_eq!(prime_of_bytes(8), 61);
        assert_eq!(prime_of_bytes(26), 199);
        assert_eq!(prime_of_bytes(12_497), 99_971);
        assert_eq!(prime_of_bytes(12_498), 99_984);
    }

    #[test]
    fn every_key_matches_its_filter_and_most_others_do_not() {
        let keys: Vec<Vec<u8>> = (0..500u32)
            .map(|i| format!("key{i}\u{e9}").into_bytes())
            .collect();
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
        let filter = create_filter(&refs, 10);
        assert_eq!(filter.last(), Some(&6));
        assert!(refs.iter().all(|key| key_may_match(key, &filter)));
        let false_positives = (0..1000u32)
            .filter(|i| key_may_match(format!("absent{i}").as_bytes(), &filter))
            .count();
        assert!(false_positives < 50, "{false_positives}");
        assert!(!key_may_match(b"x", &[0]));
        assert!(key_may_match(b"x", &[0, 31]));
    }
}
