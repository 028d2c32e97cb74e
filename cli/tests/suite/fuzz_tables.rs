//! Any bytes at all: tables and MANIFESTs written by LevelDB 1.23 (plyvel) and by
//! goleveldb, mutated (bytes set, bits flipped, LevelDB's own integers planted,
//! spans copied, the end cut; in half the cases the checksums mended afterwards, so
//! that the mutations reach the parsers behind them), read by the audit, the table
//! reader, `show`'s and `explain`'s paths, the MANIFEST and write-batch readers.
//! None may panic, take more than a few seconds, or allocate more than a
//! fixed bound. `make test` runs a short run; `make fuzz` a long one
//! (`TABLE_FUZZ_CASES`).

use crate::common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;
use leveldb_table::db::log::LogReader;
use leveldb_table::db::manifest::decode_edit;
use leveldb_table::db::write_batch::for_each_batch_entry;
use proptest::prelude::*;
use proptest::sample::Index;

mod refilter;

/// The largest allocation any input may cause (every input is under 64 KiB).
const ALLOCATION_BOUND: usize = 8 << 20;
/// The most time any input may take.
const TIME_BOUND: Duration = Duration::from_secs(5);
const SHORT_RUN_CASES: u32 = 20_000;

/// Records the largest single allocation made on a thread measuring one input: the
/// other tests of the suite's binary allocate on their own threads meanwhile.
struct Largest;

thread_local! {
    /// The largest allocation on this thread since it began measuring, if it is.
    static LARGEST: Cell<Option<usize>> = const { Cell::new(None) };
}

fn record(size: usize) {
    // try_with: a thread's allocations after its locals are gone go unrecorded.
    let _ = LARGEST.try_with(|largest| {
        if let Some(so_far) = largest.get() {
            largest.set(Some(so_far.max(size)));
        }
    });
}

// SAFETY: every call is passed on to the system allocator unchanged; only a maximum
// is recorded beside it.
unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record(layout.size());
        // SAFETY: the caller's layout contract is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by `System` with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record(new_size);
        // SAFETY: as for `alloc` and `dealloc`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Largest = Largest;

/// A seed: its name, its bytes, and the places a checksum covers (a table's blocks:
/// contents, then the type byte and the masked crc32c; a log's records: the crc, the
/// length and type, the payload), so that a case can mend the checksums after
/// mutating and so reach the parsers behind them.
struct Seed {
    name: String,
    /// Its database (an index into [`seed_databases`]) and file name there.
    db: usize,
    file: String,
    bytes: Vec<u8>,
    blocks: Vec<(usize, usize)>,
    records: Vec<(usize, usize)>,
}

/// The blocks of the table `bytes`: metaindex, index, filter and data blocks, as
/// (offset, size).
fn table_blocks(bytes: &[u8]) -> Vec<(usize, usize)> {
    let table = leveldb_table::Table::open(bytes).unwrap();
    let mut blocks = vec![table.metaindex(), table.index()];
    let metaindex = table.block(table.metaindex()).unwrap();
    leveldb_table::each_entry(&metaindex, 0, |_, value| {
        blocks.push(leveldb_table::handle_value(value, 0)?);
        Ok(())
    })
    .unwrap();
    table
        .for_each_data_block(|handle, _| {
            blocks.push(handle);
            Ok(())
        })
        .unwrap();
    blocks
        .into_iter()
        .map(|h| (h.offset as usize, h.size as usize))
        .collect()
}

/// The records of the log `bytes` (one block: the seeds are small), as (header
/// offset, payload length).
fn log_records(bytes: &[u8]) -> Vec<(usize, usize)> {
    let mut records = Vec::new();
    let mut at = 0;
    while at + 7 <= bytes.len() {
        let len = usize::from(u16::from_le_bytes([bytes[at + 4], bytes[at + 5]]));
        records.push((at, len));
        at += 7 + len;
    }
    records
}

/// Recomputes every checksum `seed` knows of that still lies within `bytes`.
fn mend_checksums(seed: &Seed, bytes: &mut [u8]) {
    for &(offset, size) in &seed.blocks {
        let end = offset + size;
        if end + 5 <= bytes.len() {
            let crc = leveldb_table::masked_crc(&bytes[offset..end], bytes[end]);
            bytes[end + 1..end + 5].copy_from_slice(&crc.to_le_bytes());
        }
    }
    for &(at, len) in &seed.records {
        if at + 7 + len <= bytes.len() {
            let crc = crc32c::crc32c_append(
                crc32c::crc32c(&[bytes[at + 6]]),
                &bytes[at + 7..at + 7 + len],
            );
            let masked = crc.rotate_right(15).wrapping_add(0xa282_ead8);
            bytes[at..at + 4].copy_from_slice(&masked.to_le_bytes());
        }
    }
}

