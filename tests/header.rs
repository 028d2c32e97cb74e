//! The committed header is exactly what cbindgen generates now, and it compiles
//! cleanly as C99 and C++11, alone and beside LevelDB's `<leveldb/c.h>` in either order.

mod common;

use common::{Lang, Program};

#[test]
fn committed_header_is_current() {
    let fresh = include_str!(concat!(env!("OUT_DIR"), "/leveldb_bloom.h"));
    let committed = include_str!("../include/leveldb_bloom.h");
    assert!(
        fresh == committed,
        "include/leveldb_bloom.h differs from the header cbindgen generates: run `make header` and commit it"
    );
}

#[test]
fn header_compiles_as_c99_and_cxx11() {
    for lang in [Lang::C99, Lang::Cxx11] {
        for (variant, define) in [
            ("alone", "HEADER_ALONE"),
            ("ours_first", "OURS_FIRST"),
            ("leveldb_first", "LEVELDB_FIRST"),
        ] {
            let suffix = if lang == Lang::C99 { "c" } else { "cc" };
            let exe = Program::new(
                &format!("header_{variant}_{suffix}"),
                lang,
                &["c_tests/header_check.c"],
            )
            .arg(format!("-D{define}"))
            .link_bloom()
            .build();
            common::run(&mut std::process::Command::new(exe));
        }
    }
}
