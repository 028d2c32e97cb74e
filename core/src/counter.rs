//! Counting what filters answer, for a program that wants to know: opt-in, owned by
//! whoever counts. This crate keeps no count of its own; a [`Counter`] is an
//! ordinary value, shared by reference between the threads that count into it.
//!
//! A LevelDB `Get` asks one filter per table it looks in (a table has one filter per
//! 2 KiB of its data); each "absent" answer is a data-block read saved.

#![forbid(unsafe_code)]

use std::ops::Add;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::bloom::{BloomFilterPolicy, Filter};

/// Counts of filter queries and builds. A query is one key, whether asked alone or
/// in a batch; it is answered "absent" or "may match" (a present key or a false
/// positive), by the filter's bits or, for a filter that
/// [`answers_by_rule`](Filter::answers_by_rule), by rule. A built filter counts its
/// keys (duplicates included) and its bytes (k byte included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub queries: u64,
    /// Each one a data-block read LevelDB saved.
    pub absent: u64,
    pub may_match: u64,
    /// Of `queries`: those answered by rule.
    pub by_rule: u64,
    pub filters_built: u64,
    pub keys_added: u64,
    pub filter_bytes: u64,
}

impl Add for Counts {
    type Output = Self;

    /// Both counts added up (wrapping, as counters do).
    fn add(self, other: Self) -> Self {
        Self {
            queries: self.queries.wrapping_add(other.queries),
            absent: self.absent.wrapping_add(other.absent),
            may_match: self.may_match.wrapping_add(other.may_match),
            by_rule: self.by_rule.wrapping_add(other.by_rule),
            filters_built: self.filters_built.wrapping_add(other.filters_built),
            keys_added: self.keys_added.wrapping_add(other.keys_added),
            filter_bytes: self.filter_bytes.wrapping_add(other.filter_bytes),
        }
    }
}

/// Filter queries and builds made through it, counted: the same answers and filters
/// as [`Filter`]'s and [`BloomFilterPolicy`]'s own, each also counted here. `Sync`:
/// threads may count into one counter at once.
///
/// ```
/// use leveldb_bloom::{BloomFilterPolicy, Counter, Filter};
///
/// let counter = Counter::default();
/// let bytes = counter.build_filter(&BloomFilterPolicy::new(10), ["hello", "world"]);
/// let filter = Filter::new(&bytes);
/// assert!(counter.may_contain(&filter, "hello"));
/// let mut results = [false; 2];
/// counter.may_contain_batch(&filter, &["world", "other"], &mut results);
///
/// let counts = counter.counts();
/// assert_eq!((counts.filters_built, counts.keys_added), (1, 2));
/// assert_eq!(counts.queries, 3);
/// assert_eq!(counts.absent, u64::from(!results[1]));
/// ```
#[derive(Debug, Default)]
pub struct Counter {
    absent: AtomicU64,
    may_match: AtomicU64,
    by_rule: AtomicU64,
    filters_built: AtomicU64,
    keys_added: AtomicU64,
    filter_bytes: AtomicU64,
}

impl Counter {
    /// [`Filter::may_contain`], counted.
    pub fn may_contain(&self, filter: &Filter<'_>, key: impl AsRef<[u8]>) -> bool {
        let answer = filter.may_contain(key);
        self.count_queries(filter, 1, usize::from(!answer));
        answer
    }

    /// [`Filter::may_contain_batch`], counted; returns how many answers are "absent".
    ///
    /// # Panics
    /// If `results` is not as long as `keys`.
    pub fn may_contain_batch<K, T>(
        &self,
        filter: &Filter<'_>,
        keys: &[K],
        results: &mut [T],
    ) -> usize
    where
        K: AsRef<[u8]>,
        T: From<bool>,
    {
        let absent = filter.may_contain_batch(keys, results);
        self.count_queries(filter, keys.len(), absent);
        absent
    }

    /// [`BloomFilterPolicy::build_filter`], counted.
    pub fn build_filter<I>(&self, policy: &BloomFilterPolicy, keys: I) -> Vec<u8>
    where
        I: IntoIterator<IntoIter: ExactSizeIterator, Item: AsRef<[u8]>>,
    {
        let keys = keys.into_iter();
        let num_keys = keys.len();
        let filter = policy.build_filter(keys);
        self.count_build(num_keys, filter.len());
        filter
    }

    /// Counts `queries` queries of `filter`, `absent` of them answered "absent".
    ///
    /// # Panics
    /// If `absent` is more than `queries`.
    pub fn count_queries(&self, filter: &Filter<'_>, queries: usize, absent: usize) {
        assert!(absent <= queries, "absent answers are some of the queries");
        add(&self.absent, absent);
        add(&self.may_match, queries - absent);
        if filter.answers_by_rule() {
            add(&self.by_rule, queries);
        }
    }

    /// Counts one filter built for `keys` keys, `bytes` long.
    pub fn count_build(&self, keys: usize, bytes: usize) {
        add(&self.filters_built, 1);
        add(&self.keys_added, keys);
        add(&self.filter_bytes, bytes);
    }

    /// The counts so far. A thread counting at that moment may or may not have its
    /// latest query included.
    pub fn counts(&self) -> Counts {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let (absent, may_match) = (load(&self.absent), load(&self.may_match));
        Counts {
            queries: absent.wrapping_add(may_match),
            absent,
            may_match,
            by_rule: load(&self.by_rule),
            filters_built: load(&self.filters_built),
            keys_added: load(&self.keys_added),
            filter_bytes: load(&self.filter_bytes),
        }
    }
}

fn add(counter: &AtomicU64, n: usize) {
    counter.fetch_add(n as u64, Ordering::Relaxed);
}
