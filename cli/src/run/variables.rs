//! The environment a swapped command gets: `LD_PRELOAD` with the library (and the
//! default-bits object) in front of what the user preloads, and the library's own
//! variables; written out for `eval` in a shell or for a systemd unit.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Result};

use crate::command_line::EnvFormat;

/// What `run` was asked for, the objects found.
pub struct Swap {
    /// The library, and the default-bits object with its bits per key.
    pub library: PathBuf,
    pub default_bits: Option<(PathBuf, u32)>,
    /// `LEVELDB_BLOOM_STATS`: `stderr` or a file.
    pub stats: Option<OsString>,
    /// `LEVELDB_BLOOM_SIMD`.
    pub simd: Option<String>,
}

impl Swap {
    /// The variables to set, `LD_PRELOAD` first: the objects, then `inherited` (the
    /// user's own preloads, kept after them, separated by spaces). A stats file is made
    /// absolute, so that an `eval`ed shell that changes directory still writes where it
    /// was asked.
    pub fn variables(&self, inherited: Option<&OsStr>) -> Result<Vec<(&'static str, OsString)>> {
        let mut entries = vec![preloadable(&self.library)?];
        if let Some((object, _)) = &self.default_bits {
            entries.push(preloadable(object)?);
        }
        // The user's own, after them; a copy of these objects already there (a shell
        // that eval'ed --print-env before) is not named twice.
        let ours = entries.clone();
        let kept = inherited.map(OsStr::as_bytes).unwrap_or_default();
        entries.extend(
            kept.split(|&b| b == b' ' || b == b':')
                .filter(|entry| {
                    !entry.is_empty() && !ours.iter().any(|own| own.as_bytes() == *entry)
                })
                .map(OsStr::from_bytes),
        );
        let mut preload = OsString::new();
        for (i, entry) in entries.into_iter().enumerate() {
            if i > 0 {
                preload.push(" ");
            }
            preload.push(entry);
        }
        let mut variables = vec![("LD_PRELOAD", preload)];
        if let Some((_, bits)) = self.default_bits {
            variables.push(("LEVELDB_BLOOM_DEFAULT_BITS", bits.to_string().into()));
        }
        if let Some(stats) = &self.stats {
            variables.push(("LEVELDB_BLOOM_STATS", stats_destination(stats)?));
        }
        if let Some(simd) = &self.simd {
            variables.push(("LEVELDB_BLOOM_SIMD", simd.into()));
        }
        Ok(variables)
    }
}

/// `object` as an `LD_PRELOAD` entry: the loader splits the list at spaces and
/// colons, so a path holding one cannot be named there.
fn preloadable(object: &Path) -> Result<&OsStr> {
    let bytes = object.as_os_str().as_encoded_bytes();
    if bytes
        .iter()
        .any(|&b| b == b' ' || b == b':' || b == b'\t' || b == b'\n')
    {
        bail!(
            "{}: LD_PRELOAD cannot name a path holding a space or a colon: install \
             leveldb-bloom under a prefix without them",
            object.display()
        );
    }
    Ok(object.as_os_str())
}

/// `stderr`, or the file `stats` made absolute against the current directory.
fn stats_destination(stats: &OsStr) -> Result<OsString> {
    if stats == "stderr" {
        return Ok(stats.to_owned());
    }
    if stats.is_empty() {
        bail!("--stats=: an empty destination (stderr, or a file)");
    }
    std::path::absolute(stats)
        .map(PathBuf::into_os_string)
        .map_err(|e| anyhow!("--stats={}: {e}", Path::new(stats).display()))
}

/// The variables as `format`'s lines: `export NAME='value'` for a POSIX shell, or
/// `Environment="NAME=value"` for a systemd unit (backslashes and quotes escaped,
/// `%` doubled: systemd expands specifiers there).
pub fn lines(variables: &[(&str, OsString)], format: EnvFormat) -> Result<String> {
    let mut out = String::new();
    for (name, value) in variables {
        let value = value
            .to_str()
            .filter(|value| !value.chars().any(char::is_control))
            .ok_or_else(|| {
                anyhow!(
                    "{name}={}: not printable as a line (not UTF-8, or a control character)",
                    value.to_string_lossy()
                )
            })?;
        out += &match format {
            EnvFormat::Sh => format!("export {name}='{}'\n", value.replace('\'', r"'\''")),
            EnvFormat::Systemd => {
                let value = value
                    .replace('\\', r"\\")
                    .replace('"', "\\\"")
                    .replace('%', "%%");
                format!("Environment=\"{name}={value}\"\n")
            }
        };
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swap() -> Swap {
        Swap {
            library: "/usr/lib/libleveldb_bloom.so.0".into(),
            default_bits: Some(("/usr/lib/libleveldb_bloom_default_bits.so".into(), 10)),
            stats: Some("stderr".into()),
            simd: Some("scalar".into()),
        }
    }

    #[test]
    fn the_objects_go_in_front_of_the_user_s_preloads() {
        let variables = swap().variables(Some(OsStr::new("libm.so.6"))).unwrap();
        let names: Vec<&str> = variables.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names,
            [
                "LD_PRELOAD",
                "LEVELDB_BLOOM_DEFAULT_BITS",
                "LEVELDB_BLOOM_STATS",
                "LEVELDB_BLOOM_SIMD"
            ]
        );
        assert_eq!(
            variables[0].1,
            "/usr/lib/libleveldb_bloom.so.0 /usr/lib/libleveldb_bloom_default_bits.so libm.so.6"
        );
        let again = swap()
            .variables(Some(OsStr::new("/usr/lib/libleveldb_bloom.so.0:libm.so.6")))
            .unwrap();
        assert_eq!(
            again[0].1,
            "/usr/lib/libleveldb_bloom.so.0 /usr/lib/libleveldb_bloom_default_bits.so libm.so.6"
        );
        let alone = Swap {
            default_bits: None,
            ..swap()
        };
        assert_eq!(
            alone.variables(Some(OsStr::new(""))).unwrap()[0].1,
            "/usr/lib/libleveldb_bloom.so.0"
        );
    }

    #[test]
    fn a_path_the_loader_would_split_is_refused() {
        let spaced = Swap {
            library: "/opt/my apps/lib/libleveldb_bloom.so.0".into(),
            ..swap()
        };
        let error = spaced.variables(None).unwrap_err().to_string();
        assert!(error.contains("space or a colon"), "{error}");
    }

    #[test]
    fn a_stats_file_is_made_absolute() {
        let relative = Swap {
            stats: Some("stats.txt".into()),
            ..swap()
        };
        let stats = &relative.variables(None).unwrap()[2].1;
        assert_eq!(
            Path::new(stats),
            std::env::current_dir().unwrap().join("stats.txt")
        );
    }

    #[test]
    fn lines_are_quoted_for_their_reader() {
        let variables = [("LEVELDB_BLOOM_STATS", OsString::from("/tmp/it's 100%\"\\"))];
        assert_eq!(
            lines(&variables, EnvFormat::Sh).unwrap(),
            "export LEVELDB_BLOOM_STATS='/tmp/it'\\''s 100%\"\\'\n"
        );
        assert_eq!(
            lines(&variables, EnvFormat::Systemd).unwrap(),
            "Environment=\"LEVELDB_BLOOM_STATS=/tmp/it's 100%%\\\"\\\\\"\n"
        );
        let newline = [("LEVELDB_BLOOM_STATS", OsString::from("/tmp/a\nb"))];
        assert!(lines(&newline, EnvFormat::Sh).is_err());
    }
}
