//! Replays the committed fuzz corpus (fuzz/corpus, grown by `make fuzz`) through the
//! differential fuzz target without a fuzzing engine: every input is checked against
//! the real LevelDB again, with the library of this build, also under valgrind.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{Lang, Program};

fn replay() -> &'static PathBuf {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| {
        Program::new(
            "fuzz_replay",
            Lang::Cxx17,
            &["fuzz/bloom_fuzz.cc", "fuzz/replay_main.cc"],
        )
        .arg(format!("-I{}", common::repo().join("c_tests").display()))
        .arg("-lleveldb")
        .arg("-ldl")
        .build()
    })
}

fn corpus() -> (PathBuf, usize) {
    let corpus = common::repo().join("fuzz/corpus");
    let inputs = std::fs::read_dir(&corpus).expect("fuzz/corpus").count();
    assert!(inputs > 0, "fuzz/corpus is empty");
    (corpus, inputs)
}

fn replay_corpus(command: &mut Command, corpus: &Path, inputs: usize) {
    let out = common::run(
        command
            .env("LEVELDB_BLOOM_LIB", common::lib_path())
            .arg(corpus),
    );
    assert!(out.contains(&format!("replayed {inputs} inputs")), "{out}");
    println!("{out}");
}

#[test]
fn corpus_agrees_with_leveldb() {
    let (corpus, inputs) = corpus();
    replay_corpus(&mut Command::new(replay()), &corpus, inputs);
}

#[test]
fn corpus_replay_is_clean_under_valgrind() {
    let (corpus, inputs) = corpus();
    replay_corpus(&mut common::valgrind(replay()), &corpus, inputs);
}
