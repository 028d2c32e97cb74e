//! The README's C example and docs/library.md's C++ example are the complete programs
//! `examples/hello.c` and `examples/hello.cc`, word for word; both build with -Wall
//! -Wextra -Werror -pedantic (C99, C++11 and C++17) and print what the pages say.

mod common;

use std::process::Command;

use common::{Lang, Program};

fn page_holds(page: &str, fence: &str, file: &str) {
    let text = std::fs::read_to_string(common::repo().join(page)).unwrap();
    let program = std::fs::read_to_string(common::repo().join(file)).unwrap();
    assert!(
        text.contains(&format!("```{fence}\n{program}```")),
        "{page} does not show {file} as it is"
    );
}

#[test]
fn c_example_is_in_the_readme_and_runs() {
    page_holds("README.md", "c", "examples/hello.c");
    let exe = Program::new("hello_c", Lang::C99, &["examples/hello.c"])
        .link_bloom()
        .build();
    let shown = common::run(&mut Command::new(exe));
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        shown,
        format!("leveldb-bloom {version}, filter: 11 40 00 41 44 10 40 10 06\nhello may be present: 1\n")
    );
}

#[test]
fn cxx_example_is_in_the_readme_and_runs() {
    page_holds("docs/library.md", "cpp", "examples/hello.cc");
    for (lang, name) in [(Lang::Cxx11, "hello_cxx11"), (Lang::Cxx17, "hello_cxx17")] {
        let exe = Program::new(name, lang, &["examples/hello.cc"])
            .link_bloom()
            .build();
        let shown = common::run(&mut Command::new(exe));
        assert_eq!(
            shown,
            "leveldb.BuiltinBloomFilter2: 9 bytes, hello may be present: 1\n"
        );
    }
}
