//! The `explain` subcommand: a Get of each key followed through the database at a
//! path, explained on stdout as text or JSON.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{bail, Result};
use leveldb_bloom::hash::TailBytes;

use crate::command_line::ReaderPolicy;
use crate::exit::UsageError;
use crate::explain::{self, KeyExplained};
use crate::explain::{log_keys, text as explain_text};
use crate::key_input::keys_given;
use crate::output::{json_safe, print_note, terminal_safe, write_stdout};
use crate::{database, hints, lock};

/// Explains a Get of each key of `keys`, then of `keys_file` (hex digits with
/// `hex`), in the database at `path` by a reader with `policy`; `log` reads the
/// write-ahead logs too.
pub fn run(
    path: &Path,
    keys: &[String],
    keys_file: Option<&Path>,
    hex: bool,
    json: bool,
    log: bool,
    policy: ReaderPolicy,
) -> Result<ExitCode> {
    if let Some(hint) = hints::database_expected(path) {
        return Err(UsageError(hint).into());
    }
    if let Some(holder) = lock::holder(path) {
        print_note(&format!(
            "{}: open by a running program ({holder}): keys it wrote since its last flush are \
             in its memory and its log, not in tables (--log reads the log)",
            path.display()
        ));
    }
    let keys = keys_given(keys, keys_file, hex)?;
    let explained = explain_all(path, &keys, log, policy)?;
    write_stdout(&if json {
        json_safe(&serde_json::to_string_pretty(&explained).expect("plain data")) + "\n"
    } else {
        terminal_safe(&(explain_text::reader_line(policy) + &explain_text::text(&explained)))
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The explanation of each key, in order.
fn explain_all(
    path: &Path,
    keys: &[Vec<u8>],
    log: bool,
    policy: ReaderPolicy,
) -> Result<Vec<KeyExplained>> {
    let version = leveldb_table::db::manifest::live_version(path)?;
    if let Some(name) = version
        .comparator
        .as_deref()
        .filter(|&n| n != database::BYTEWISE.as_bytes())
    {
        bail!(
            "{}: comparator {}: only databases ordered by {:?} can be explained",
            version.manifest.display(),
            leveldb_table::excerpt(name),
            database::BYTEWISE
        );
    }
    let reader = explain::Reader {
        policy_name: policy_name(policy),
        tail_bytes: match policy {
            ReaderPolicy::LegacySigned => TailBytes::Signed,
            _ => TailBytes::Unsigned,
        },
    };
    let mut in_log = if log {
        Some(log_keys::newest_in_logs(path, &version, keys)?)
    } else {
        None
    };
    keys.iter()
        .map(|key| {
            let logged = in_log
                .as_mut()
                .map(|(read, found)| (read.clone(), found.remove(key)));
            explain::explain(path, &version, reader, key, logged)
        })
        .collect()
}

/// The name of the filter policy a reader with `policy` reads filters under.
fn policy_name(policy: ReaderPolicy) -> Option<&'static str> {
    match policy {
        ReaderPolicy::Leveldb => Some(leveldb_bloom::POLICY_NAME),
        ReaderPolicy::Legacy | ReaderPolicy::LegacySigned => {
            Some(leveldb_bloom::LEGACY_POLICY_NAME)
        }
        ReaderPolicy::None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_policy_reads_its_own_filter_name() {
        assert_eq!(
            policy_name(ReaderPolicy::Leveldb),
            Some("leveldb.BuiltinBloomFilter2")
        );
        assert_eq!(
            policy_name(ReaderPolicy::Legacy),
            Some("leveldb.BuiltinBloomFilter")
        );
        assert_eq!(policy_name(ReaderPolicy::None), None);
    }

    #[test]
    fn a_file_given_for_a_database_is_a_usage_error() {
        let file = std::env::temp_dir().join(format!("explain-command-{}.ldb", std::process::id()));
        std::fs::write(&file, b"").unwrap();
        let error = run(&file, &[], None, false, false, false, ReaderPolicy::Leveldb).unwrap_err();
        assert_eq!(crate::exit::status_of(&error), 2);
        assert!(
            error.to_string().contains("a file; explain follows keys"),
            "{error}"
        );
        std::fs::remove_file(&file).unwrap();
    }

    #[test]
    fn a_directory_without_current_is_an_error_naming_current() {
        let dir = std::env::temp_dir().join(format!("explain-command-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let error = explain_all(&dir, &[b"k".to_vec()], false, ReaderPolicy::Leveldb).unwrap_err();
        assert_eq!(crate::exit::status_of(&error), 1);
        assert!(
            error
                .to_string()
                .starts_with(&dir.join("CURRENT").display().to_string()),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_hex_keys_are_refused_before_the_database_is_read() {
        let dir = std::env::temp_dir().join(format!("explain-hex-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let error = run(
            &dir,
            &["zz".into()],
            None,
            true,
            false,
            false,
            ReaderPolicy::Leveldb,
        );
        assert_eq!(error.unwrap_err().to_string(), "\"zz\": not hex");
        let keys = dir.join("keys");
        std::fs::write(&keys, "00ff\nabc\n").unwrap();
        let error = run(
            &dir,
            &[],
            Some(&keys),
            true,
            false,
            false,
            ReaderPolicy::Leveldb,
        );
        let error = error.unwrap_err().to_string();
        assert!(
            error.ends_with("keys line 2: \"abc\": an odd number of hex digits"),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
