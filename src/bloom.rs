//! LevelDB's built-in bloom filter policy (util/bloom.cc), filter format
//! `leveldb.BuiltinBloomFilter2`.
//!
//! A filter is a bit array followed by one byte, k, the number of probes. Each key
//! sets k bits chosen by double hashing its 32-bit hash.

mod batch;
mod legacy;
mod remainder;

use crate::hash::hash;
use crate::simd::SimdLevel;
pub use legacy::{Format, LEGACY_POLICY_NAME};
pub(crate) use remainder::FastRemainder;
pub(crate) use remainder::ReciprocalCache;
use remainder::{BitCount, Locate, SmallArray};

/// The name LevelDB stores with every filter block of this format.
pub const POLICY_NAME: &str = c_str_text(POLICY_NAME_C);

/// [`POLICY_NAME`] as a C string, for the C API.
pub(crate) const POLICY_NAME_C: &std::ffi::CStr = c"leveldb.BuiltinBloomFilter2";

/// The text of a C string that is UTF-8 (checked when compiled): so that each name
/// is written once, as a C string, and read as `&str` too.
pub(crate) const fn c_str_text(name: &'static std::ffi::CStr) -> &'static str {
    match name.to_str() {
        Ok(text) => text,
        Err(_) => panic!("a policy name is UTF-8"),
    }
}

/// The seed of LevelDB's `BloomHash`.
pub(crate) const HASH_SEED: u32 = 0xbc9f1d34;

/// Small key sets would get a very high false-positive rate, so a bit array is never
/// shorter than this.
const MIN_BITS: u64 = 64;

/// k is `bits_per_key * 0.69` (≈ ln 2, the optimum), truncated, clamped to
/// `1..=MAX_PROBES`. Readers treat a k byte above this as reserved for other
/// encodings and answer "may match".
pub(crate) const MAX_PROBES: u8 = 30;

/// The smallest filter that matches every key: a one-byte bit array and a reserved k.
/// It is what a filter degrades to when the real one cannot be built.
pub const MATCH_ALL_FILTER: [u8; 2] = [0x00, 0xff];

/// LevelDB's `BloomHash`.
#[inline]
pub fn bloom_hash(key: &[u8]) -> u32 {
    hash(key, HASH_SEED)
}

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

    /// [`POLICY_NAME`], `"leveldb.BuiltinBloomFilter2"` (or, for the legacy format,
    /// [`LEGACY_POLICY_NAME`]): LevelDB stores it with every filter block and ignores
    /// filter blocks of any other name.
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
        self.write_filter_at(keys, out, SimdLevel::active())
    }

    /// [`write_filter`](Self::write_filter), hashing at `level`.
    pub(crate) fn write_filter_at<I>(
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
        if self.filter_len(keys.len()) != Some(out.len()) {
            return Err(WrongFilterLength);
        }
        let (k_byte, array) = out.split_last_mut().ok_or(WrongFilterLength)?;
        *k_byte = self.num_probes;
        array.fill(0);
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
    /// use leveldb_bloom::{bloom::bloom_hash, BloomFilterPolicy};
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
        if self.filter_len(hashes.len()) != Some(out.len()) {
            return Err(WrongFilterLength);
        }
        let (k_byte, array) = out.split_last_mut().ok_or(WrongFilterLength)?;
        *k_byte = self.num_probes;
        array.fill(0);
        match BitCount::new(array.len()) {
            BitCount::Small(bits) => hashes.for_each(|h| set_all(array, h, self.num_probes, bits)),
            BitCount::Huge(bits) => hashes.for_each(|h| set_all(array, h, self.num_probes, bits)),
        }
        Ok(())
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

    /// LevelDB's `KeyMayMatch` (for the legacy format, under either hash reading).
    /// It reads k from the filter and ignores this policy's bits per key, as LevelDB
    /// does.
    ///
    /// ```
    /// use leveldb_bloom::BloomFilterPolicy;
    ///
    /// let policy = BloomFilterPolicy::new(10);
    /// let filter = policy.build_filter(["hello"]);
    /// assert!(policy.key_may_match("hello", &filter));
    /// ```
    pub fn key_may_match(&self, key: impl AsRef<[u8]>, filter: &[u8]) -> bool {
        Filter::with_format(filter, self.format).may_contain(key)
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
/// let bytes = BloomFilterPolicy::new(10).build_filter(&["hello"]);
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
    Probe(Probes<'a>),
    /// The legacy format: probed under either hash reading.
    ProbeEitherReading(Probes<'a>),
}

/// A filter that must be probed: its bit array, k, and its bit count.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Probes<'a> {
    array: &'a [u8],
    num_probes: u8,
    bits: BitCount,
}

impl<'a> Filter<'a> {
    /// Decodes any bytes at all as LevelDB's `KeyMayMatch` would.
    pub fn new(filter: &'a [u8]) -> Self {
        Self::decode(filter, BitCount::new)
    }

    /// Decodes a filter of `format`: [`new`](Self::new) for [`Format::Current`]; for
    /// [`Format::Legacy`] the same decoding, with keys then matched under either hash
    /// reading.
    pub fn with_format(filter: &'a [u8], format: Format) -> Self {
        Self::new(filter).in_format(format)
    }

    /// As [`with_format`](Self::with_format), with the bit count's reciprocal from
    /// `cache`.
    #[inline(always)]
    pub(crate) fn cached(filter: &'a [u8], cache: &ReciprocalCache, format: Format) -> Self {
        Self::decode(filter, |bytes| BitCount::cached(bytes, cache)).in_format(format)
    }

    #[inline(always)]
    fn in_format(self, format: Format) -> Self {
        match (self.answer, format) {
            (Answer::Probe(probes), Format::Legacy) => Self {
                answer: Answer::ProbeEitherReading(probes),
            },
            _ => self,
        }
    }

    #[inline(always)]
    fn decode(filter: &'a [u8], bit_count: impl FnOnce(usize) -> BitCount) -> Self {
        let answer = match filter.split_last() {
            // Shorter than two bytes: not a filter; LevelDB answers "no".
            None => Answer::Never,
            Some((_, [])) => Answer::Never,
            // k = 0 probes nothing, so nothing contradicts the key; above 30 is reserved.
            Some((&k, _)) if k == 0 || k > MAX_PROBES => Answer::Always,
            Some((&num_probes, array)) => Answer::Probe(Probes {
                array,
                num_probes,
                bits: bit_count(array.len()),
            }),
        };
        Self { answer }
    }

    /// Whether `key` (any byte string: `&[u8]`, `&str`, `Vec<u8>`…) may have been
    /// added: `false` is certain, `true` may be a false positive.
    ///
    /// ```
    /// use leveldb_bloom::{BloomFilterPolicy, Filter};
    ///
    /// let filter = BloomFilterPolicy::new(10).build_filter(["hello"]);
    /// assert!(Filter::new(&filter).may_contain("hello"));
    /// assert!(Filter::new(&filter).may_contain(b"hello"));
    /// ```
    #[inline(always)]
    pub fn may_contain(&self, key: impl AsRef<[u8]>) -> bool {
        let key = key.as_ref();
        match self.answer {
            Answer::Never => false,
            Answer::Always => true,
            Answer::Probe(filter) => filter.all_set(bloom_hash(key)),
            Answer::ProbeEitherReading(filter) => filter.all_set_either_reading(key),
        }
    }

    /// Whether a key whose hash is `h` may have been added, probing under that one
    /// hash whatever the filter's format: for readers of another hash reading than
    /// LevelDB ≥ 1.18's (see [`hash_with`](crate::hash::hash_with)).
    ///
    /// ```
    /// use leveldb_bloom::hash::{hash_with, TailBytes};
    /// use leveldb_bloom::{BloomFilterPolicy, Filter};
    ///
    /// let filter = BloomFilterPolicy::new(10).build_filter(&["hello"]);
    /// let h = hash_with(b"hello", 0xbc9f1d34, TailBytes::Signed);
    /// assert!(Filter::new(&filter).may_contain_hash(h));
    /// ```
    pub fn may_contain_hash(&self, h: u32) -> bool {
        match self.answer {
            Answer::Never => false,
            Answer::Always => true,
            Answer::Probe(filter) | Answer::ProbeEitherReading(filter) => filter.all_set(h),
        }
    }

    /// [`may_contain`](Self::may_contain) for many keys: `results[i]` is the answer
    /// for `keys[i]`, the same answer, found faster. Keys are hashed a group at a time
    /// (several at once with AVX2 or AVX-512 where the CPU has them), and the filter's
    /// memory for a group is requested before it is tested.
    ///
    /// ```
    /// use leveldb_bloom::{BloomFilterPolicy, Filter};
    ///
    /// let filter = BloomFilterPolicy::new(10).build_filter(&["hello", "world"]);
    /// let mut results = [false; 3];
    /// Filter::new(&filter).may_contain_batch(&["hello", "world", "other"], &mut results);
    /// assert_eq!(results[..2], [true, true]);
    /// ```
    ///
    /// # Panics
    /// If `results` is not as long as `keys`.
    pub fn may_contain_batch<K, T>(&self, keys: &[K], results: &mut [T])
    where
        K: AsRef<[u8]>,
        T: From<bool>,
    {
        assert_eq!(keys.len(), results.len(), "one result per key");
        let keys = keys.iter().map(AsRef::as_ref);
        self.may_contain_each(keys, results, SimdLevel::active());
    }

    /// The batch query at a given SIMD level; `results` as long as `keys`.
    pub(crate) fn may_contain_each<'k, T>(
        &self,
        keys: impl Iterator<Item = &'k [u8]>,
        results: &mut [T],
        level: SimdLevel,
    ) where
        T: From<bool>,
    {
        match self.answer {
            Answer::Never => results.iter_mut().for_each(|r| *r = false.into()),
            Answer::Always => results.iter_mut().for_each(|r| *r = true.into()),
            Answer::Probe(filter) => batch::query_keys(keys, filter, results, level),
            // Scalar: the SIMD hashers read the tail unsigned only.
            Answer::ProbeEitherReading(filter) => {
                for (key, result) in keys.zip(results) {
                    *result = filter.all_set_either_reading(key).into();
                }
            }
        }
    }
}

impl Probes<'_> {
    /// Whether every probe of hash `h` finds its bit set.
    #[inline(always)]
    fn all_set(self, h: u32) -> bool {
        match self.bits {
            BitCount::Small(r) => all_set_small(self.array, h, self.num_probes, r),
            BitCount::Huge(r) => all_set(self.array, h, self.num_probes, r),
        }
    }
}

