//! The sample outputs the README and docs show, checked against what the build
//! prints so that they cannot drift: a block is marked by the line
//! `<!-- sample: NAME -->` right before its fence; its lines that start with `$ `
//! are the commands, the others the output, compared line for line with what a
//! test ran (each process id, `pid N`, left out of the comparison).

use std::path::Path;

/// The marker before a sample's fence.
const MARKER: &str = "<!-- sample: ";

/// The output lines of the sample `name` in `page` (a path under `repo`); panics
/// when the page has no such sample.
pub fn sample(repo: &Path, page: &str, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
    let marker = format!("{MARKER}{name} -->\n");
    let start = text
        .find(&marker)
        .unwrap_or_else(|| panic!("{page} has no sample {name}"));
    let block = &text[start + marker.len()..];
    let body = block.split_once('\n').map_or("", |(_, body)| body);
    let end = body.find("\n```").map_or(body.len(), |end| end + 1);
    body[..end]
        .lines()
        .filter(|line| !line.starts_with("$ "))
        .map(without_pid)
        .collect()
}

/// Every sample name marked in `page`.
pub fn sample_names(repo: &Path, page: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo.join(page)).unwrap_or_else(|e| panic!("{page}: {e}"));
    text.lines()
        .filter_map(|line| line.strip_prefix(MARKER)?.strip_suffix(" -->"))
        .map(str::to_string)
        .collect()
}

/// Panics unless `printed`, each `(from, to)` of `replace` replaced in it, is the
/// output of the sample `name` of `page`.
pub fn assert_sample(repo: &Path, page: &str, name: &str, printed: &str, replace: &[(&str, &str)]) {
    let printed = replace
        .iter()
        .fold(printed.to_string(), |text, (from, to)| {
            text.replace(from, to)
        });
    let printed: Vec<String> = printed.lines().map(without_pid).collect();
    let shown = sample(repo, page, name);
    assert!(
        printed == shown,
        "{page}: sample {name} differs from what the build prints.\nshown:\n{}\nprinted:\n{}",
        shown.join("\n"),
        printed.join("\n")
    );
}

/// `line` with each process id (`pid 1234`) as `pid N`.
fn without_pid(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("pid ") {
        out += &rest[..at + 4];
        rest = &rest[at + 4..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits > 0 {
            out += "N";
            rest = &rest[digits..];
        }
    }
    out + rest
}
