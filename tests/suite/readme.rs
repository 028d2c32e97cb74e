//! The README's C example and docs/library.md's C++ example are the complete programs
//! `examples/hello.c` and `examples/hello.cc`, word for word; both build with -Wall
//! -Wextra -Werror -pedantic (C99, C++11 and C++17) and print what the pages say.

use crate::common;

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

/// The relative links of a page (`README.md`, `docs/x.md`) whose files are missing.
fn dead_links(page: &str) -> Vec<String> {
    let text = std::fs::read_to_string(common::repo().join(page)).unwrap();
    let base = common::repo().join(page).parent().unwrap().to_path_buf();
    text.split("](")
        .skip(1)
        .filter_map(|link| link.split([')', '#']).next())
        .filter(|target| !target.is_empty() && !target.contains("://"))
        .filter(|target| !base.join(target).exists())
        .map(|target| format!("{page}: {target}"))
        .collect()
}

/// The README is the front door: at most 300 lines, every page it and the docs link to
/// exists, and it names every man page the tool installs.
#[test]
fn readme_is_short_links_to_pages_that_exist_and_lists_every_man_page() {
    let readme = std::fs::read_to_string(common::repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines, more than 300");
    let mut pages = vec!["README.md".to_string()];
    for doc in std::fs::read_dir(common::repo().join("docs")).unwrap() {
        let name = doc.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    let dead: Vec<String> = pages.iter().flat_map(|page| dead_links(page)).collect();
    assert!(dead.is_empty(), "links to missing files: {dead:?}");
    let tool = common::lib_dir().parent().unwrap().join("leveldb-bloom");
    let man = common::Scratch::new();
    std::fs::create_dir_all(man.dir()).unwrap();
    common::run(Command::new(tool).arg("man-pages").arg(man.dir()));
    let mut listed = 0;
    for page in std::fs::read_dir(man.dir()).unwrap() {
        let name = page.unwrap().file_name().into_string().unwrap();
        let name = name.strip_suffix(".1").unwrap().to_string();
        assert!(
            readme.contains(&format!("`man {name}`")),
            "README.md does not list the man page {name}"
        );
        listed += 1;
    }
    assert!(listed >= 4, "the tool wrote {listed} man pages");
}

/// Timings live in one place, docs/performance.md: no other page states a ratio
/// ("1.41×"), nanoseconds or a throughput; they link there instead.
#[test]
fn timings_are_only_in_docs_performance() {
    let mut pages = vec![common::repo().join("README.md")];
    for doc in std::fs::read_dir(common::repo().join("docs")).unwrap() {
        let path = doc.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") && !path.ends_with("performance.md") {
            pages.push(path);
        }
    }
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        for (number, line) in text.lines().enumerate() {
            let figure = line
                .char_indices()
                .any(|(i, c)| c == '×' && line[..i].ends_with(|d: char| d.is_ascii_digit()))
                || [" ns ", " ns,", " ns)", "MB/s", "GB/s"]
                    .iter()
                    .any(|unit| line.contains(unit));
            assert!(
                !figure,
                "{}:{}: a timing outside docs/performance.md: {line}",
                page.display(),
                number + 1
            );
        }
    }
}
