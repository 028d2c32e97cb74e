//! What the table of harnesses does not run: the report line's parser, a check on a
//! harness's binary, and a run whose outcome is not a pass (helgrind's control race).

use crate::common;

#[test]
fn report_lines_parse() {
    use common::harness::parse_report;
    assert_eq!(parse_report("a", "a: 3 checks, 0 failed"), Some((3, 0)));
    assert_eq!(parse_report("a", "a: 3 checks, 2 failed"), Some((3, 2)));
    assert_eq!(parse_report("a", "ab: 3 checks, 0 failed"), None);
    assert_eq!(parse_report("a", "a: 3 checks, 0 failed; more"), None);
    assert_eq!(parse_report("a", "a: x checks, 0 failed"), None);
}

/// The reference harness cannot call ours by name by mistake: it references none of
/// the C API's names, so every call to ours goes through dlsym.
#[test]
fn reference_test_references_none_of_our_names() {
    let output = common::run(
        std::process::Command::new("nm")
            .args(["-D", "--undefined-only"])
            .arg(super::reference_test::HARNESS.build(false)),
    );
    let ours: Vec<&str> = output
        .lines()
        .filter_map(|line| line.split_whitespace().last())
        .filter(|symbol| symbol.starts_with("leveldb_"))
        .collect();
    assert!(ours.is_empty(), "the harness references {ours:?} directly");
}

/// Helgrind reports the deliberate plain race of `threads --race-control`: it is
/// watching.
#[test]
fn helgrind_reports_a_deliberate_race() {
    let exe = super::threads::HARNESS.build(false);
    let output = common::harness::command_in(common::harness::Mode::Helgrind, &exe)
        .args(["1", "--race-control"])
        .output()
        .expect("valgrind runs");
    assert_eq!(
        output.status.code(),
        Some(99),
        "helgrind missed the control race:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
