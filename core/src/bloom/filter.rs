//! Querying a filter: decoded once, then asked about one key at a time or many.

use super::batch;
use super::probe::{Probes, UNROLLED_PROBES};
use crate::format::{Format, MAX_PROBES};
use crate::hash::bloom_hash;
use crate::same_length_keys::SameLengthKeys;
use crate::simd::SimdLevel;

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

/// What a filter answered for one key ([`Format::answer`]), and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyAnswer {
    /// `false`: the key is certainly absent; `true`: it may have been added.
    pub may_match: bool,
    /// Answered by rule, whatever the key ([`Filter::answers_by_rule`]), rather than
    /// by the filter's bits.
    pub by_rule: bool,
}

impl KeyAnswer {
    const BY_RULE_ABSENT: Self = Self {
        may_match: false,
        by_rule: true,
    };
    const BY_RULE_MAY_MATCH: Self = Self {
        may_match: true,
        by_rule: true,
    };
}

#[derive(Clone, Copy, Debug)]
enum Answer<'a> {
    Never,
    Always,
    Probe(Probes<'a>),
    /// The legacy format: probed under either hash reading.
    ProbeEitherReading(Probes<'a>),
}

impl<'a> Filter<'a> {
    /// Decodes any bytes at all as LevelDB's `KeyMayMatch` would.
    #[inline(always)]
    pub fn new(filter: &'a [u8]) -> Self {
        let answer = match filter {
            // Shorter than two bytes: not a filter; LevelDB answers "no".
            [] | [_] => Answer::Never,
            // k = 6, the usual one, first: its filters then take one test of k.
            [array @ .., UNROLLED_PROBES] => Answer::Probe(Probes {
                array,
                num_probes: UNROLLED_PROBES,
            }),
            // k = 0 probes nothing, so nothing contradicts the key; above 30 is reserved
            // (both in one test: k - 1 wraps around for 0).
            [.., k] if k.wrapping_sub(1) >= MAX_PROBES => Answer::Always,
            [array @ .., k] => Answer::Probe(Probes {
                array,
                num_probes: *k,
            }),
        };
        Self { answer }
    }

    /// Decodes a filter of `format`: [`new`](Self::new) for [`Format::Current`]; for
    /// [`Format::Legacy`] the same decoding, with keys then matched under either hash
    /// reading.
    #[inline(always)]
    pub fn with_format(filter: &'a [u8], format: Format) -> Self {
        let answer = match (Self::new(filter).answer, format) {
            (Answer::Probe(probes), Format::Legacy) => Answer::ProbeEitherReading(probes),
            (answer, _) => answer,
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
        self.may_contain_hashed(key, bloom_hash(key))
    }

    /// [`may_contain`](Self::may_contain) of `key`, whose [`bloom_hash`] is `h`.
    #[inline(always)]
    pub(crate) fn may_contain_hashed(&self, key: &[u8], h: u32) -> bool {
        self.answer_hashed(key, h).may_match
    }

    /// [`may_contain_hashed`](Self::may_contain_hashed), and how it was answered.
    #[inline(always)]
    pub(crate) fn answer_hashed(&self, key: &[u8], h: u32) -> KeyAnswer {
        let by_bits = |may_match| KeyAnswer {
            may_match,
            by_rule: false,
        };
        match self.answer {
            Answer::Never => KeyAnswer::BY_RULE_ABSENT,
            Answer::Always => KeyAnswer::BY_RULE_MAY_MATCH,
            Answer::Probe(filter) => by_bits(filter.all_set(h)),
            Answer::ProbeEitherReading(filter) => by_bits(filter.all_set_either_reading(key, h)),
        }
    }

    /// Whether this filter answers every key by a rule rather than by its bits:
    /// shorter than two bytes (every key "absent"), or k = 0 or above 30 (every key
    /// "may match"). For counting how queries were answered.
    ///
    /// ```
    /// use leveldb_bloom::{Filter, MATCH_ALL_FILTER};
    ///
    /// assert!(Filter::new(&MATCH_ALL_FILTER).answers_by_rule());
    /// assert!(!Filter::new(&[0x01, 0x06]).answers_by_rule());
    /// ```
    #[inline(always)]
    pub fn answers_by_rule(&self) -> bool {
        matches!(self.answer, Answer::Never | Answer::Always)
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
    #[inline(always)]
    pub fn may_contain_hash(&self, h: u32) -> bool {
        match self.answer {
            Answer::Never => false,
            Answer::Always => true,
            Answer::Probe(filter) | Answer::ProbeEitherReading(filter) => filter.all_set(h),
        }
    }

    /// The bits that a key whose hash is `h` probes, in LevelDB's order (see
    /// [`hash_with`](crate::hash::hash_with) for the hash), each as its bit number
    /// (bits numbered from the first byte's least significant) and whether it is set:
    /// what [`may_contain_hash`](Self::may_contain_hash) tests. Empty for a filter
    /// answered by rule, without probing (shorter than two bytes, or k = 0 or above
    /// 30). For tools that show a query.
    ///
    /// ```
    /// use leveldb_bloom::hash::bloom_hash;
    /// use leveldb_bloom::{BloomFilterPolicy, Filter};
    ///
    /// let bytes = BloomFilterPolicy::new(10).build_filter(&["hello"]);
    /// let filter = Filter::new(&bytes);
    /// let probes = filter.probe_bits(bloom_hash(b"hello"));
    /// assert_eq!(probes.len(), 6);
    /// assert!(probes.iter().all(|&(bit, set)| set && bit < 64));
    /// let other = filter.probe_bits(bloom_hash(b"other"));
    /// assert_eq!(other.iter().all(|&(_, set)| set), filter.may_contain(b"other"));
    /// ```
    pub fn probe_bits(&self, h: u32) -> Vec<(u64, bool)> {
        match self.answer {
            Answer::Never | Answer::Always => Vec::new(),
            Answer::Probe(filter) | Answer::ProbeEitherReading(filter) => filter.each(h),
        }
    }

    /// [`may_contain`](Self::may_contain) for many keys: `results[i]` is the answer
    /// for `keys[i]`, the same answer, found faster; returns how many answers are
    /// "absent". Keys are hashed a group at a time (several at once with AVX2 or
    /// AVX-512 where the CPU has them), and the filter's memory for a group is
    /// requested before it is tested.
    ///
    /// ```
    /// use leveldb_bloom::{BloomFilterPolicy, Filter};
    ///
    /// let filter = BloomFilterPolicy::new(10).build_filter(&["hello", "world"]);
    /// let mut results = [false; 3];
    /// let absent = Filter::new(&filter).may_contain_batch(&["hello", "world", "other"], &mut results);
    /// assert_eq!(results[..2], [true, true]);
    /// assert_eq!(absent, usize::from(!results[2]));
    /// ```
    ///
    /// # Panics
    /// If `results` is not as long as `keys`.
    pub fn may_contain_batch<K, T>(&self, keys: &[K], results: &mut [T]) -> usize
    where
        K: AsRef<[u8]>,
        T: From<bool>,
    {
        assert_eq!(keys.len(), results.len(), "one result per key");
        let keys = keys.iter().map(AsRef::as_ref);
        self.may_contain_each(keys, results)
    }

    /// [`may_contain_batch`](Self::may_contain_batch) for keys given by an iterator,
    /// which must yield exactly `results.len()` keys: `results[i]` is the answer for
    /// key i.
    pub fn may_contain_each<'k, T>(
        &self,
        keys: impl Iterator<Item = &'k [u8]>,
        results: &mut [T],
    ) -> usize
    where
        T: From<bool>,
    {
        self.may_contain_each_at(keys, results, SimdLevel::best())
    }

    /// [`may_contain_each`](Self::may_contain_each), hashing keys at `level` (see
    /// [`SimdLevel`]); the same answers at every level.
    pub fn may_contain_each_at<'k, T>(
        &self,
        keys: impl Iterator<Item = &'k [u8]>,
        results: &mut [T],
        level: SimdLevel,
    ) -> usize
    where
        T: From<bool>,
    {
        self.batch_at(batch::EachKey(keys), results, level)
    }

    /// [`may_contain_batch`](Self::may_contain_batch) for keys of one length given
    /// by where each starts, as a C caller holds them: each key's bytes are read
    /// where they are, with no slice made of each.
    ///
    /// # Panics
    /// If `results` is not as long as `keys`.
    pub fn may_contain_same_length<T>(&self, keys: SameLengthKeys<'_>, results: &mut [T]) -> usize
    where
        T: From<bool>,
    {
        self.may_contain_same_length_at(keys, results, SimdLevel::best())
    }

    /// [`may_contain_same_length`](Self::may_contain_same_length), hashing keys at
    /// `level` (see [`SimdLevel`]); the same answers at every level.
    ///
    /// # Panics
    /// If `results` is not as long as `keys`.
    pub fn may_contain_same_length_at<T>(
        &self,
        keys: SameLengthKeys<'_>,
        results: &mut [T],
        level: SimdLevel,
    ) -> usize
    where
        T: From<bool>,
    {
        assert_eq!(keys.len(), results.len(), "one result per key");
        self.batch_at(keys, results, level)
    }

    /// The batch query at a given SIMD level; returns how many answers are "absent".
    pub(crate) fn batch_at<'k, T>(
        &self,
        keys: impl batch::BatchKeys<'k>,
        results: &mut [T],
        level: SimdLevel,
    ) -> usize
    where
        T: From<bool>,
    {
        match self.answer {
            Answer::Never => {
                results.iter_mut().for_each(|r| *r = false.into());
                results.len()
            }
            Answer::Always => {
                results.iter_mut().for_each(|r| *r = true.into());
                0
            }
            Answer::Probe(filter) => batch::query_keys(keys, filter, results, level),
            // Scalar: the SIMD hashers read the tail unsigned only.
            Answer::ProbeEitherReading(filter) => {
                let mut absent = 0;
                for (key, result) in keys.slices().zip(results) {
                    let set = filter.all_set_either_reading(key, bloom_hash(key));
                    absent += usize::from(!set);
                    *result = set.into();
                }
                absent
            }
        }
    }
}
