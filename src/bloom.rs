//! LevelDB's built-in bloom filter policy (util/bloom.cc), filter format
//! `leveldb.BuiltinBloomFilter2`.
//!
//! A filter is a bit array followed by one byte, k, the number of probes. Each key
//! sets k bits chosen by double hashing its 32-bit hash.

use crate::hash::hash;

/// The name LevelDB stores with every filter block of this format.
pub const POLICY_NAME: &str = "leveldb.BuiltinBloomFilter2";

/// The seed of LevelDB's `BloomHash`.
const HASH_SEED: u32 = 0xbc9f1d34;

/// Small key sets would get a very high false-positive rate, so a bit array is never
/// shorter than this.
const MIN_BITS: u64 = 64;

/// k is `bits_per_key * 0.69` (≈ ln 2, the optimum), truncated, clamped to
/// `1..=MAX_PROBES`. Readers treat a k byte above this as reserved for other
/// encodings and answer "may match".
const MAX_PROBES: u8 = 30;

/// The smallest filter that matches every key: a one-byte bit array and a reserved k.
/// It is what a filter degrades to when the real one cannot be built.
pub const MATCH_ALL_FILTER: [u8; 2] = [0x00, 0xff];

/// LevelDB's `BloomHash`.
pub fn bloom_hash(key: &[u8]) -> u32 {
    hash(key, HASH_SEED)
}

/// LevelDB's `NewBloomFilterPolicy(bits_per_key)`.
///
/// ```
/// use leveldb_bloom::{BloomFilterPolicy, Filter};
///
/// let policy = BloomFilterPolicy::new(10);
/// let filter = policy.create_filter(&["hello", "world"]);
/// assert_eq!(filter, [0x11, 0x40, 0x00, 0x41, 0x44, 0x10, 0x40, 0x10, 0x06]);
/// assert!(Filter::new(&filter).may_contain(b"hello"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BloomFilterPolicy {
    bits_per_key: u32,
    num_probes: u8,
}

/// A buffer handed to [`BloomFilterPolicy::write_filter`] was not exactly
/// [`BloomFilterPolicy::filter_len`] bytes long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WrongFilterLength;

impl BloomFilterPolicy {
    /// The policy that spends about `bits_per_key` bits of filter on each key.
    ///
    /// Each key sets k = `bits_per_key × 0.69` bits (≈ ln 2 per bit, the optimum),
    /// truncated and kept within 1..=30. 10 bits per key gives k = 6 and about 1% false
    /// positives; each further bit per key multiplies them by about 0.62.
    ///
    /// ```
    /// use leveldb_bloom::BloomFilterPolicy;
    ///
    /// assert_eq!(BloomFilterPolicy::new(10).num_probes(), 6);
    /// assert_eq!(BloomFilterPolicy::new(0).num_probes(), 1);
    /// assert_eq!(BloomFilterPolicy::new(100).num_probes(), 30);
    /// ```
    pub fn new(bits_per_key: u32) -> Self {
        // `static_cast<size_t>(bits_per_key * 0.69)`: double arithmetic, truncated.
        let k = (f64::from(bits_per_key) * 0.69) as u64;
        Self {
            bits_per_key,
            num_probes: k.clamp(1, MAX_PROBES.into()) as u8,
        }
    }

    /// The `bits_per_key` this policy was made with.
    pub fn bits_per_key(&self) -> u32 {
        self.bits_per_key
    }

    /// k, the number of bits each key sets (1..=30).
    pub fn num_probes(&self) -> u8 {
        self.num_probes
    }

