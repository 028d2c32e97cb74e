//! The `refilter` subcommand's front: its arguments checked, the run, its report on
//! stdout (text or JSON) and its errors on stderr, its exit status.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use leveldb_bloom::BloomFilterPolicy;

use crate::args::NewFilters;
use crate::dry_run;
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
    if dry_run {
        let policies: Vec<BloomFilterPolicy> = bits_per_key.iter().map(|&b| policy_at(b)).collect();
        return match dry_run::dry_run(path, &policies) {
            Ok(report) => {
                let out = if json {
                    serde_json::to_string_pretty(&report).expect("plain data") + "\n"
                } else {
                    report.text()
                };
                let _ = std::io::stdout().lock().write_all(out.as_bytes());
                ExitCode::SUCCESS
            }
            Err(error) => {
                eprintln!("leveldb-bloom: ERROR {error}");
                ExitCode::from(1)
            }
        };
    }
    let [bits] = bits_per_key else {
        eprintln!("leveldb-bloom: ERROR --bits-per-key: one value, except with --dry-run");
        return ExitCode::from(2);
    };
    let report = refilter(path, policy_at(*bits));
    if let Some(error) = &report.error {
        eprintln!("leveldb-bloom: ERROR {error}");
    }
    let out = if json {
        serde_json::to_string_pretty(&report).expect("plain data") + "\n"
    } else {
        report.text()
    };
    let _ = std::io::stdout().lock().write_all(out.as_bytes());
    if report.error.is_some() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
