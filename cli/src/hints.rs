//! What the tool says on a wrong turn, beyond the bare error: the way that works.

use anyhow::{anyhow, Result};
use std::path::Path;

/// Prints clap's error, with a hint where one helps (a key that is not UTF-8: `--hex`),
/// and exits as clap does (2 on a usage error; 0 for `--help` and `--version`).
pub fn exit_on_parse_error(error: clap::Error) -> ! {
    let _ = error.print();
    if error.kind() == clap::error::ErrorKind::InvalidUtf8 {
        eprintln!(
            "hint: keys are text; a key that is not UTF-8 is given in hex with --hex \
             (`printf 'caf\\351' | od -An -tx1 | tr -d ' '` gives 636166e9)"
        );
    }
    std::process::exit(error.exit_code())
}

/// The error for a directory given where one table file is expected (`show`): which
/// files to pass instead.
pub fn table_expected(path: &Path) -> Option<String> {
    if !path.is_dir() {
        return None;
    }
    let mut tables: Vec<String> = std::fs::read_dir(path)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|name| name.ends_with(".ldb") || name.ends_with(".sst"))
        .collect();
    tables.sort();
    let example = match tables.first() {
        Some(table) => format!(", e.g. {}", path.join(table).display()),
        None => String::new(),
    };
    Some(format!(
        "{}: a directory; show draws the filters of one table: pass a table file{example} \
         (`leveldb-bloom audit {}` lists the live ones)",
        path.display(),
        path.display()
    ))
}

/// The error for a file given where a database directory is expected (`explain`):
/// the directory to pass instead.
pub fn database_expected(path: &Path) -> Option<String> {
    if path.is_dir() || !path.exists() {
        return None;
    }
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    Some(format!(
        "{}: a file; explain follows keys through a whole database: pass its directory \
         ({}); to see one table's filters, `leveldb-bloom show {} --key KEY -o PAGE.html`",
        path.display(),
        dir.display(),
        path.display()
    ))
}

/// The keys of a `--keys-file`, one a line (a trailing `\r` dropped): their bytes, or,
/// with `hex`, the bytes their hex digits spell; an error names the file and line.
pub fn keys_of_file(
    file: &Path,
    text: &[u8],
    hex: bool,
    parse_hex: impl Fn(&str) -> Result<Vec<u8>>,
) -> Result<Vec<Vec<u8>>> {
    let mut lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
    if lines.last().is_some_and(|line| line.is_empty()) {
        lines.pop();
    }
    lines
        .into_iter()
        .enumerate()
        .map(|(index, line)| {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if !hex {
                return Ok(line.to_vec());
            }
            std::str::from_utf8(line)
                .map_err(|_| anyhow!("not hex (not even text)"))
                .and_then(&parse_hex)
                .map_err(|why| anyhow!("{} line {}: {why}", file.display(), index + 1))
        })
        .collect()
}