/// LevelDB's double hashing: probe i is at `(h + i·δ) mod 2^32`, reduced modulo the
/// bit count, where δ is h rotated right by 17 bits. Bits are numbered LSB first
/// within each byte. Yields each probe's byte and bit.
#[inline(always)]
fn probes<L: Locate>(h: u32, num_probes: u8, bits: L) -> impl Iterator<Item = (usize, u32)> {
    let delta = h.rotate_right(17);
    (0..num_probes).scan(h, move |h, _| {
        let at = bits.locate(*h);
        *h = h.wrapping_add(delta);
        Some(at)
    })
}

/// The bit of probe hash `h`: 1 if set. The byte is always in range, the remainder
/// being below the bit count; were it not, the answer would be 1, "may match", the
/// fail-safe one for a reader (and a compare that is never taken costs next to
/// nothing).
#[inline(always)]
fn probe_bit<L: Locate>(array: &[u8], h: u32, bits: L) -> u8 {
    let (byte, bit) = bits.locate(h);
    array.get(byte).map_or(1, |byte| (byte >> bit) & 1)
}

/// Whether every probe of `h` finds its bit set.
#[inline(always)]
fn all_set<L: Locate>(array: &[u8], h: u32, num_probes: u8, bits: L) -> bool {
    let delta = h.rotate_right(17);
    let mut h = h;
    // Probes are asked for in order, so each one's hash is the one before plus δ.
    all_probes_set(num_probes, |_| {
        let bit = probe_bit(array, h, bits);
        h = h.wrapping_add(delta);
        bit
    })
}

