//! LevelDB's built-in bloom filter policy (its `BloomFilterPolicy`): building filters
//! ([`BloomFilterPolicy`]) and querying them ([`Filter`]), one key at a time or many
//! at once (`batch`), in the current format or the legacy one (`legacy`).

#![forbid(unsafe_code)]

mod batch;
mod filter;
mod legacy;
mod probe;

use crate::bit_position::BitCount;
use crate::format::{Format, MATCH_ALL_FILTER, MAX_PROBES, MIN_BITS};
use crate::hash::bloom_hash;
use crate::simd::SimdLevel;
pub use filter::{Filter, KeyAnswer};
use probe::set_all;

/// LevelDB's `NewBloomFilterPolicy(bits_per_key)`.
///
/// ```
/// use leveldb_bloom::{BloomFilterPolicy, Filter};
///
/// let policy = BloomFilterPolicy::new(10);
/// let filter = policy.build_filter(&["hello", "world"]);
/// assert_eq!(filter, [0x11, 0x40, 0x00, 0x41, 0x44, 0x10, 0x40, 0x10, 0x06]);
/// assert!(Filter::new(&filter).may_contain(b"hello"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BloomFilterPolicy {
    bits_per_key: u32,
    num_probes: u8,
    format: Format,
}

/// A buffer handed to [`BloomFilterPolicy::write_filter`] was not exactly
/// [`BloomFilterPolicy::filter_len`] bytes long.
///
/// ```
/// use leveldb_bloom::BloomFilterPolicy;
///
/// fn build(out: &mut [u8]) -> Result<(), Box<dyn std::error::Error>> {
///     BloomFilterPolicy::new(10).write_filter(["key"], out)?;
///     Ok(())
/// }
/// let error = build(&mut [0; 3]).unwrap_err();
/// assert_eq!(error.to_string(), "the buffer is not the filter's length");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WrongFilterLength;

impl std::fmt::Display for WrongFilterLength {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the buffer is not the filter's length")
    }
}

