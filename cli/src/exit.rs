//! How a run ends: its exit status, and the one place a failed run's error is
//! printed ([`report_failure`], called by `main` only). 0 is success; 1 a failure, or
//! findings (keys missed, tables unreadable: [`Failures`]); 2 a usage error, whose
//! error is a [`UsageError`] (or clap's own, which says its status); 126 or 127 a
//! command `run` could not start ([`NotStarted`]).

use std::fmt;
use std::process::ExitCode;

use anyhow::Result;

use crate::output::{print_error, print_hint};

/// A command line that asks for something the tool does not do (a file where a
/// directory is expected, several values where one is): exit status 2, as clap's
/// own usage errors.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// A command `run` could not start: its exit status, as a shell's (126 found but not
/// runnable, 127 not found), and why.
#[derive(Debug)]
pub struct NotStarted(pub u8, pub String);

impl fmt::Display for NotStarted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.1)
    }
}

impl std::error::Error for NotStarted {}

/// A run that went to its end (its report written) but failed on some of its
/// inputs (a table unreadable, a file not ELF, a refilter that changed nothing):
/// each failure's line, exit status 1.
#[derive(Debug)]
pub struct Failures(pub Vec<String>);

impl fmt::Display for Failures {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.join("\n"))
    }
}

impl std::error::Error for Failures {}

/// Ends a run whose report has been written (`written`: an error if stdout could
/// not take it): `failures` (and stdout's error, last) as the run's error, or, with
/// none, `status`.
pub fn conclude(
    written: Result<()>,
    mut failures: Vec<String>,
    status: ExitCode,
) -> Result<ExitCode> {
    if let Err(error) = written {
        failures.push(format!("{error:#}"));
    }
    if failures.is_empty() {
        Ok(status)
    } else {
        Err(Failures(failures).into())
    }
}

/// The exit status of a run that failed with `error`.
pub fn status_of(error: &anyhow::Error) -> u8 {
    if let Some(parse_error) = error.downcast_ref::<clap::Error>() {
        u8::try_from(parse_error.exit_code()).unwrap_or(2)
    } else if error.is::<UsageError>() {
        2
    } else if let Some(NotStarted(status, _)) = error.downcast_ref() {
        *status
    } else {
        1
    }
}

/// Prints `error` on stderr and gives the run's exit status: clap's own errors (and
/// `--help`, `--version`) as clap prints them, with a hint where one helps; each of
/// [`Failures`] on its line; any other `leveldb-bloom: ERROR …`, each context then
/// its cause.
pub fn report_failure(error: &anyhow::Error) -> ExitCode {
    if let Some(parse_error) = error.downcast_ref::<clap::Error>() {
        let _ = parse_error.print();
        if let Some(hint) = crate::hints::of_parse_error(parse_error) {
            print_hint(hint);
        }
    } else if let Some(Failures(lines)) = error.downcast_ref() {
        lines.iter().for_each(|line| print_error(line));
    } else {
        print_error(&format!("{error:#}"));
    }
    ExitCode::from(status_of(error))
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::anyhow;

    #[test]
    fn usage_errors_exit_2_and_every_other_error_1() {
        assert_eq!(status_of(&UsageError("a file".into()).into()), 2);
        assert_eq!(status_of(&anyhow!("x.ldb: at offset 0: bad")), 1);
        let io = std::io::Error::from(std::io::ErrorKind::NotFound);
        assert_eq!(status_of(&io.into()), 1);
        assert_eq!(status_of(&Failures(vec!["a.ldb: bad".into()]).into()), 1);
        assert_eq!(
            status_of(&NotStarted(127, "app: not found".into()).into()),
            127
        );
    }

    #[test]
    fn clap_says_its_own_status() {
        use clap::error::ErrorKind;
        let help = clap::Error::new(ErrorKind::DisplayHelp);
        assert_eq!(status_of(&help.into()), 0);
        let usage = clap::Error::new(ErrorKind::InvalidUtf8);
        assert_eq!(status_of(&usage.into()), 2);
    }

    #[test]
    fn a_run_concludes_with_its_failures_and_stdout_s_error_last() {
        let status = conclude(Ok(()), vec![], ExitCode::from(3)).unwrap();
        assert_eq!(status, ExitCode::from(3));
        let error = conclude(
            Err(anyhow!("stdout: full")),
            vec!["a.ldb: bad".into()],
            ExitCode::SUCCESS,
        )
        .unwrap_err();
        let Some(Failures(lines)) = error.downcast_ref() else {
            panic!("{error:#}")
        };
        assert_eq!(lines, &["a.ldb: bad", "stdout: full"]);
        assert_eq!(status_of(&error), 1);
    }

    #[test]
    fn a_usage_error_says_only_its_message() {
        let error: anyhow::Error = UsageError("db/000005.ldb: a file".into()).into();
        assert_eq!(format!("{error:#}"), "db/000005.ldb: a file");
    }
}
