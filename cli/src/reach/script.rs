//! A script given to `reach` (Debian's `/usr/games/minetestserver` is a shell
//! wrapper around an ELF program): its interpreter line, and the ELF program it
//! runs where its text names one by an absolute path (after `exec`, first; simple
//! `NAME=/path` assignments expanded). Only the first 64 KiB are read: a wrapper
//! is short.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The bytes of a script read.
const READ: usize = 64 << 10;
/// The kernel reads at most this much of the `#!` line (`BINPRM_BUF_SIZE`).
const INTERPRETER_LINE: usize = 256;

/// What a script is and runs.
#[derive(Debug, Serialize)]
pub struct Script {
    /// Its `#!` line, without `#!` and the newline.
    pub interpreter: String,
    /// The ELF program it runs, where found.
    pub runs: Option<PathBuf>,
}

/// Reads the script `file` (whose first bytes are `#!`), of `len` bytes.
pub fn read_script(file: &File, len: u64) -> std::io::Result<Script> {
    let mut text = vec![0; READ.min(len as usize)];
    file.read_exact_at(&mut text, 0)?;
    let text = String::from_utf8_lossy(&text);
    let first = text.lines().next().unwrap_or_default();
    let interpreter = first
        .strip_prefix("#!")
        .unwrap_or(first)
        .chars()
        .take(INTERPRETER_LINE)
        .collect::<String>()
        .trim()
        .to_string();
    Ok(Script {
        runs: program_run(&text, &interpreter),
        interpreter,
    })
}

/// The ELF program `text` runs: the first absolute path to an ELF file after an
/// `exec`, else anywhere but the interpreter line; `None` if there is none.
fn program_run(text: &str, interpreter: &str) -> Option<PathBuf> {
    let mut variables = HashMap::new();
    let mut found: Option<PathBuf> = None;
    for line in text.lines().skip(1) {
        let line = line.split(" #").next().unwrap_or_default().trim();
        if line.starts_with('#') {
            continue;
        }
        let words: Vec<String> = line
            .split(|c: char| c.is_whitespace() || "\"';()|&<>`".contains(c))
            .filter(|word| !word.is_empty())
            .map(|word| expand(word, &variables))
            .collect();
        for (name, value) in words.iter().filter_map(|word| word.split_once('=')) {
            variables.insert(name.to_string(), value.to_string());
        }
        let exec = words.first().is_some_and(|word| word == "exec");
        let program = words
            .iter()
            .map(Path::new)
            .find(|path| path.is_absolute() && path.as_os_str() != interpreter && is_elf(path));
        match program {
            Some(program) if exec => return Some(program.to_path_buf()),
            Some(program) if found.is_none() => found = Some(program.to_path_buf()),
            _ => {}
        }
    }
    found
}

/// `word` with `$NAME` and `${NAME}` replaced by the values assigned so far.
fn expand(word: &str, variables: &HashMap<String, String>) -> String {
    let mut word = word.to_string();
    for (name, value) in variables {
        word = word
            .replace(&format!("${{{name}}}"), value)
            .replace(&format!("${name}"), value);
    }
    word
}

/// Whether `path` is a regular file that starts as an ELF file does.
fn is_elf(path: &Path) -> bool {
    let mut magic = [0; 4];
    File::open(path)
        .and_then(|mut file| {
            if !file.metadata()?.is_file() {
                return Ok(false);
            }
            file.read_exact(&mut magic).map(|()| magic == *b"\x7fELF")
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_program_after_exec_is_found_through_a_variable() {
        let elf = std::env::current_exe().unwrap();
        let (dir, name) = (elf.parent().unwrap(), elf.file_name().unwrap());
        let text = format!(
            "#!/bin/sh\n# runs {}\nDIR={}\nexport FOO=bar\nexec \"${{DIR}}/{}\" \"$@\"\n",
            "/bin/true",
            dir.display(),
            name.to_string_lossy()
        );
        assert_eq!(program_run(&text, "/bin/sh"), Some(elf.clone()));
        // No exec: the first ELF file named; none: nothing.
        let text = format!("#!/bin/sh\n{} --flag\n", elf.display());
        assert_eq!(program_run(&text, "/bin/sh"), Some(elf));
        assert_eq!(
            program_run("#!/bin/sh\necho /etc/hostname\n", "/bin/sh"),
            None
        );
    }
}
