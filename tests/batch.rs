//! The batch query and filter building at every SIMD level this CPU has, against
//! LevelDB and our one-key answers (c_tests/batch_test.cc), and the batch's bad
//! inputs. `LEVELDB_BLOOM_SIMD` forces the level; a level the CPU lacks is skipped,
//! and said so.

mod common;

use std::process::Command;

use common::{Lang, Program};

/// Whether this CPU can run `level` (as the library decides it, in src/simd.rs).
fn available(level: &str) -> bool {
    match level {
        "scalar" => true,
        #[cfg(target_arch = "x86_64")]
        "avx2" => is_x86_feature_detected!("avx2"),
        #[cfg(target_arch = "x86_64")]
        "avx512" => is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512dq"),
        _ => false,
    }
}

#[test]
fn batches_agree_with_leveldb_at_every_simd_level() {
    let exe = Program::new("batch_test", Lang::Cxx11, &["c_tests/batch_test.cc"])
        .arg("-lleveldb")
        .arg("-ldl")
        .build();
    let library = common::lib_path();
    let mut tested = Vec::new();
    for level in ["scalar", "avx2", "avx512"] {
        if !available(level) {
            eprintln!("SIMD level {level} not available on this CPU: skipped");
            continue;
        }
        let output = common::run(
            Command::new(&exe)
                .arg(&library)
                .env("LEVELDB_BLOOM_SIMD", level),
        );
        assert!(
            output.contains(&format!("simd level: {level}\n")),
            "LEVELDB_BLOOM_SIMD={level} was not in effect:\n{output}"
        );
        assert!(output.contains(" 0 failed"), "{output}");
        tested.push(level);
    }
    eprintln!("SIMD levels tested: {tested:?}");
}

#[test]
fn batches_are_clean_under_address_and_undefined_behavior_sanitizers() {
    let exe = Program::new("batch_test", Lang::Cxx11, &["c_tests/batch_test.cc"])
        .arg("-lleveldb")
        .arg("-ldl")
        .sanitize()
        .build();
    let output = common::run(common::sanitized(&exe).arg(common::lib_path()));
    assert!(output.contains(" 0 failed"), "{output}");
}

#[test]
fn unknown_level_names_are_ignored() {
    let exe = Program::new("batch_test_level", Lang::Cxx11, &["c_tests/batch_test.cc"])
        .arg("-lleveldb")
        .arg("-ldl")
        .build();
    let best = ["avx512", "avx2", "scalar"]
        .into_iter()
        .find(|level| available(level))
        .expect("scalar always is");
    let output = common::run(
        Command::new(&exe)
            .arg(common::lib_path())
            .arg("--level")
            .env("LEVELDB_BLOOM_SIMD", "sse9"),
    );
    assert!(
        output.contains(&format!("simd level: {best}\n")),
        "{output}"
    );
}