/// [`all_set`] for a bit count below 2^32, the one-key-per-call path: each bit is
/// read with no bounds check to fall back from, so little more than each probe's
/// arithmetic is left.
#[inline(always)]
fn all_set_small(array: &[u8], h: u32, num_probes: u8, bits: FastRemainder) -> bool {
    let Some(array) = SmallArray::new(array, bits) else {
        // Never: a filter's bit count is its array's.
        return all_set(array, h, num_probes, bits);
    };
    let delta = h.rotate_right(17);
    let mut h = h;
    all_probes_set(num_probes, |_| {
        let bit = array.bit(h);
        h = h.wrapping_add(delta);
        bit
    })
}

/// Probes tested per branch in [`all_probes_set`].
pub(crate) const PROBES_PER_BRANCH: u8 = 3;

/// Whether `bit(i)` is 1 for every probe i below `num_probes`, asked for in order of
/// i, stopping at the first group with a 0. Probes are tested
/// three at a time, their bits AND-ed, with one branch per three: whether one probe
/// of an absent key hits a set bit is a coin toss the branch predictor cannot learn,
/// while three rarely all do, so rejecting a key costs a few more loads instead of a
/// mispredicted branch. A present key takes every probe either way.
#[inline(always)]
pub(crate) fn all_probes_set(num_probes: u8, mut bit: impl FnMut(u8) -> u8) -> bool {
    // Counting down what is left, not up to `num_probes`: one value fewer to keep,
    // and none at all where `bit` ignores i.
    let (mut i, mut left) = (0, num_probes);
    while left >= PROBES_PER_BRANCH {
        if bit(i) & bit(i + 1) & bit(i + 2) == 0 {
            return false;
        }
        i += PROBES_PER_BRANCH;
        left -= PROBES_PER_BRANCH;
    }
    while left > 0 {
        if bit(i) == 0 {
            return false;
        }
        i += 1;
        left -= 1;
    }
    true
}

/// Sets every probe bit of `h`.
#[inline(always)]
fn set_all<L: Locate>(array: &mut [u8], h: u32, num_probes: u8, bits: L) {
    for (byte, bit) in probes(h, num_probes, bits) {
        // In range (see `probe_bit`); the check stays, because a bit not set would be
        // a false negative, and a panic turns into the match-all filter instead.
        array[byte] |= 1 << bit;
    }
}

#[cfg(test)]
mod tests;