    /// [`POLICY_NAME`], `"leveldb.BuiltinBloomFilter2"`: LevelDB stores it with every
    /// filter block and ignores filter blocks of any other name.
    pub fn name(&self) -> &'static str {
        POLICY_NAME
    }

    /// The length in bytes of the filter for `num_keys` keys, k byte included, or
    /// `None` when it does not fit in memory's address range.
    ///
    /// LevelDB multiplies `n * bits_per_key` in `int`; where that overflows its
    /// behaviour is undefined, and this computes the size LevelDB meant, in 64 bits.
    pub fn filter_len(&self, num_keys: usize) -> Option<usize> {
        let bits = u64::try_from(num_keys)
            .ok()?
            .checked_mul(self.bits_per_key.into())?
            .max(MIN_BITS);
        let len = usize::try_from(bits.div_ceil(8).checked_add(1)?).ok()?;
        (len <= isize::MAX as usize).then_some(len)
    }

    /// Writes the filter for `keys` into `out`, which must be exactly
    /// [`filter_len`](Self::filter_len) bytes long. Duplicate keys are fine.
    /// Never allocates.
    ///
    /// ```
    /// use leveldb_bloom::{BloomFilterPolicy, WrongFilterLength};
    ///
    /// let policy = BloomFilterPolicy::new(10);
    /// let keys = [b"hello", b"world"];
    /// let mut out = vec![0; policy.filter_len(keys.len()).unwrap()];
    /// policy.write_filter(keys, &mut out)?;
    /// assert_eq!(out, policy.create_filter(&keys));
    ///
    /// assert_eq!(policy.write_filter(keys, &mut [0; 3]), Err(WrongFilterLength));
    /// # Ok::<(), WrongFilterLength>(())
    /// ```
    pub fn write_filter<I>(&self, keys: I, out: &mut [u8]) -> Result<(), WrongFilterLength>
    where
        I: IntoIterator,
        I::IntoIter: ExactSizeIterator,
        I::Item: AsRef<[u8]>,
    {
        let keys = keys.into_iter();
        if self.filter_len(keys.len()) != Some(out.len()) {
            return Err(WrongFilterLength);
        }
        let (k_byte, array) = out.split_last_mut().ok_or(WrongFilterLength)?;
        *k_byte = self.num_probes;
        array.fill(0);
        let bits = BitCount::of(array);
        for key in keys {
            for pos in probes(bloom_hash(key.as_ref()), self.num_probes, bits) {
                array[pos / 8] |= 1 << (pos % 8);
            }
        }
        Ok(())
    }

    /// Appends the filter for `keys` to `dst`, as LevelDB's `CreateFilter` does. When
    /// the filter cannot be sized or allocated, appends [`MATCH_ALL_FILTER`] instead.
    ///
    /// ```
    /// use leveldb_bloom::{BloomFilterPolicy, Filter};
    ///
    /// let policy = BloomFilterPolicy::new(10);
    /// let mut block = b"header".to_vec();
    /// policy.append_filter(&["hello", "world"], &mut block);
    /// let filter = Filter::new(&block[6..]);
    /// assert!(filter.may_contain(b"hello") && filter.may_contain(b"world"));
    /// ```
    pub fn append_filter<K: AsRef<[u8]>>(&self, keys: &[K], dst: &mut Vec<u8>) {
        let start = dst.len();
        let Some(len) = self.filter_len(keys.len()) else {
            return dst.extend_from_slice(&MATCH_ALL_FILTER);
        };
        if dst.try_reserve_exact(len).is_err() {
            return dst.extend_from_slice(&MATCH_ALL_FILTER);
        }
        dst.resize(start + len, 0);
        let written = self.write_filter(keys, &mut dst[start..]);
        debug_assert_eq!(written, Ok(()), "the buffer was sized by filter_len");
    }

    /// The filter for `keys`; see [`append_filter`](Self::append_filter).
    pub fn create_filter<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<u8> {
        let mut filter = Vec::new();
        self.append_filter(keys, &mut filter);
        filter
    }

    /// LevelDB's `KeyMayMatch`. It reads k from the filter and ignores this policy's
    /// own settings, as LevelDB does.
    pub fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        Filter::new(filter).may_contain(key)
    }
}

