//! The `refilter` subcommand's front: its arguments checked, the run, its report on
//! stdout (text or JSON, terminal-safe), its error the run's, its exit status.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;
use leveldb_bloom::BloomFilterPolicy;

use crate::command_line::WriterPolicy;
use crate::exit::{conclude, UsageError};
use crate::output::{json_safe, terminal_safe, write_stdout};
use crate::refilter::dry_run;
use crate::refilter::refilter;

/// What `--dry-run` compares when not given `--bits-per-key`: LevelDB's usual 10,
/// and a smaller and a larger choice.
const DRY_RUN_BITS: [u32; 3] = [6, 10, 16];
/// What refilter writes when not given `--bits-per-key`: LevelDB's usual choice
/// (`NewBloomFilterPolicy(10)`), what `LEVELDB_BLOOM_DEFAULT_BITS=10` gives.
const DEFAULT_BITS: u32 = 10;

/// Runs `refilter` (or its dry run) on the database at `path`. A refilter that
/// changed nothing writes its report on stdout and fails with why (exit status 1).
pub fn run(
    path: &Path,
    bits_per_key: &[u32],
    policy: WriterPolicy,
    dry_run: bool,
    json: bool,
) -> Result<ExitCode> {
    let policy_at = |bits| match policy {
        WriterPolicy::Leveldb => BloomFilterPolicy::new(bits),
        WriterPolicy::Legacy => BloomFilterPolicy::legacy(bits),
    };
    let shown = |document: String, text: String| {
        if json {
            json_safe(&document) + "\n"
        } else {
            terminal_safe(&text)
        }
    };
    let (out, failure) = if dry_run {
        let bits_per_key = if bits_per_key.is_empty() {
            &DRY_RUN_BITS[..]
        } else {
            bits_per_key
        };
        let policies: Vec<BloomFilterPolicy> = bits_per_key.iter().map(|&b| policy_at(b)).collect();
        let report = dry_run::dry_run(path, &policies)?;
        let document = serde_json::to_string_pretty(&report).expect("plain data");
        (shown(document, report.text()), None)
    } else {
        let bits = match bits_per_key {
            [] => DEFAULT_BITS,
            [bits] => *bits,
            _ => {
                let why = "--bits-per-key N: one value, except with --dry-run (which \
                           compares a list: 6, 10 and 16 unless given one)";
                return Err(UsageError(why.into()).into());
            }
        };
        let (report, outcome) = refilter(path, policy_at(bits));
        let document = serde_json::to_string_pretty(&report).expect("plain data");
        (shown(document, report.text()), outcome.err())
    };
    let failures = failure
        .map(|error| format!("{error:#}"))
        .into_iter()
        .collect();
    conclude(write_stdout(&out), failures, ExitCode::SUCCESS)
}
