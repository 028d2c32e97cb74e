//! `refilter` on the fuzzer's mutated databases: whole or left alone.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{mend_checksums, mutate, mutation, seed_databases, seeds};
use crate::common::*;
use proptest::prelude::*;

/// Every file of `dir` but `LOCK`, with its contents.
fn files_of(dir: &std::path::Path) -> Vec<(std::ffi::OsString, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "LOCK")
        .map(|e| (e.file_name(), std::fs::read(e.path()).unwrap()))
        .collect();
    files.sort();
    files
}

/// `refilter` on the seed databases with one table or MANIFEST mutated: it either
/// changes nothing, or commits a version whose every table reads whole, with its
/// filters under LevelDB's name and no key missed, at the levels and key ranges the
/// mutated MANIFEST gave. In process, a few hundred cases (`REFILTER_FUZZ_CASES`).
#[test]
fn mutated_databases_are_refiltered_whole_or_left_alone() {
    let databases = seed_databases();
    let seeds = seeds(&databases);
    let cases = std::env::var("REFILTER_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(300);
    let committed = AtomicUsize::new(0);
    let config = ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    let mut runner = proptest::test_runner::TestRunner::new(config);
    let result = runner.run(
        &(
            0..seeds.len(),
            prop::collection::vec(mutation(), 1..4),
            any::<bool>(),
        ),
        |(index, mutations, mend)| {
            let seed = &seeds[index];
            let dir = Scratch::new();
            std::fs::create_dir_all(&dir.0).unwrap();
            for entry in std::fs::read_dir(&databases[seed.db].1 .0).unwrap() {
                let path = entry.unwrap().path();
                std::fs::copy(&path, dir.0.join(path.file_name().unwrap())).unwrap();
            }
            let mut bytes = seed.bytes.clone();
            for m in &mutations {
                mutate(&mut bytes, m);
            }
            if mend {
                mend_checksums(seed, &mut bytes);
            }
            std::fs::write(dir.0.join(&seed.file), &bytes).unwrap();
            let before = files_of(&dir.0);
            let old = leveldb_table::db::manifest::live_version(&dir.0);
            let (report, _) = leveldb_bloom_cli::refilter::refilter(
                &dir.0,
                leveldb_bloom::BloomFilterPolicy::new(10),
            );
            if !report.committed {
                prop_assert!(files_of(&dir.0) == before, "{}: files changed", seed.name);
                return Ok(());
            }
            committed.fetch_add(1, Ordering::Relaxed);
            let ranges = |v: &leveldb_table::db::manifest::Version| {
                let mut r: Vec<_> = (v.levels.iter().flatten())
                    .map(|t| (t.level, t.smallest.clone(), t.largest.clone()))
                    .collect();
                r.sort_by(|a, b| (a.0, &a.1 .0, &a.2 .0).cmp(&(b.0, &b.1 .0, &b.2 .0)));
                r
            };
            let new = leveldb_table::db::manifest::live_version(&dir.0).unwrap();
            prop_assert_eq!(ranges(&old.unwrap()), ranges(&new));
            for table in new.levels.iter().flatten() {
                let path = leveldb_table::db::manifest::table_file(&dir.0, table.number);
                let file = std::fs::File::open(&path).unwrap();
                prop_assert_eq!(file.metadata().unwrap().len(), table.size);
                let audit =
                    leveldb_bloom_cli::audit::audit(String::new(), &file, 0, &[], &|_| {}).unwrap();
                prop_assert_eq!(audit.missed, 0);
                prop_assert_eq!(
                    audit.filter_name.as_deref(),
                    Some("leveldb.BuiltinBloomFilter2")
                );
            }
            Ok(())
        },
    );
    if let Err(e) = result {
        panic!("{e}");
    }
    let committed = committed.load(Ordering::Relaxed);
    eprintln!("{cases} mutated databases: {committed} refiltered whole, the rest left alone");
    assert!(committed > 0 && committed < cases as usize);
}
