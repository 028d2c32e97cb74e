//! The `refilter` subcommand's front: its arguments checked, the run, its report on
//! stdout (text or JSON, terminal-safe) and its errors on stderr, its exit status.

use std::path::Path;
use std::process::ExitCode;

use leveldb_bloom::BloomFilterPolicy;

use crate::args::NewFilters;
use crate::dry_run;
use crate::output::{json_safe, print_error, terminal_safe, write_stdout};
use crate::refilter::refilter;

/// Runs `refilter` (or its dry run) on the database at `path`.
pub fn run(
    path: &Path,
    bits_per_key: &[u32],
    policy: NewFilters,
    dry_run: bool,
    json: bool,
) -> ExitCode {
    let policy_at = |bits| match policy {
        NewFilters::Leveldb => BloomFilterPolicy::new(bits),
        NewFilters::Legacy => BloomFilterPolicy::legacy(bits),
    };
    let shown = |document: String, text: String| {
        if json {
            json_safe(&document) + "\n"
        } else {
            terminal_safe(&text)
        }
    };
    let (out, failed) = if dry_run {
        let policies: Vec<BloomFilterPolicy> = bits_per_key.iter().map(|&b| policy_at(b)).collect();
        match dry_run::dry_run(path, &policies) {
            Ok(report) => (
                shown(
                    serde_json::to_string_pretty(&report).expect("plain data"),
                    report.text(),
                ),
                false,
            ),
            Err(error) => {
                print_error(&error);
                return ExitCode::from(1);
            }
        }
    } else {
        let [bits] = bits_per_key else {
            print_error("--bits-per-key: one value, except with --dry-run");
            return ExitCode::from(2);
        };
        let report = refilter(path, policy_at(*bits));
        if let Some(error) = &report.error {
            print_error(error);
        }
        (
            shown(
                serde_json::to_string_pretty(&report).expect("plain data"),
                report.text(),
            ),
            report.error.is_some(),
        )
    };
    if let Err(message) = write_stdout(&out) {
        print_error(&message);
        return ExitCode::from(1);
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