/// A filter's bytes, decoded once for any number of queries.
///
/// Any bytes are accepted and answered as LevelDB answers them: fewer than two bytes
/// match nothing, and a last (k) byte of 0 or above 30 matches everything.
///
/// ```
/// use leveldb_bloom::{BloomFilterPolicy, Filter, MATCH_ALL_FILTER};
///
/// let bytes = BloomFilterPolicy::new(10).create_filter(&["hello"]);
/// assert!(Filter::new(&bytes).may_contain(b"hello"));
/// assert!(!Filter::new(&[]).may_contain(b"hello"));
/// assert!(Filter::new(&MATCH_ALL_FILTER).may_contain(b"anything"));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Filter<'a> {
    answer: Answer<'a>,
}

#[derive(Clone, Copy, Debug)]
enum Answer<'a> {
    Never,
    Always,
    Probe {
        array: &'a [u8],
        num_probes: u8,
        bits: BitCount,
    },
}

impl<'a> Filter<'a> {
    /// Decodes any bytes at all as LevelDB's `KeyMayMatch` would.
    pub fn new(filter: &'a [u8]) -> Self {
        let answer = match filter.split_last() {
            // Shorter than two bytes: not a filter; LevelDB answers "no".
            None => Answer::Never,
            Some((_, [])) => Answer::Never,
            // k = 0 probes nothing, so nothing contradicts the key; above 30 is reserved.
            Some((&k, _)) if k == 0 || k > MAX_PROBES => Answer::Always,
            Some((&num_probes, array)) => Answer::Probe {
                array,
                num_probes,
                bits: BitCount::of(array),
            },
        };
        Self { answer }
    }

    /// Whether `key` may have been added: `false` is certain, `true` may be a false positive.
    pub fn may_contain(&self, key: &[u8]) -> bool {
        match self.answer {
            Answer::Never => false,
            Answer::Always => true,
            Answer::Probe {
                array,
                num_probes,
                bits,
            } => probes(bloom_hash(key), num_probes, bits)
                .all(|pos| array[pos / 8] & (1 << (pos % 8)) != 0),
        }
    }
}

/// LevelDB's double hashing: probe i is at `(h + i·δ) mod 2^32`, reduced modulo the
/// bit count, where δ is h rotated right by 17 bits. Bits are numbered LSB first
/// within each byte.
fn probes(h: u32, num_probes: u8, bits: BitCount) -> impl Iterator<Item = usize> {
    let delta = h.rotate_right(17);
    (0..num_probes).scan(h, move |h, _| {
        let pos = bits.reduce(*h);
        *h = h.wrapping_add(delta);
        Some(pos as usize)
    })
}

/// The bit count of a filter, with a precomputed reciprocal so that `h % bits` costs
/// two multiplications instead of a 64-bit division (Lemire, Kaser and Kurz, "Faster
/// Remainder by Direct Computation", 2019: exact for every 32-bit h and divisor).
#[derive(Clone, Copy, Debug)]
pub(crate) struct BitCount {
    bits: u64,
    reciprocal: u64,
}

impl BitCount {
    fn of(array: &[u8]) -> Self {
        Self::new(array.len() as u64 * 8)
    }

    /// `bits` must be at least 1.
    pub(crate) fn new(bits: u64) -> Self {
        let reciprocal = match u32::try_from(bits) {
            Ok(d) => (u64::MAX / u64::from(d)).wrapping_add(1),
            Err(_) => 0,
        };
        Self { bits, reciprocal }
    }

    /// `h % bits` computed in 64 bits, as LevelDB's `size_t` arithmetic does: a bit
    /// count of 2^32 or more leaves h unchanged.
    pub(crate) fn reduce(self, h: u32) -> u32 {
        if self.bits > u64::from(u32::MAX) {
            return h;
        }
        let fraction = self.reciprocal.wrapping_mul(u64::from(h));
        ((u128::from(fraction) * u128::from(self.bits)) >> 64) as u32
    }
}

#[cfg(test)]
mod tests;
