//! The floor of LevelDB's bloom filter format on this CPU, for `make bench`.
//!
//! `make bench` builds this example and runs it from `benches/bench.cc` on the very
//! keys and filter of each of its rows (written to a file, `bench_floor FILE RUNS`),
//! then prints our C calls' distance from it. Each run times, in ns per key, with
//! the crate's public API in tight loops, nothing called through the C ABI, nothing
//! checked and nothing allocated per key:
//!
//! 1. LevelDB's bloom hash alone ([`bloom_hash`]), then its latency: each key's hash
//!    seeded with the hash before it ([`hash`]), so that no two keys' hashes overlap,
//!    as they do in the first loop. The hash is one chain of dependent steps, and no
//!    query can answer before its hash is known: this is the shortest time from a
//!    one-key call's start to its answer;
//! 2. a filter built: the hashes, then their probes' bits set into a buffer
//!    allocated beforehand ([`BloomFilterPolicy::write_filter_of_hashes`]);
//! 3. queries of the filter's keys, then of absent keys: hash and probes
//!    ([`Filter::may_contain`], the filter decoded once, outside the loop).
//!
//! and prints `run HASH HASH_LATENCY CREATE PRESENT ABSENT PRESENT_FOUND ABSENT_FOUND`,
//! the last two being how many keys of each set the filter let through, for the bench
//! to check against LevelDB. The file holds little-endian u64s: the least number of
//! queries per timed loop, the filter's length then its bytes, then the filter's keys
//! and the absent keys, each as a count, the keys' lengths, and their bytes end to end.

use leveldb_bloom::hash::{bloom_hash, hash};
use leveldb_bloom::{BloomFilterPolicy, Filter};
use std::hint::black_box;
use std::time::Instant;

/// A reader of the bench's file.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        head
    }

    fn u64(&mut self) -> usize {
        let word = u64::from_le_bytes(self.take(8).try_into().unwrap());
        usize::try_from(word).unwrap()
    }

    fn keys(&mut self) -> Vec<&'a [u8]> {
        let lengths: Vec<usize> = (0..self.u64()).map(|_| self.u64()).collect();
        lengths
            .into_iter()
            .map(|length| self.take(length))
            .collect()
    }
}

/// Runs `per_key` on every key, `passes` times over, and returns the ns per key
/// and the sum of its results.
fn time(keys: &[&[u8]], passes: usize, mut per_key: impl FnMut(&[u8]) -> u32) -> (f64, u64) {
    let start = Instant::now();
    let mut sum = 0u64;
    for _ in 0..passes {
        for &key in keys {
            sum += u64::from(per_key(black_box(key)));
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / (passes * keys.len()) as f64;
    (ns, black_box(sum))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, path, runs] = &args[..] else {
        panic!("usage: bench_floor FILE RUNS");
    };
    let runs: usize = runs.parse().expect("RUNS is a number");
    let bytes = std::fs::read(path).expect("the bench's file");
    let mut input = Input(&bytes);
    let queries = input.u64();
    let filter_len = input.u64();
    let filter_bytes = input.take(filter_len);
    let (keys, absent) = (input.keys(), input.keys());
    assert!(!keys.is_empty() && !absent.is_empty(), "no keys");
    let passes = |keys: &[&[u8]]| queries.div_ceil(keys.len()).max(1);

    let policy = BloomFilterPolicy::new(10);
    let mut hashes = Vec::with_capacity(keys.len());
    let mut built = vec![0; filter_bytes.len()];
    let filter = Filter::new(filter_bytes);
    for _ in 0..runs {
        let (hash_ns, _) = time(&keys, passes(&keys), bloom_hash);
        let mut previous = 0;
        let (hash_latency_ns, _) = time(&keys, passes(&keys), |key| {
            previous = hash(key, previous);
            previous
        });
        let start = Instant::now();
        for _ in 0..passes(&keys) {
            hashes.clear();
            hashes.extend(keys.iter().map(|&key| bloom_hash(black_box(key))));
            policy
                .write_filter_of_hashes(hashes.iter().copied(), black_box(&mut built[..]))
                .expect("the bench's filter has LevelDB's length for these keys");
        }
        let create_ns = start.elapsed().as_nanos() as f64 / (passes(&keys) * keys.len()) as f64;
        assert!(
            built == filter_bytes,
            "the filter built differs from LevelDB's"
        );
        let (present_ns, present) =
            time(&keys, passes(&keys), |key| filter.may_contain(key).into());
        let (absent_ns, found) = time(&absent, passes(&absent), |key| {
            filter.may_contain(key).into()
        });
        let per_pass = |sum: u64, keys: &[&[u8]]| sum / passes(keys) as u64;
        println!(
            "run {hash_ns:.3} {hash_latency_ns:.3} {create_ns:.3} {present_ns:.3} {absent_ns:.3} {} {}",
            per_pass(present, &keys),
            per_pass(found, &absent),
        );
    }
}