impl std::error::Error for WrongFilterLength {}

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
        Self::with_format(bits_per_key, Format::Current)
    }

    /// The policy of the legacy format, `leveldb.BuiltinBloomFilter` (see
    /// [`Format::Legacy`]): it reads the filters goleveldb and LevelDB before 1.18 (on
    /// x86 or ARM) wrote, and writes filters all of them read. Same sizing and k as
    /// [`new`](Self::new).
    ///
    /// ```
    /// use leveldb_bloom::BloomFilterPolicy;
    ///
    /// let policy = BloomFilterPolicy::legacy(10);
    /// assert_eq!(policy.name(), "leveldb.BuiltinBloomFilter");
    /// // A key ending in a byte >= 0x80 sets the bits of both hash readings.
    /// let filter = policy.build_filter(&[b"caf\xc3\xa9"]);
    /// assert!(policy.key_may_match(b"caf\xc3\xa9", &filter));
    /// ```
    pub fn legacy(bits_per_key: u32) -> Self {
        Self::with_format(bits_per_key, Format::Legacy)
    }

    /// The policy of `format` that spends about `bits_per_key` bits on each key.
    pub fn with_format(bits_per_key: u32, format: Format) -> Self {
        // `static_cast<size_t>(bits_per_key * 0.69)`: double arithmetic, truncated.
        let k = (f64::from(bits_per_key) * 0.69) as u64;
        Self {
            bits_per_key,
            num_probes: k.clamp(1, MAX_PROBES.into()) as u8,
            format,
        }
    }

    /// The format of the filters this policy writes and reads.
    pub fn format(&self) -> Format {
        self.format
    }

    /// The `bits_per_key` this policy was made with.
    pub fn bits_per_key(&self) -> u32 {
        self.bits_per_key
    }

    /// k, the number of bits each key sets (1..=30).
    pub fn num_probes(&self) -> u8 {
        self.num_probes
    }

    /// [`POLICY_NAME`](crate::POLICY_NAME), `"leveldb.BuiltinBloomFilter2"` (or, for
    /// the legacy format, [`LEGACY_POLICY_NAME`](crate::LEGACY_POLICY_NAME)): LevelDB
    /// stores it with every filter block and ignores filter blocks of any other name.
    pub fn name(&self) -> &'static str {
        self.format.name()
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
    /// assert_eq!(out, policy.build_filter(&keys));
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
        self.write_filter_at(keys, out, SimdLevel::best())
    }

    /// [`write_filter`](Self::write_filter), hashing keys at `level` (see
    /// [`SimdLevel`]); the same bytes at every level.
    pub fn write_filter_at<I>(
        &self,
        keys: I,
        out: &mut [u8],
        level: SimdLevel,
    ) -> Result<(), WrongFilterLength>
    where
        I: IntoIterator,
        I::IntoIter: ExactSizeIterator,
        I::Item: AsRef<[u8]>,
    {
        let keys = keys.into_iter();
        let array = self.empty_filter(keys.len(), out)?;
        match self.format {
            Format::Current => batch::add_keys(keys, array, self.num_probes, level),
            Format::Legacy => legacy::add_keys_both_readings(keys, array, self.num_probes),
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
    pub fn append_filter<I>(&self, keys: I, dst: &mut Vec<u8>)
    where
        I: IntoIterator,
        I::IntoIter: ExactSizeIterator,
        I::Item: AsRef<[u8]>,
    {
        let keys = keys.into_iter();
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

    /// Writes into `out` the filter of keys given by their hashes, each setting the
    /// probe bits of that one hash: the filter of a writer with another hash reading
    /// (see [`hash_with`](crate::hash::hash_with)). `out` must be exactly
    /// [`filter_len`](Self::filter_len) bytes long for that many hashes.
    ///
    /// ```
    /// use leveldb_bloom::{hash::bloom_hash, BloomFilterPolicy};
    ///
    /// let policy = BloomFilterPolicy::new(10);
    /// let mut out = vec![0; policy.filter_len(2).unwrap()];
    /// policy.write_filter_of_hashes([bloom_hash(b"hello"), bloom_hash(b"world")], &mut out)?;
    /// assert_eq!(out, policy.build_filter(&["hello", "world"]));
    /// # Ok::<(), leveldb_bloom::WrongFilterLength>(())
    /// ```
    pub fn write_filter_of_hashes<I>(
        &self,
        hashes: I,
        out: &mut [u8],
    ) -> Result<(), WrongFilterLength>
    where
        I: IntoIterator<Item = u32>,
        I::IntoIter: ExactSizeIterator,
    {
        let hashes = hashes.into_iter();
        let array = self.empty_filter(hashes.len(), out)?;
        match BitCount::new(array.len()) {
            BitCount::Small(bits) => hashes.for_each(|h| set_all(array, h, self.num_probes, bits)),
            BitCount::Huge(bits) => hashes.for_each(|h| set_all(array, h, self.num_probes, bits)),
        }
        Ok(())
    }

    /// Makes `out`, which must be the filter's length for `num_keys` keys, a filter
    /// with no bit set: k in its last byte; returns the bit array before it.
    fn empty_filter<'o>(
        &self,
        num_keys: usize,
        out: &'o mut [u8],
    ) -> Result<&'o mut [u8], WrongFilterLength> {
        if self.filter_len(num_keys) != Some(out.len()) {
            return Err(WrongFilterLength);
        }
        let (k_byte, array) = out.split_last_mut().ok_or(WrongFilterLength)?;
        *k_byte = self.num_probes;
        array.fill(0);
        Ok(array)
    }

    /// The filter for `keys`, any collection of byte strings; see
    /// [`append_filter`](Self::append_filter). (LevelDB calls it `CreateFilter`; the
    /// name differs so as not to clash with rusty-leveldb's `FilterPolicy`.)
    ///
    /// ```
    /// use leveldb_bloom::BloomFilterPolicy;
    ///
    /// let policy = BloomFilterPolicy::new(10);
    /// let words = vec![String::from("hello"), String::from("world")];
    /// let from_strings = policy.build_filter(&words);
    /// let from_bytes = policy.build_filter([b"hello", b"world"]);
    /// let from_iterator = policy.build_filter(words.iter().map(String::as_bytes));
    /// assert_eq!(from_strings, from_bytes);
    /// assert_eq!(from_strings, from_iterator);
    /// ```
    pub fn build_filter<I>(&self, keys: I) -> Vec<u8>
    where
        I: IntoIterator,
        I::IntoIter: ExactSizeIterator,
        I::Item: AsRef<[u8]>,
    {
        let mut filter = Vec::new();
        self.append_filter(keys, &mut filter);
        filter
    }

    /// LevelDB's `KeyMayMatch` (for the legacy format, under either hash reading):
    /// [`Format::key_may_match`] under this policy's format. It reads k from the
    /// filter and ignores this policy's bits per key, as LevelDB does.
    ///
    /// ```
    /// use leveldb_bloom::BloomFilterPolicy;
    ///
    /// let policy = BloomFilterPolicy::new(10);
    /// let filter = policy.build_filter(["hello"]);
    /// assert!(policy.key_may_match("hello", &filter));
    /// ```
    #[inline(always)]
    pub fn key_may_match(&self, key: impl AsRef<[u8]>, filter: &[u8]) -> bool {
        self.format.key_may_match(key, filter)
    }

    /// `filter` (any bytes) read under this policy's format, for any number of
    /// queries: [`Filter::with_format`].
    ///
    /// ```
    /// use leveldb_bloom::BloomFilterPolicy;
    ///
    /// let policy = BloomFilterPolicy::legacy(10);
    /// let bytes = policy.build_filter(["hello"]);
    /// let filter = policy.read_filter(&bytes);
    /// assert!(filter.may_contain("hello") && !filter.answers_by_rule());
    /// ```
    #[inline(always)]
    pub fn read_filter<'a>(&self, filter: &'a [u8]) -> Filter<'a> {
        Filter::with_format(filter, self.format)
    }
}

