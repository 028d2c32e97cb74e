//! The man pages and shell completions, generated from the clap definition
//! ([`Cli`]) that `--help` shows, so that they cannot drift from it. `make install`
//! writes them with the tool's subcommands `man-pages DIR` (hidden) and `completion
//! SHELL` (listed in `--help`), which `main` adds to [`Cli`]'s and which are not
//! part of what they write.

pub mod man;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{anyhow, Result};
use clap::{CommandFactory, Subcommand};
use clap_complete::Shell;

use crate::command_line::Cli;

/// The installed command's name.
const NAME: &str = "leveldb-bloom";

// The subcommands that write the documentation (no doc comment: clap would
// make it the about text of the command they are added to).
#[derive(Subcommand)]
pub enum Generate {
    /// Writes the man pages, leveldb-bloom.1 and one per subcommand, into DIR.
    #[command(hide = true)]
    ManPages {
        /// The directory (man1).
        dir: PathBuf,
    },
    /// Prints the shell completion script for SHELL (bash, zsh, fish, elvish,
    /// powershell); `make install` and the packages install it.
    Completion {
        /// The shell.
        shell: Shell,
    },
}

impl Generate {
    /// Writes what was asked for; an error names the directory.
    pub fn run(self) -> Result<ExitCode> {
        match self {
            Self::ManPages { dir } => crate::docs::man::write_man_pages(&dir)
                .map_err(|e| anyhow!("{}: {e}", dir.display()))?,
            Self::Completion { shell } => write_completion(shell, &mut io::stdout()),
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// Writes `shell`'s completion script for the command and all its subcommands.
pub fn write_completion(shell: Shell, out: &mut dyn Write) {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), NAME, &mut script);
    if shell == Shell::Bash {
        script = bash_states_agreeing(&script);
    }
    // A closed stdout (`| head`) is no error worth a message.
    let _ = out.write_all(&script);
}

/// clap_complete's bash script spells a subcommand's state two ways when the command's
/// name has a hyphen (clap-rs/clap#6421): the loop over the words reaches
/// `leveldb__bloom__subcmd__explain`, the case arms expect
/// `leveldb__subcmd__bloom__subcmd__explain`, so no subcommand's options or values
/// would ever complete. The arms are respelled as the loop spells them (a no-op once
/// clap_complete is fixed).
fn bash_states_agreeing(script: &[u8]) -> Vec<u8> {
    let wrong = NAME.replace('-', "__subcmd__");
    let right = NAME.replace('-', "__");
    String::from_utf8_lossy(script)
        .replace(&format!("{wrong}__subcmd__"), &format!("{right}__subcmd__"))
        .into_bytes()
}
