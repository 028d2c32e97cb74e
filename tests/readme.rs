//! The README's C and C++ examples are the complete programs `examples/hello.c` and
//! `examples/hello.cc`, word for word; both build with -Wall -Wextra -Werror -pedantic
//! (C99, C++11 and C++17) and print what the README says.

mod common;

use std::process::Command;

use common::{Lang, Program};

fn readme_holds(fence: &str, file: &str) {
    let readme = std::fs::read_to_string(common::repo().join("README.md")).unwrap();
    let program = std::fs::read_to_string(common::repo().join(file)).unwrap();
    assert!(
        readme.contains(&format!("```{fence}\n{program}```")),
        "README.md does not show {file} as it is"
    );
}

#[test]
fn c_example_is_in_the_readme_and_runs() {
    readme_holds("c", "examples/hello.c");
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
    readme_holds("cpp", "examples/hello.cc");
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
