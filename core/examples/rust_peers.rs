//! This crate's Rust API beside rusty-leveldb's `BloomPolicy` (4.0.2), for `make
//! bench`: the same keys, in the same process, the filters checked byte-equal and the
//! answers equal first. Each row alternates the two for 9 rounds and prints the
//! medians, in ns per key, and their ratio (rusty-leveldb ÷ this crate: above 1, this
//! crate is faster).
//! `rust_peers [LEVEL]` builds filters at the SIMD level named (`scalar`, `avx2` or
//! `avx512`; the best the CPU has at or below it), by default the best the CPU has;
//! `make bench` runs it at each, built with the profile `bench-peers` (LTO and one
//! codegen unit, as a Rust program's release build of both crates would be).
//!
//! Rows: building a filter (`write_filter_at` into a new zeroed `Vec` /
//! `create_filter`, both from the keys in one contiguous buffer: rusty's takes it
//! with offsets, ours slices of it); one key
//! present and one key absent through `key_may_match(key, filter)`, which decodes the
//! filter on every call; and the same through a `Filter` decoded once
//! (`may_contain`; rusty's `key_may_match` is its only query). 16- and 100-byte keys,
//! 1,000 and 100,000 keys. Absent keys are asked from 100,000 distinct keys at both
//! sizes, as `make bench`'s C rows ask them: the same 1,000 absent keys asked again
//! and again in one order let a CPU's branch predictor learn which probe rejects each
//! one, which no real run of queries allows (docs/performance.md).

use std::hint::black_box;
use std::time::Instant;

use leveldb_bloom::{BloomFilterPolicy, Filter, SimdLevel};
use rusty_leveldb::{BloomPolicy, FilterPolicy};

const ROUNDS: usize = 9;
/// Keys timed per round, at least.
const PER_ROUND: usize = 400_000;
/// Distinct absent keys asked, whatever the filter's size.
const ABSENT_KEYS: usize = 100_000;

fn keys(count: usize, len: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (state >> 56) as u8
                })
                .collect()
        })
        .collect()
}

/// ns per key of `run`, which handles `per_call` keys per call.
fn time(per_call: usize, mut run: impl FnMut()) -> f64 {
    let calls = PER_ROUND.div_ceil(per_call).max(1);
    let start = Instant::now();
    for _ in 0..calls {
        run();
    }
    start.elapsed().as_nanos() as f64 / (calls * per_call) as f64
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Runs `ours` and `theirs` alternately and prints the row.
fn row(name: &str, per_call: usize, mut ours: impl FnMut(), mut theirs: impl FnMut()) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        a.push(time(per_call, &mut ours));
        b.push(time(per_call, &mut theirs));
    }
    let (a, b) = (median(a), median(b));
    println!("  {name:<50} {a:>9.2} {b:>13.2} {:>9.2}x", b / a);
}

fn main() {
    let level = match std::env::args().nth(1) {
        None => SimdLevel::best(),
        Some(name) => SimdLevel::up_to(&name).unwrap_or_else(|| {
            eprintln!("usage: rust_peers [scalar|avx2|avx512]");
            std::process::exit(2)
        }),
    };
    println!(
        "\nRust API against rusty-leveldb 4.0.2's BloomPolicy, 10 bits per key, SIMD level {} \
         (ns per key, medians of {ROUNDS} alternated rounds; ratio = rusty-leveldb / ours)",
        level.name()
    );
    println!(
        "  {:<50} {:>9} {:>13} {:>10}",
        "row", "ours", "rusty-leveldb", "ratio"
    );
    let ours = BloomFilterPolicy::new(10);
    let rusty = BloomPolicy::new(10);
    for len in [16, 100] {
        for n in [1_000, 100_000] {
            let present = keys(n, len, 1 + n as u64 + len as u64);
            let absent = keys(ABSENT_KEYS, len, 7 + n as u64 + len as u64);
            let mut flat = Vec::new();
            let mut offsets = Vec::new();
            for key in &present {
                offsets.push(flat.len());
                flat.extend_from_slice(key);
            }
            // Both build from the one contiguous buffer, as a table builder holds its
            // keys: rusty-leveldb takes it with offsets, this crate slices of it.
            let slices: Vec<&[u8]> = flat.chunks_exact(len).collect();
            let build = |keys: &[&[u8]]| {
                let mut filter = vec![0; ours.filter_len(keys.len()).unwrap()];
                ours.write_filter_at(keys, &mut filter, level).unwrap();
                filter
            };
            let filter = build(&slices);
            assert_eq!(filter, ours.build_filter(&present));
            assert_eq!(
                filter,
                rusty.create_filter(&flat, &offsets),
                "filters differ"
            );
            let label = |what: &str| format!("{what}, {len} B, n = {n}");
            row(
                &label("build"),
                n,
                || {
                    black_box(build(black_box(&slices)));
                },
                || {
                    black_box(rusty.create_filter(black_box(&flat), black_box(&offsets)));
                },
            );
            for (what, set) in [("present", &present), ("absent", &absent)] {
                assert!(
                    set.iter().all(|key| ours.key_may_match(key, &filter)
                        == FilterPolicy::key_may_match(&rusty, key, &filter)),
                    "answers differ"
                );
                let theirs = || {
                    for key in set.iter() {
                        black_box(FilterPolicy::key_may_match(
                            &rusty,
                            black_box(key),
                            black_box(&filter),
                        ));
                    }
                };
                row(
                    &label(&format!("one key {what}, key_may_match")),
                    set.len(),
                    || {
                        for key in set.iter() {
                            black_box(ours.key_may_match(black_box(key), black_box(&filter)));
                        }
                    },
                    theirs,
                );
                let decoded = Filter::new(&filter);
                row(
                    &label(&format!("one key {what}, decoded Filter")),
                    set.len(),
                    || {
                        for key in set.iter() {
                            black_box(decoded.may_contain(black_box(key)));
                        }
                    },
                    theirs,
                );
            }
        }
    }
}
