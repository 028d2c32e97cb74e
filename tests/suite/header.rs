//! The committed header is exactly what cbindgen generates now. That it compiles
//! cleanly as C99 and C++11, alone and beside LevelDB's `<leveldb/c.h>` in either
//! order or without it, is the `header_*` rows of tests/suite/harnesses.rs.

/// Needs the `header` feature (`make test` runs with `--all-features`).
#[cfg(feature = "header")]
#[test]
fn committed_header_is_current() {
    let fresh = include_str!(concat!(env!("OUT_DIR"), "/leveldb_bloom.h"));
    let committed = include_str!("../../include/leveldb_bloom.h");
    assert!(
        fresh == committed,
        "include/leveldb_bloom.h differs from the header cbindgen generates: run `make header` and commit it"
    );
}
