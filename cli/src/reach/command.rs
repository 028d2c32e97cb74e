//! The `reach` subcommand's front: each file read (a regular file, never waiting on
//! a FIFO), judged by [`reach`](crate::reach), reported on stdout (text or JSON,
//! terminal-safe), each unreadable file a failure of the run naming the file
//! ([`exit::Failures`](crate::exit::Failures)); the exit status.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Result};
use serde::Serialize;

use crate::exit::conclude;
use crate::output::{json_safe, terminal_safe, write_stdout};
use crate::reach::{reach, FileReach, StringAbi};

/// Exit status when `LD_PRELOAD` cannot reach some LevelDB bloom call.
const UNREACHED: u8 = 3;

/// One file in the report: its findings, or why it could not be read.
#[derive(Serialize)]
struct Entry {
    path: PathBuf,
    #[serde(flatten)]
    found: Option<FileReach>,
    reason: Option<&'static str>,
    route: Option<&'static str>,
    error: Option<String>,
}

#[derive(Serialize)]
struct Report {
    files: Vec<Entry>,
    /// Whether `LD_PRELOAD` reaches every LevelDB bloom call in the files read.
    reached_all: bool,
}

/// Runs `reach` on `paths`: exit 0 when `LD_PRELOAD` reaches every LevelDB bloom
/// call in them, 3 when some cannot be reached, 1 when a file could not be read or
/// is not ELF (the others are still reported).
pub fn run(paths: &[PathBuf], json: bool) -> Result<ExitCode> {
    let files: Vec<Entry> = paths
        .iter()
        .map(|path| match read(path).and_then(|bytes| reach(&bytes)) {
            Ok(found) => Entry {
                path: path.clone(),
                reason: Some(found.verdict.reason()),
                route: Some(found.verdict.route()),
                found: Some(found),
                error: None,
            },
            Err(error) => Entry {
                path: path.clone(),
                found: None,
                reason: None,
                route: None,
                error: Some(format!("{}: {error:#}", path.display())),
            },
        })
        .collect();
    let reached_all = files
        .iter()
        .all(|entry| entry.found.as_ref().is_none_or(|found| found.reached));
    let failures = files
        .iter()
        .filter_map(|entry| entry.error.clone())
        .collect();
    let report = Report { files, reached_all };
    let written = write_stdout(&if json {
        let document = serde_json::to_string_pretty(&report).expect("plain data");
        json_safe(&document) + "\n"
    } else {
        terminal_safe(&text(&report))
    });
    let status = ExitCode::from(if reached_all { 0 } else { UNREACHED });
    conclude(written, failures, status)
}

/// The file's bytes: a regular file, opened without waiting on a FIFO or a device.
fn read(path: &Path) -> Result<Vec<u8>> {
    let mut file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.is_file() {
        bail!("not a regular file");
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| anyhow!("read: {e}"))?;
    Ok(bytes)
}

/// The text report: per file, what it does and the route; then the verdict.
fn text(report: &Report) -> String {
    let mut out = String::new();
    for entry in &report.files {
        let (Some(found), Some(reason), Some(route)) = (&entry.found, entry.reason, entry.route)
        else {
            continue;
        };
        out += &format!("{}: {reason}.\n", entry.path.display());
        if let Some(abi) = found.string_abi {
            let abi = match abi {
                StringAbi::Cxx11 => "the new one (std::__cxx11::basic_string)",
                StringAbi::Cxx98 => "the old one (_GLIBCXX_USE_CXX11_ABI=0)",
                StringAbi::Both => "names of both ABIs",
            };
            out += &format!("  std::string ABI: {abi}\n");
        }
        out += &format!("  route: {route}\n");
    }
    out += if report.reached_all {
        "LD_PRELOAD reaches every LevelDB bloom call in the files read.\n"
    } else {
        "LD_PRELOAD cannot reach some LevelDB bloom calls: take the route given.\n"
    };
    out
}
