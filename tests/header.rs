//! The committed header is exactly what cbindgen generates now, and it compiles
//! cleanly as C99 and C++11, alone and beside LevelDB's `<leveldb/c.h>` in either order.

mod common;

use common::{Lang, Program};

/// Needs the `header` feature (`make test` runs with `--all-features`).
#[cfg(feature = "header")]
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

/// Where `<leveldb/c.h>` is missing the header declares the opaque type itself. An
/// empty `leveldb/c.h` found first on the include path stands in for a missing one:
/// `__has_include` finds it, but it defines nothing, so the fallback typedef is used.
#[test]
fn header_declares_the_type_without_leveldb() {
    let shadow = common::lib_dir().join("header_fallback");
    std::fs::create_dir_all(shadow.join("leveldb")).expect("shadow include directory");
    std::fs::write(shadow.join("leveldb/c.h"), "").expect("empty leveldb/c.h");
    for (lang, suffix) in [(Lang::C99, "c"), (Lang::Cxx11, "cc")] {
        let exe = Program::new(
            &format!("header_fallback_{suffix}"),
            lang,
            &["c_tests/header_check.c"],
        )
        .arg("-DHEADER_ALONE")
        .arg("-DEXPECT_FALLBACK_TYPEDEF")
        .arg("-isystem")
        .arg(shadow.display().to_string())
        .link_bloom()
        .build();
        common::run(&mut std::process::Command::new(exe));
    }
}