/// Small databases written by LevelDB 1.23 through plyvel (snappy-compressed and
/// uncompressed), and one written by goleveldb.
fn seed_databases() -> Vec<(&'static str, Scratch)> {
    let write = |compression: &str| {
        let dir = Scratch::new();
        succeed(Command::new(PYTHON).arg("-c").arg(format!(
            "import plyvel, random, sys\n\
             rng = random.Random(7)\n\
             db = plyvel.DB(sys.argv[1], create_if_missing=True, bloom_filter_bits=10, block_size=512, compression={compression})\n\
             for i in range(400):\n    db.put(rng.randbytes(rng.randrange(1, 40)), rng.randbytes(rng.randrange(0, 60)))\n\
             db.compact_range()\n\
             db.close()\n",
        )).arg(&dir.0));
        dir
    };
    let (snappy, raw) = (write("'snappy'"), write("None"));
    let goleveldb = Scratch::new();
    let keys = Scratch::new();
    let (keys_path, _) = keys_file(&keys.0, 300);
    goleveldb_write(&goleveldb.0, &keys_path);
    vec![
        ("leveldb", snappy),
        ("leveldb uncompressed", raw),
        ("goleveldb", goleveldb),
    ]
}

/// The seeds: each live table and the MANIFEST of the seed databases.
fn seeds(databases: &[(&'static str, Scratch)]) -> Vec<Seed> {
    let mut seeds = Vec::new();
    for (db, (writer, dir)) in databases.iter().enumerate() {
        for entry in std::fs::read_dir(&dir.0).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let bytes = std::fs::read(&path).unwrap();
            if bytes.len() >= 64 << 10 {
                continue;
            }
            let (blocks, records) = if name.ends_with(".ldb") {
                (table_blocks(&bytes), Vec::new())
            } else if name.starts_with("MANIFEST-") {
                (Vec::new(), log_records(&bytes))
            } else {
                continue;
            };
            seeds.push(Seed {
                name: format!("{writer} {name}"),
                db,
                file: name,
                bytes,
                blocks,
                records,
            });
        }
    }
    assert!(seeds.iter().filter(|s| s.name.ends_with(".ldb")).count() >= 3);
    assert!(seeds.iter().any(|s| s.name.contains("MANIFEST")));
    seeds
}

/// One change to a seed.
#[derive(Clone, Debug)]
enum Mutation {
    SetByte(Index, u8),
    FlipBit(Index, u8),
    /// One of the integers that decide where a reader goes, little-endian.
    Plant(Index, u32),
    CopySpan(Index, Index, u8),
    Cut(Index),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let planted = prop_oneof![
        Just(0u32),
        Just(1),
        Just(0x7f),
        Just(0x80),
        Just(0xff),
        Just(0xffff),
        Just(u32::MAX),
        Just(0x8000_0000),
        any::<u32>(),
    ];
    prop_oneof![
        (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::SetByte(i, b)),
        (any::<Index>(), 0u8..8).prop_map(|(i, bit)| Mutation::FlipBit(i, bit)),
        (any::<Index>(), planted).prop_map(|(i, v)| Mutation::Plant(i, v)),
        (any::<Index>(), any::<Index>(), 1u8..64).prop_map(|(a, b, n)| Mutation::CopySpan(a, b, n)),
        any::<Index>().prop_map(Mutation::Cut),
    ]
}

fn mutate(bytes: &mut Vec<u8>, mutation: &Mutation) {
    if bytes.is_empty() {
        return;
    }
    let len = bytes.len();
    match *mutation {
        Mutation::SetByte(ref i, b) => bytes[i.index(len)] = b,
        Mutation::FlipBit(ref i, bit) => bytes[i.index(len)] ^= 1 << bit,
        Mutation::Plant(ref i, v) => {
            let at = i.index(len);
            let n = (len - at).min(4);
            bytes[at..at + n].copy_from_slice(&v.to_le_bytes()[..n]);
        }
        Mutation::CopySpan(ref from, ref to, n) => {
            let (from, to) = (from.index(len), to.index(len));
            let n = usize::from(n).min(len - from).min(len - to);
            bytes.copy_within(from..from + n, to);
        }
        Mutation::Cut(ref i) => bytes.truncate(i.index(len)),
    }
}

/// Everything the tool does with bytes it is handed: audit them as a table, draw
/// them as `show` does (its page's data, asked about a key), follow a key through
/// them as `explain` does, walk them with the table reader, read them as a MANIFEST
/// and as a write-ahead log of batches.
fn read_everything(bytes: &[u8]) -> bool {
    let audited =
        leveldb_bloom_cli::audit::audit("fuzz".into(), bytes, usize::MAX, &[], &|_| {}).is_ok();
    if let Ok(page) = leveldb_bloom_cli::show::table_page("fuzz", bytes, None, Some(b"key")) {
        std::hint::black_box(page);
    }
    explain_in(bytes);
    if let Ok(table) = leveldb_table::Table::open(bytes) {
        let _ = table.for_each_data_block(|h, block| {
            leveldb_table::each_entry(block, h.offset, |_, _| Ok(()))
        });
    }
    let mut log = LogReader::new(bytes);
    while let Ok(Some((_, record))) = log.next_record() {
        let _ = decode_edit(&record);
        let _ = for_each_batch_entry(&record, |entry| {
            std::hint::black_box(entry);
        });
    }
    audited
}

/// `explain`'s Get of two keys (one before, one after LevelDB's keys) in the table
/// `bytes`, as LevelDB's reader of either policy name would do it.
fn explain_in(bytes: &[u8]) {
    use leveldb_bloom_cli::explain::{get_in_table, skipped, Reader};
    let live = leveldb_table::db::manifest::LiveTable {
        level: 0,
        number: 5,
        size: bytes.len() as u64,
        smallest: leveldb_table::internal_key::InternalKey(Vec::new()),
        largest: leveldb_table::internal_key::InternalKey(Vec::new()),
    };
    for (key, policy) in [
        (&b"a"[..], leveldb_bloom::POLICY_NAME),
        (&b"\xff\xff"[..], leveldb_bloom::LEGACY_POLICY_NAME),
    ] {
        let mut lookup = key.to_vec();
        lookup.extend_from_slice(&(u64::MAX >> 8 << 8 | 1).to_le_bytes());
        let mut step = skipped(std::path::Path::new("fuzz"), &live);
        let reader = Reader {
            policy_name: Some(policy),
            tail_bytes: if policy == leveldb_bloom::LEGACY_POLICY_NAME {
                leveldb_bloom::hash::TailBytes::Signed
            } else {
                leveldb_bloom::hash::TailBytes::Unsigned
            },
        };
        let _ = get_in_table(bytes, reader, key, &lookup, &mut step);
    }
}

fn cases() -> u32 {
    std::env::var("TABLE_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(SHORT_RUN_CASES)
}

#[test]
fn mutated_tables_and_manifests_neither_panic_hang_nor_overallocate() {
    let seeds = seeds(&seed_databases());
    for seed in &seeds {
        read_everything(&seed.bytes);
    }
    let (executed, mended, audited) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let config = ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let result = runner.run(
        &(
            0..seeds.len(),
            prop::collection::vec(mutation(), 1..6),
            any::<bool>(),
        ),
        |(index, mutations, mend)| {
            let seed = &seeds[index];
            let mut bytes = seed.bytes.clone();
            for m in &mutations {
                mutate(&mut bytes, m);
            }
            if mend {
                mend_checksums(seed, &mut bytes);
                mended.fetch_add(1, Ordering::Relaxed);
            }
            LARGEST.with(|largest| largest.set(Some(0)));
            let start = Instant::now();
            let read = read_everything(&bytes);
            let took = start.elapsed();
            let largest = LARGEST.with(Cell::take).unwrap_or(0);
            executed.fetch_add(1, Ordering::Relaxed);
            audited.fetch_add(usize::from(read), Ordering::Relaxed);
            prop_assert!(took < TIME_BOUND, "{} took {took:?}", seed.name);
            prop_assert!(
                largest <= ALLOCATION_BOUND,
                "{}: an allocation of {largest} bytes",
                seed.name
            );
            Ok(())
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    eprintln!(
        "{} mutated inputs ({} with their checksums mended; {} audited whole) from {} seeds \
         ({}): no panic, none over {TIME_BOUND:?} or {ALLOCATION_BOUND} bytes",
        executed.load(Ordering::Relaxed),
        mended.load(Ordering::Relaxed),
        audited.load(Ordering::Relaxed),
        seeds.len(),
        seeds
            .iter()
            .map(|s| format!("{} {} B", s.name, s.bytes.len()))
            .collect::<Vec<_>>()
            .join(", ")
    );
}