impl Format {
    /// LevelDB's `KeyMayMatch` of `key` in `filter` (any bytes) under this format
    /// (for the legacy one, under either hash reading): what a policy of this
    /// format answers, whatever its bits per key, for callers that know the format
    /// and nothing else.
    ///
    /// ```
    /// use leveldb_bloom::{BloomFilterPolicy, Format};
    ///
    /// let filter = BloomFilterPolicy::new(10).build_filter(["hello"]);
    /// assert!(Format::Current.key_may_match("hello", &filter));
    /// ```
    #[inline(always)]
    pub fn key_may_match(self, key: impl AsRef<[u8]>, filter: &[u8]) -> bool {
        self.answer(key, filter).may_match
    }

    /// [`key_may_match`](Self::key_may_match), and whether the filter answered by
    /// rule rather than by its bits ([`Filter::answers_by_rule`]): for counting
    /// queries, at no cost beyond the answer's.
    ///
    /// ```
    /// use leveldb_bloom::{Format, KeyAnswer, MATCH_ALL_FILTER};
    ///
    /// let answer = Format::Current.answer("hello", &MATCH_ALL_FILTER);
    /// assert_eq!(answer, KeyAnswer { may_match: true, by_rule: true });
    /// ```
    #[inline(always)]
    pub fn answer(self, key: impl AsRef<[u8]>, filter: &[u8]) -> KeyAnswer {
        let key = key.as_ref();
        match self {
            // Hashed before the filter is decoded: the hash's loop then runs with only
            // the filter's slice waiting, and needs no registers saved to do so.
            Format::Current => {
                let h = bloom_hash(key);
                Filter::new(filter).answer_hashed(key, h)
            }
            Format::Legacy => legacy_answer(key, filter),
        }
    }
}

/// [`Format::answer`] in the legacy format: out of the current format's path, which
/// keeps no register for it.
#[inline(never)]
fn legacy_answer(key: &[u8], filter: &[u8]) -> KeyAnswer {
    let h = bloom_hash(key);
    Filter::with_format(filter, Format::Legacy).answer_hashed(key, h)
}

#[cfg(test)]
mod tests;
