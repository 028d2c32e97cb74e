//! The `reach` subcommand's front: each file opened (a regular file, never waiting
//! on a FIFO) and judged by what it is: an ELF file by [`judge`], a script by the
//! program it runs (or the interpreter it names, when that is Python's or Node's);
//! reported on stdout (text or JSON, terminal-safe), saying which files were not
//! read or not judged; each unreadable file a failure of the run naming the file
//! ([`exit::Failures`](crate::exit::Failures)); the exit status.

use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Result};
use serde::Serialize;

use crate::exit::conclude;
use crate::output::{json_safe, terminal_safe, write_stdout};
use crate::reach::{judge, read_elf, read_script, FileReach, Script, StringAbi, Verdict, MARKS};

/// Exit status when `LD_PRELOAD` cannot reach some LevelDB bloom call.
const UNREACHED: u8 = 3;

/// One file in the report: its findings, or why it could not be read.
#[derive(Serialize)]
struct Entry {
    path: PathBuf,
    /// The script that runs this program, for one found through a script.
    #[serde(skip_serializing_if = "Option::is_none")]
    run_by: Option<PathBuf>,
    /// What the file is when it is a script.
    #[serde(skip_serializing_if = "Option::is_none")]
    script: Option<Script>,
    #[serde(flatten)]
    found: Option<FileReach>,
    reason: Option<&'static str>,
    route: Option<String>,
    error: Option<String>,
}

impl Entry {
    fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            run_by: None,
            script: None,
            found: None,
            reason: None,
            route: None,
            error: None,
        }
    }

    /// Judged: an ELF file whose verdict is known, or an interpreter.
    fn judged(&self) -> bool {
        self.found.is_some()
    }
}

#[derive(Serialize)]
struct Report {
    files: Vec<Entry>,
    /// Whether every file was read and judged, and `LD_PRELOAD` reaches every
    /// LevelDB bloom call in them.
    reached_all: bool,
    /// The files that could not be read (their errors say why): nothing is said of them.
    not_read: Vec<PathBuf>,
    /// Scripts whose program was not found: what they run was not judged.
    not_judged: Vec<PathBuf>,
}

/// Runs `reach` on `paths`: exit 0 when every file was read and judged and
/// `LD_PRELOAD` reaches every LevelDB bloom call in them, 3 when some cannot be
/// reached, 1 when a file could not be read or judged (the others are still
/// reported).
pub fn run(paths: &[PathBuf], json: bool) -> Result<ExitCode> {
    let files: Vec<Entry> = paths.iter().flat_map(|path| entries(path)).collect();
    let not_read: Vec<PathBuf> = (files.iter())
        .filter(|entry| entry.error.is_some())
        .map(|entry| entry.path.clone())
        .collect();
    let not_judged: Vec<PathBuf> = (files.iter())
        .filter(|entry| {
            entry
                .script
                .as_ref()
                .is_some_and(|_| !runs_judged(entry, &files))
        })
        .map(|entry| entry.path.clone())
        .collect();
    let reached = |entry: &Entry| entry.found.as_ref().and_then(|found| found.reached);
    let unreached = files.iter().any(|entry| reached(entry) == Some(false));
    let undecided = files
        .iter()
        .any(|entry| entry.judged() && reached(entry).is_none());
    let reached_all = not_read.is_empty() && not_judged.is_empty() && !unreached && !undecided;
    let failures = files
        .iter()
        .filter_map(|entry| entry.error.clone())
        .collect();
    let report = Report {
        files,
        reached_all,
        not_read,
        not_judged,
    };
    let written = write_stdout(&if json {
        let document = serde_json::to_string_pretty(&report).expect("plain data");
        json_safe(&document) + "\n"
    } else {
        terminal_safe(&text(&report))
    });
    let status = if unreached {
        UNREACHED
    } else if reached_all {
        0
    } else {
        1
    };
    conclude(written, failures, ExitCode::from(status))
}

/// Whether the program the script `entry` runs is judged in `files`.
fn runs_judged(entry: &Entry, files: &[Entry]) -> bool {
    (files.iter()).any(|file| file.run_by.as_ref() == Some(&entry.path) && file.judged())
}

/// The entries for `path`: the file's, and for a script the program it runs.
fn entries(path: &Path) -> Vec<Entry> {
    let mut entry = Entry::new(path);
    let (file, len, head) = match open(path) {
        Ok(opened) => opened,
        Err(error) => {
            entry.error = Some(format!("{}: {error:#}", path.display()));
            return vec![entry];
        }
    };
    if head.starts_with(b"#!") {
        return script_entries(entry, &file, len);
    }
    if let Err(error) = judge_elf(&mut entry, &file, len, &head) {
        entry.error = Some(format!("{}: {error:#}", path.display()));
    }
    vec![entry]
}

/// A script's entry, then its program's: the ELF file it runs, or the interpreter
/// it names when that is Python or Node (whose extension modules hold LevelDB).
fn script_entries(mut entry: Entry, file: &File, len: u64) -> Vec<Entry> {
    let script = match read_script(file, len) {
        Ok(script) => script,
        Err(error) => {
            entry.error = Some(format!("{}: read: {error}", entry.path.display()));
            return vec![entry];
        }
    };
    let mut program = None;
    let candidates = script
        .runs
        .iter()
        .cloned()
        .chain(interpreter_paths(&script.interpreter));
    for candidate in candidates {
        let mut judged = Entry::new(&candidate);
        judged.run_by = Some(entry.path.clone());
        let opened = open(&candidate);
        let Ok((file, len, head)) = opened else {
            continue;
        };
        if judge_elf(&mut judged, &file, len, &head).is_err() {
            continue;
        }
        let interpreter = judged.found.as_ref().is_some_and(|f| f.reached.is_none());
        if script.runs.as_ref() == Some(&candidate) || interpreter {
            program = Some(judged);
            break;
        }
    }
    entry.script = Some(script);
    std::iter::once(entry).chain(program).collect()
}

