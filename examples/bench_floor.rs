use leveldb_bloom::{hash::bloom_hash, BloomFilterPolicy, Filter};
use std::hint::black_box;
use std::time::Instant;
fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().unwrap())
        .collect();
    let (len, n) = (args[0], args[1]);
    let mut s: u64 = 12345;
    let keys: Vec<Vec<u8>> = (0..n)
        .map(|_| {
            (0..len)
                .map(|_| {
                    s = s
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (s >> 33) as u8
                })
                .collect()
        })
        .collect();
    let filter = BloomFilterPolicy::new(10).build_filter(&keys);
    let hashes: Vec<u32> = keys.iter().map(|k| bloom_hash(k)).collect();
    let passes = (4_000_000 / n).max(1);
    let mut best = [f64::MAX; 3];
    for _ in 0..15 {
        let t = Instant::now();
        let mut c = 0u32;
        for _ in 0..passes {
            for k in &keys {
                c = c.wrapping_add(bloom_hash(black_box(k)));
            }
        }
        best[0] = best[0].min(t.elapsed().as_nanos() as f64 / (passes * n) as f64);
        black_box(c);
        let f = Filter::new(&filter);
        let t = Instant::now();
        let mut c = 0u32;
        for _ in 0..passes {
            for k in &keys {
                c += f.may_contain(black_box(k)) as u32;
            }
        }
        best[1] = best[1].min(t.elapsed().as_nanos() as f64 / (passes * n) as f64);
        black_box(c);
        let t = Instant::now();
        let mut c = 0u32;
        for _ in 0..passes {
            for &h in &hashes {
                c += f.may_contain_hash(black_box(h)) as u32;
            }
        }
        best[2] = best[2].min(t.elapsed().as_nanos() as f64 / (passes * n) as f64);
        black_box(c);
    }
    println!(
        "hash {:.2} hash+probes {:.2} probes {:.2}",
        best[0], best[1], best[2]
    );
}
