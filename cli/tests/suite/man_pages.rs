//! The man pages the tool writes (and `make install` and the packages install): every
//! page has EXAMPLES that parse as the tool's command line, SEE ALSO naming the other
//! pages, and a synopsis naming every option with its value; man renders them without
//! a warning.

use std::collections::BTreeMap;
use std::process::Command;

use clap::{CommandFactory, Parser};
use leveldb_bloom_cli::command_line::Cli;

fn man_pages() -> BTreeMap<String, String> {
    let scratch = test_support::Scratch::new();
    let dir = scratch.dir();
    std::fs::create_dir_all(dir).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_leveldb-bloom"))
        .arg("man-pages")
        .arg(dir)
        .status()
        .unwrap();
    assert!(status.success());
    let pages = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_str().unwrap().to_string();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    pages
}

/// The text between `.SH NAME` (or `.SH "NAME"`) and the next section, roff unescaped.
fn section<'a>(page: &'a str, name: &str) -> &'a str {
    let start = page
        .find(&format!(".SH {name}\n"))
        .or_else(|| page.find(&format!(".SH \"{name}\"\n")))
        .unwrap_or_else(|| panic!("no {name} section"));
    let rest = &page[start + 4..];
    &rest[..rest.find("\n.SH ").unwrap_or(rest.len())]
}

#[test]
fn every_page_has_examples_that_parse_see_also_and_value_names() {
    let pages = man_pages();
    let names: Vec<&String> = pages.keys().collect();
    assert_eq!(
        names,
        [
            "leveldb-bloom",
            "leveldb-bloom-audit",
            "leveldb-bloom-explain",
            "leveldb-bloom-reach",
            "leveldb-bloom-refilter",
            "leveldb-bloom-run",
            "leveldb-bloom-show"
        ]
    );
    for (name, page) in &pages {
        let examples: Vec<String> = section(page, "EXAMPLES")
            .lines()
            .filter(|line| line.starts_with("leveldb"))
            .map(|line| line.replace("\\-", "-"))
            .collect();
        assert!(examples.len() >= 3, "{name}: {examples:?}");
        for example in examples {
            let command = example.split(['|', '>']).next().unwrap();
            if let Err(e) = Cli::try_parse_from(command.split_whitespace()) {
                panic!("{name}: the example `{example}` does not parse: {e}");
            }
        }
        let see_also = section(page, "SEE ALSO");
        for other in pages.keys().filter(|other| *other != name) {
            assert!(
                see_also.contains(&format!("\\fB{other}\\fR(1)")),
                "{name}: {see_also}"
            );
        }
        let file = write_temp(name, page);
        let output = Command::new("man")
            .args(["--warnings", "-l"])
            .arg(&file)
            .env("MANWIDTH", "80")
            .output()
            .unwrap();
        std::fs::remove_file(file).unwrap();
        assert!(
            output.status.success() && output.stderr.is_empty(),
            "{name}: {output:?}"
        );
    }
    for sub in Cli::command()
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
    {
        let page = &pages[&format!("leveldb-bloom-{}", sub.get_name())];
        let synopsis = section(page, "SYNOPSIS").replace("\\-", "-");
        for arg in sub.get_arguments().filter(|arg| arg.get_long().is_some()) {
            let long = arg.get_long().unwrap();
            let optional = arg.get_num_args().is_some_and(|n| n.min_values() == 0);
            let shown = match arg.get_value_names() {
                Some(values) if optional && arg.is_require_equals_set() => {
                    format!("--{long}[=<{}>]", values[0])
                }
                Some(values) if arg.get_num_args().is_some_and(|n| n.takes_values()) => {
                    format!("--{long} <{}>", values[0])
                }
                _ => format!("--{long}"),
            };
            assert!(
                synopsis.contains(&shown),
                "{}: {shown} not in {synopsis}",
                sub.get_name()
            );
        }
    }
}

fn write_temp(name: &str, page: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("{name}-{}.1", std::process::id()));
    std::fs::write(&path, page).unwrap();
    path
}

/// The tools package's description (debian/control) names every subcommand.
#[test]
fn the_tools_package_describes_every_subcommand() {
    let control =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../debian/control")).unwrap();
    let tools = &control[control.find("Package: leveldb-bloom-tools").unwrap()..];
    let tools = tools.split("\n\n").next().unwrap();
    let text = tools.split_whitespace().collect::<Vec<_>>().join(" ");
    for sub in Cli::command()
        .get_subcommands()
        .filter(|s| s.get_name() != "help")
    {
        let named = format!("\"leveldb-bloom {}\"", sub.get_name());
        assert!(
            text.contains(&named),
            "debian/control's leveldb-bloom-tools does not describe {named}"
        );
    }
}