/// The interpreters a `#!` line may name: its first word, or with `/usr/bin/env`,
/// each file of `PATH` by the name of the command it runs (the first may be a
/// wrapper script, as pyenv's shims are).
fn interpreter_paths(line: &str) -> Vec<PathBuf> {
    let mut words = line.split_whitespace();
    let Some(first) = words.next().map(PathBuf::from) else {
        return Vec::new();
    };
    if first.file_name().is_none_or(|name| name != "env") {
        return vec![first];
    }
    let (Some(command), Some(path)) = (
        words.find(|word| !word.starts_with('-')),
        std::env::var_os("PATH"),
    ) else {
        return Vec::new();
    };
    std::env::split_paths(&path)
        .map(|dir| dir.join(command))
        .filter(|candidate| candidate.is_file())
        .collect()
}

/// Judges the ELF file `file` (its first bytes `head`, its length `len`) into
/// `entry`; an error when it is not one or cannot be read.
fn judge_elf(entry: &mut Entry, file: &File, len: u64, head: &[u8]) -> Result<()> {
    if !head.starts_with(b"\x7fELF") {
        bail!("not an ELF file (a program, shared library or extension module) nor a script");
    }
    let found = judge(&read_elf(file, len, &MARKS)?);
    entry.reason = Some(found.verdict.reason());
    entry.route = Some(found.verdict.route());
    entry.found = Some(found);
    Ok(())
}

/// The file, opened without waiting on a FIFO or a device: a regular file, its
/// length and first 4 bytes (fewer in a shorter file).
fn open(path: &Path) -> Result<(File, u64, Vec<u8>)> {
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        bail!("not a regular file");
    }
    let mut head = vec![0; 4.min(metadata.len() as usize)];
    file.read_exact_at(&mut head, 0)
        .map_err(|e| anyhow!("read: {e}"))?;
    Ok((file, metadata.len(), head))
}

/// The text report: per file, what it does and the route; then what was not read
/// or judged, and the verdict on what was.
fn text(report: &Report) -> String {
    let mut out = String::new();
    for entry in &report.files {
        out += &entry_text(entry, report);
    }
    let list = |paths: &[PathBuf]| -> String {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        shown.join(", ")
    };
    if !report.not_read.is_empty() {
        out += &format!(
            "Not read (the errors are on stderr), so not judged: {}.\n",
            list(&report.not_read)
        );
    }
    if !report.not_judged.is_empty() {
        out += &format!(
            "Not judged: {}: run leveldb-bloom reach on the program each runs.\n",
            list(&report.not_judged)
        );
    }
    let reached = |entry: &&Entry| entry.found.as_ref().and_then(|found| found.reached);
    let known = report.files.iter().filter(|e| reached(e).is_some()).count();
    out += if known == 0 {
        "No file was judged: nothing is known of LD_PRELOAD's reach (above: what to judge).\n"
    } else if report.files.iter().any(|e| reached(&e) == Some(false)) {
        "LD_PRELOAD cannot reach some LevelDB bloom calls: take the route given.\n"
    } else if report.reached_all {
        "LD_PRELOAD reaches every LevelDB bloom call in these files.\n"
    } else {
        "LD_PRELOAD reaches every LevelDB bloom call in the files judged; of the rest \
         (above) nothing is known.\n"
    };
    out
}

/// One entry's lines: a script and what it runs, or an ELF file's verdict, ABI,
/// default bits and route.
fn entry_text(entry: &Entry, report: &Report) -> String {
    let path = entry.path.display();
    if let Some(script) = &entry.script {
        let program = report
            .files
            .iter()
            .find(|f| f.run_by.as_ref() == Some(&entry.path));
        return match program {
            Some(program) => format!(
                "{path}: a script (#!{}) that runs {}: judged next.\n",
                script.interpreter,
                program.path.display()
            ),
            None => format!(
                "{path}: a script (#!{}); no ELF program it runs was found in its text.\n",
                script.interpreter
            ),
        };
    }
    let (Some(found), Some(reason), Some(route)) = (&entry.found, entry.reason, &entry.route)
    else {
        return String::new();
    };
    let by = entry.run_by.as_ref().map_or(String::new(), |script| {
        format!(" (run by {})", script.display())
    });
    let mut out = format!("{path}{by}: {reason}.\n");
    if let Some(abi) = found.string_abi {
        let abi = match abi {
            StringAbi::Cxx11 => "the new one (std::__cxx11::basic_string)",
            StringAbi::Cxx98 => "the old one (_GLIBCXX_USE_CXX11_ABI=0)",
            StringAbi::Both => "names of both ABIs",
        };
        out += &format!("  std::string ABI: {abi}\n");
    }
    // A program that opens databases and sets no policy: its route says it.
    let default_bits = found
        .default_bits
        .filter(|_| found.verdict != Verdict::OpensWithoutPolicy);
    if let Some(default_bits) = default_bits {
        out += &format!("  default bits: {}\n", default_bits.text());
    }
    out += &format!("  route: {route}\n");
    out
}
