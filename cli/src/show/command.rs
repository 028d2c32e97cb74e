//! The `show` subcommand: the page drawing a table's filters (or a playground's
//! built from given keys), written to a file or stdout.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Result;

use crate::command_line::ShowArgs;
use crate::exit::UsageError;
use crate::hints;
use crate::key_input::{key_bytes, keys_given};
use crate::output::{write_file, write_stdout};
use crate::show;

/// Writes the page `args` ask for to `args.output` (`-`: stdout).
pub fn run(args: &ShowArgs) -> Result<ExitCode> {
    if let Some(hint) = args.table.as_deref().and_then(hints::table_expected) {
        return Err(UsageError(hint).into());
    }
    let page = show_page(args)?;
    if args.output == Path::new("-") {
        write_stdout(&page)?;
    } else {
        write_file(&args.output, page.as_bytes())?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The page `show` writes.
fn show_page(args: &ShowArgs) -> Result<String> {
    let key = args
        .key
        .as_deref()
        .map(|key| key_bytes(key, args.hex))
        .transpose()?;
    let data = match &args.table {
        Some(table) => show::from_table(table, args.filter, key.as_deref())?,
        None => show::playground(args.bits_per_key, &playground_keys(args)?, key.as_deref())?,
    };
    Ok(show::page(&data))
}

/// The playground's keys: those given as arguments, then those of `--keys-file`.
fn playground_keys(args: &ShowArgs) -> Result<Vec<Vec<u8>>> {
    keys_given(&args.keys, args.keys_file.as_deref(), args.hex)
}
