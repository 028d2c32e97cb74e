//! How a run ends: its exit status, and the one place a failed run's error is
//! printed. 0 is success; 1 a failure, or findings (keys missed, tables unreadable);
//! 2 a usage error, whose error is a [`UsageError`].

use std::fmt;
use std::process::ExitCode;

use crate::output::print_error;

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

/// The exit status of a run that failed with `error`.
pub fn status_of(error: &anyhow::Error) -> u8 {
    if error.is::<UsageError>() {
        2
    } else {
        1
    }
}

/// Prints `error` on stderr (`leveldb-bloom: ERROR …`, each context then its cause)
/// and gives the run's exit status.
pub fn report_failure(error: &anyhow::Error) -> ExitCode {
    print_error(&format!("{error:#}"));
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
    }

    #[test]
    fn a_usage_error_says_only_its_message() {
        let error: anyhow::Error = UsageError("db/000005.ldb: a file".into()).into();
        assert_eq!(format!("{error:#}"), "db/000005.ldb: a file");
    }
}
