//! The man pages and shell completions, generated from the clap definition
//! ([`Cli`]) that `--help` shows, so that they cannot drift from it. `make install`
//! writes them with the tool's hidden subcommands `man-pages DIR` and `completion
//! SHELL`, which `main` adds to [`Cli`]'s and which are not part of what they write.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Subcommand};
use clap_complete::Shell;

use crate::args::Cli;

/// The installed command's name.
const NAME: &str = "leveldb-bloom";

// The hidden subcommands that write the documentation (no doc comment: clap would
// make it the about text of the command they are added to).
#[derive(Subcommand)]
pub enum Generate {
    /// Writes the man pages, leveldb-bloom.1 and one per subcommand, into DIR.
    #[command(hide = true)]
    ManPages {
        /// The directory (man1).
        dir: PathBuf,
    },
    /// Prints the completion script for SHELL.
    #[command(hide = true)]
    Completion {
        /// The shell.
        shell: Shell,
    },
}

impl Generate {
    /// Writes what was asked for; an error names the directory.
    pub fn run(self) -> ExitCode {
        match self {
            Self::ManPages { dir } => match write_man_pages(&dir) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("{NAME}: {}: {e}", dir.display());
                    ExitCode::from(1)
                }
            },
            Self::Completion { shell } => {
                write_completion(shell, &mut io::stdout());
                ExitCode::SUCCESS
            }
        }
    }
}

/// Writes `leveldb-bloom.1`, and `leveldb-bloom-SUBCOMMAND.1` for every subcommand
/// but `help`, into `dir`.
pub fn write_man_pages(dir: &Path) -> io::Result<()> {
    clap_mangen::generate_to(Cli::command(), dir)
}

/// Writes `shell`'s completion script for the command and all its subcommands.
pub fn write_completion(shell: Shell, out: &mut dyn Write) {
    clap_complete::generate(shell, &mut Cli::command(), NAME, out);
}
