//! The `run` subcommand's front: the library found beside this tool, the variables
//! made, then either printed (`--print-env`) or set for the command this process
//! becomes (`execvp`: its exit status and signals are the command's own, and Rust's
//! ignored SIGPIPE and signal mask are reset for it by the standard library).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Result};

use crate::command_line::RunArgs;
use crate::exit::NotStarted;
use crate::output::{print_warning, write_stdout};
use crate::run::locate;
use crate::run::variables::{lines, Swap};

/// Runs `run`: returns only when it printed the variables or could not start the
/// command.
pub fn run(args: &RunArgs) -> Result<ExitCode> {
    // SAFETY: getauxval only reads the process's auxiliary vector.
    if unsafe { libc::getauxval(libc::AT_SECURE) } != 0 {
        bail!("run: refused in a setuid or setgid process: the environment is another user's");
    }
    let exe = std::env::current_exe().map_err(|e| anyhow!("/proc/self/exe: {e}"))?;
    let library = locate::library(&exe)?;
    let default_bits = match args.default_bits {
        Some(bits) => Some((locate::default_bits_object(&library)?, bits)),
        None => None,
    };
    let swap = Swap {
        library,
        default_bits,
        stats: args.stats.clone(),
        simd: args.simd.clone(),
    };
    if let Some(format) = args.print_env {
        // A service's environment is not this shell's: only the shell keeps its own.
        let inherited = std::env::var_os("LD_PRELOAD").filter(|_| format.keeps_ld_preload());
        let text = lines(&swap.variables(inherited.as_deref())?, format)?;
        write_stdout(&text)?;
        return Ok(ExitCode::SUCCESS);
    }
    let variables = swap.variables(std::env::var_os("LD_PRELOAD").as_deref())?;
    let (program, args) = args
        .command
        .split_first()
        .ok_or_else(|| anyhow!("run: no command"))?;
    warn_if_unreached(program);
    let error = std::process::Command::new(program)
        .args(args)
        .envs(variables)
        .exec();
    let status = if error.kind() == std::io::ErrorKind::NotFound {
        127
    } else {
        126
    };
    Err(NotStarted(status, format!("{}: {error}", Path::new(program).display())).into())
}

/// Says once, on stderr, when `reach` finds that the swap cannot reach the LevelDB
/// of `program` (a LevelDB linked statically, `-Bsymbolic`, hidden): its reason and
/// route. A program that is not found, not ELF (a script) or unreadable is passed
/// over: the command runs (or fails) as it would.
fn warn_if_unreached(program: &OsString) {
    let Some(path) = on_path(program) else {
        return;
    };
    let Ok(file) = std::fs::File::open(&path) else {
        return;
    };
    let Ok(len) = file.metadata().map(|metadata| metadata.len()) else {
        return;
    };
    let parts = crate::reach::read_elf(&file, len, &crate::reach::MARKS);
    if let Ok(found) = parts.map(|parts| crate::reach::judge(&parts)) {
        if found.reached == Some(false) {
            print_warning(&format!(
                "{}: {}. The swap will not change its filters; route: {}",
                path.display(),
                found.verdict.reason(),
                found.verdict.route()
            ));
        }
    }
}

/// The regular file `execvp` would run for `program`: itself when it names a path,
/// else the first in `PATH` (as the shell searches it).
fn on_path(program: &OsString) -> Option<PathBuf> {
    let program = Path::new(program);
    if program.as_os_str().as_encoded_bytes().contains(&b'/') {
        return Some(program.to_path_buf()).filter(|path| path.is_file());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
}
