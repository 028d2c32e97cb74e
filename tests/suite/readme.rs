//! The README's C example and docs/library.md's C++ example are the complete programs
//! `examples/hello.c` and `examples/hello.cc`, word for word; both build with -Wall
//! -Wextra -Werror -pedantic (C99, C++11 and C++17) and print what the pages say.
//! Every output block of the README and the docs is a sample that a test prints
//! again (`test_support::samples`): the README's swap statistics and the tool's
//! version here, the others beside the runs that make them. The library's man page
//! renders without a warning and names every variable the library reads.

use crate::common;

use std::process::Command;

use common::{Lang, Program};
use test_support::samples::{assert_sample, sample_names};

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
    assert_sample(common::repo(), "README.md", "hello", &shown, &[]);
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

/// The pages whose output blocks are samples: the README and every docs page.
fn pages() -> Vec<String> {
    let mut pages = vec!["README.md".to_string()];
    for doc in std::fs::read_dir(common::repo().join("docs")).unwrap() {
        let name = doc.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".md") {
            pages.push(format!("docs/{name}"));
        }
    }
    pages
}

/// The test sources of every crate, where each sample is checked.
fn test_sources() -> String {
    let mut text = String::new();
    let mut dirs = vec![
        common::repo().join("tests"),
        common::repo().join("cli/tests"),
    ];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                text += &std::fs::read_to_string(path).unwrap();
            }
        }
    }
    text
}

/// An output block (a fence of `text`, or of no language) is always a marked sample,
/// and every sample is checked by a test (its name, quoted, beside `assert_sample`).
#[test]
fn every_output_block_is_a_sample_a_test_prints_again() {
    let sources = test_sources();
    for page in pages() {
        let text = std::fs::read_to_string(common::repo().join(&page)).unwrap();
        let mut open = false;
        let mut previous = "";
        for line in text.lines() {
            if let Some(language) = line.strip_prefix("```") {
                if !open && (language == "text" || language.is_empty()) {
                    assert!(
                        previous.starts_with("<!-- sample: "),
                        "{page}: an output block without a sample marker, before: {previous}"
                    );
                }
                open = !open;
            }
            previous = line;
        }
        for name in sample_names(common::repo(), &page) {
            assert!(
                sources.contains(&format!("\"{name}\"")),
                "{page}: no test checks the sample {name}"
            );
        }
    }
}

/// The README's swap statistics: `c_tests/dropin_c.c` writing 50,000 keys and
/// reading 100,000 with the library preloaded.
#[test]
fn the_swap_s_statistics_in_the_readme_are_what_it_prints() {
    let exe = Program::new("readme_dropin_c", Lang::C99, &["c_tests/dropin_c.c"])
        .arg("-lleveldb")
        .build();
    let db = common::Scratch::new();
    let run = |mode: &str| {
        common::succeed(
            common::command(&exe)
                .args([mode, db.path(), "50000"])
                .env("LD_PRELOAD", common::lib_path())
                .env("LEVELDB_BLOOM_STATS", "stderr"),
        )
    };
    run("write");
    let read = run("read");
    let printed =
        String::from_utf8_lossy(&read.stdout).into_owned() + &String::from_utf8_lossy(&read.stderr);
    assert_sample(common::repo(), "README.md", "dropin-stats", &printed, &[]);
}

/// `leveldb-bloom --version` as docs/tool.md shows it (on a CPU of another SIMD
/// level, that level's name in its place).
#[test]
fn the_tool_s_version_in_the_docs_is_what_it_prints() {
    let printed = common::run(Command::new(common::tool()).arg("--version"));
    let level = ["avx512", "avx2", "scalar"]
        .into_iter()
        .find(|level| printed.contains(&format!("SIMD level: {level}\n")))
        .expect("a SIMD level");
    let replace = [(&*format!("SIMD level: {level}"), "SIMD level: avx512")];
    assert_sample(
        common::repo(),
        "docs/tool.md",
        "version",
        &printed,
        &replace,
    );
}

/// The library's man page, as the packages install it: no warning from groff, every
/// variable the library reads, and the README's recipe.
#[test]
fn the_library_s_man_page_renders_and_names_every_variable() {
    let page = common::repo().join("docs/man/libleveldb_bloom.7");
    let output = Command::new("groff")
        .args(["-man", "-ww", "-z"])
        .arg(&page)
        .output()
        .expect("groff runs");
    assert!(
        output.status.success() && output.stderr.is_empty(),
        "{output:?}"
    );
    let text = std::fs::read_to_string(&page).unwrap();
    for variable in [
        "LEVELDB_BLOOM_STATS",
        "LEVELDB_BLOOM_DEFAULT_BITS",
        "LEVELDB_BLOOM_SIMD",
    ] {
        assert!(
            text.contains(&format!(".B {variable}")),
            "{variable} is not described"
        );
    }
    assert!(text.contains(".B leveldb-bloom run \\-\\-default\\-bits 10"));
    assert!(text.contains("libleveldb_bloom_default_bits.so"));
}
