//! Keys of one length given by where each starts (an array of pointers, as a C
//! caller holds its keys), queried without making a slice of each.

use std::marker::PhantomData;

use crate::simd::{self, SimdLevel};

/// Keys that all have [`key_len`](Self::key_len) bytes, each given by a pointer to
/// its first byte, for
/// [`Filter::may_contain_same_length`](crate::Filter::may_contain_same_length): made
/// from the pointers and the one length ([`new`](Self::new)).
///
/// ```
/// use leveldb_bloom::{BloomFilterPolicy, Filter, SameLengthKeys};
///
/// let keys = [*b"apple", *b"lemon", *b"melon"];
/// let filter = BloomFilterPolicy::new(10).build_filter(&keys);
/// let starts = keys.each_ref().map(|key| key.as_ptr());
/// // SAFETY: each pointer is to 5 bytes of `keys`, which outlives `starts`.
/// let same_length = unsafe { SameLengthKeys::new(&starts, 5) };
/// let mut results = [false; 3];
/// Filter::new(&filter).may_contain_same_length(same_length, &mut results);
/// assert_eq!(results, [true; 3]);
/// ```
#[derive(Clone, Copy, Debug)]
pub struct SameLengthKeys<'a> {
    starts: &'a [*const u8],
    key_len: usize,
    /// The keys' bytes are borrowed for `'a`.
    _bytes: PhantomData<&'a [u8]>,
}

impl<'a> SameLengthKeys<'a> {
    /// The keys of `key_len` bytes that start at `starts`.
    ///
    /// # Safety
    /// For `'a`, every pointer in `starts` must be valid for reads of `key_len` bytes
    /// that nothing writes to, as [`std::slice::from_raw_parts`] requires: in
    /// particular non-NULL, even when `key_len` is 0.
    pub unsafe fn new(starts: &'a [*const u8], key_len: usize) -> Self {
        Self {
            starts,
            key_len,
            _bytes: PhantomData,
        }
    }

    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    /// Whether there are no keys.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Every key's length.
    pub fn key_len(&self) -> usize {
        self.key_len
    }

    /// `out[i]`: the hash of key i, computed at `level`.
    pub(crate) fn bloom_hashes(&self, level: SimdLevel, out: &mut [u32]) {
        // SAFETY: every start is readable for `key_len` bytes, per `new`'s contract.
        unsafe { simd::bloom_hashes_same_length(level, self.starts, self.key_len, out) }
    }

    /// The keys in order, as slices.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &'a [u8]> + use<'a> {
        let key_len = self.key_len;
        self.starts.iter().map(move |&start| {
            // SAFETY: readable for `key_len` bytes for 'a, per `new`'s contract.
            unsafe { std::slice::from_raw_parts(start, key_len) }
        })
    }

    /// The first `at` keys (all if there are fewer) and the rest.
    pub(crate) fn split_at(&self, at: usize) -> (Self, Self) {
        let (head, tail) = self.starts.split_at(at.min(self.starts.len()));
        (
            Self {
                starts: head,
                ..*self
            },
            Self {
                starts: tail,
                ..*self
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_random::random;
    use crate::{BloomFilterPolicy, Filter};

    fn keys_of_length(count: usize, len: usize, seed: u64) -> Vec<Vec<u8>> {
        let mut state = seed;
        (0..count)
            .map(|_| (0..len).map(|_| random(&mut state) as u8).collect())
            .collect()
    }

    /// At every level, for keys of lengths around the vector paths' edges (below
    /// 16 bytes, whole 16-byte chunks, words left over, tail bytes), in batches of
    /// every size around a group's, in both formats and in filters of every kind:
    /// the answers of one key at a time.
    #[test]
    fn every_level_answers_as_one_key_at_a_time() {
        for len in [0, 1, 3, 4, 15, 16, 17, 20, 21, 31, 32, 36, 64, 100] {
            let present = keys_of_length(700, len, len as u64);
            let absent = keys_of_length(900, len, 1000 + len as u64);
            let queries: Vec<&[u8]> = present.iter().chain(&absent).map(Vec::as_slice).collect();
            let starts: Vec<*const u8> = queries.iter().map(|key| key.as_ptr()).collect();
            let mut filters = vec![vec![], vec![0], vec![0xff, 31], vec![0x5a; 40]];
            for policy in [BloomFilterPolicy::new(10), BloomFilterPolicy::legacy(10)] {
                filters.push(policy.build_filter(&present));
            }
            for level in SimdLevel::each_available() {
                for (filter, format) in filters
                    .iter()
                    .flat_map(|f| [(f, crate::Format::Current), (f, crate::Format::Legacy)])
                {
                    let reader = Filter::with_format(filter, format);
                    let expected: Vec<bool> =
                        queries.iter().map(|key| reader.may_contain(key)).collect();
                    for window in [1, 15, 16, 17, 63, 64, 65, 129, queries.len()] {
                        for start in (0..queries.len()).step_by(window.max(401)) {
                            let end = (start + window).min(queries.len());
                            // SAFETY: each start is of a key of `len` bytes in `present`
                            // or `absent`, both alive and unchanged here.
                            let keys = unsafe { SameLengthKeys::new(&starts[start..end], len) };
                            let mut results = vec![7u8; end - start];
                            reader.batch_at(keys, &mut results, level);
                            assert!(
                                results.iter().zip(&expected[start..end]).all(|(&r, &e)| r == u8::from(e)),
                                "{:?}, {format:?}, filter of {} bytes, keys of {len} bytes, {start}..{end}",
                                level.name(),
                                filter.len()
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn views_and_splits() {
        let keys = [*b"abc", *b"def", *b"ghi"];
        let starts = keys.each_ref().map(|key| key.as_ptr());
        // SAFETY: each start is of 3 bytes of `keys`, alive and unchanged here.
        let keys = unsafe { SameLengthKeys::new(&starts, 3) };
        assert_eq!((keys.len(), keys.key_len(), keys.is_empty()), (3, 3, false));
        assert_eq!(keys.iter().collect::<Vec<_>>(), [b"abc", b"def", b"ghi"]);
        let (head, tail) = keys.split_at(2);
        assert_eq!((head.len(), tail.len()), (2, 1));
        assert_eq!(tail.iter().next(), Some(&b"ghi"[..]));
        let (all, none) = keys.split_at(64);
        assert_eq!((all.len(), none.is_empty()), (3, true));
    }
}
