//! `make bench` is not run by the suite: it takes minutes, and its figures mean
//! nothing on a shared CI machine. Its program is built here with the suite's strict
//! flags, so that a change which breaks it fails `make test` rather than the next
//! person who measures.

use crate::common;

use common::{Lang, Program};

#[test]
fn the_bench_builds() {
    Program::new(
        "leveldb_bloom_bench",
        Lang::Cxx17,
        &["benches/bench.cc", "benches/bench_db.cc"],
    )
    .arg("-lleveldb")
    .arg("-ldl")
    .build();
}
