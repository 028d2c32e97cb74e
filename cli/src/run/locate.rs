//! Where the library is: beside this tool, as each install route lays the two out,
//! found from the tool's own path (`/proc/self/exe`) so that an install moved to
//! another prefix finds its own library, and never a path fixed at build time.
//!
//! | route | tool | library |
//! |---|---|---|
//! | a build in the repository | `target/release/leveldb-bloom` | `target/release/libleveldb_bloom.so` |
//! | `make install`, the npm package | `PREFIX/bin` | `PREFIX/lib` (or `lib64`, `lib/<multiarch>`) |
//! | the Debian package | `/usr/bin` | `/usr/lib/<multiarch>` |
//! | the wheel | `PREFIX/bin` | `PREFIX/lib/python3.*/site-packages/leveldb_bloom` |

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Result};

/// The library's soname, as every route installs it.
pub const LIBRARY: &str = "libleveldb_bloom.so.0";
/// The library as cargo leaves it in `target/release` (no soname link there).
const BUILT_LIBRARY: &str = "libleveldb_bloom.so";
/// The object that gives databases opened with no filter policy one
/// (`LEVELDB_BLOOM_DEFAULT_BITS`), installed beside the library.
pub const DEFAULT_BITS_OBJECT: &str = "libleveldb_bloom_default_bits.so";
/// The Python package the wheel puts the library in.
const PYTHON_PACKAGE: &str = "leveldb_bloom";

/// How to get the library where it is missing.
const HOW_TO_INSTALL: &str = "`cargo install` installs the tool alone; install the library \
    with the tool by one of: pip install leveldb-bloom, npm install leveldb-bloom, the Debian \
    packages leveldb-bloom-tools and libleveldb-bloom0, or `make && make install` from the \
    repository (docs/install.md)";

/// The library installed beside the tool `exe`; an error naming where it looked and
/// how to install it.
pub fn library(exe: &Path) -> Result<PathBuf> {
    let places = candidates(exe);
    places
        .iter()
        .find(|path| path.is_file())
        .cloned()
        .ok_or_else(|| {
            let looked: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
            anyhow!(
                "{}: no {LIBRARY} installed beside this tool (looked for {}). {HOW_TO_INSTALL}",
                exe.display(),
                looked.join(", ")
            )
        })
}

/// The default-bits object beside `library`; an error saying it is missing and how to
/// get it.
pub fn default_bits_object(library: &Path) -> Result<PathBuf> {
    let object = library.with_file_name(DEFAULT_BITS_OBJECT);
    if object.is_file() {
        return Ok(object);
    }
    Err(anyhow!(
        "{}: missing: --default-bits preloads it beside the library, and this install has \
         none. Install a leveldb-bloom that ships it (the same routes as the library), or, \
         in the repository, build it with `cargo build --release --workspace`",
        object.display()
    ))
}

/// Where each route puts the library, relative to the tool `exe`, in the order
/// looked at.
fn candidates(exe: &Path) -> Vec<PathBuf> {
    let Some(bin) = exe.parent() else {
        return Vec::new();
    };
    let mut places = vec![bin.join(LIBRARY), bin.join(BUILT_LIBRARY)];
    if let Some(prefix) = bin.parent() {
        let multiarch = format!("{}-linux-gnu", std::env::consts::ARCH);
        places.extend(
            [
                prefix.join("lib").join(multiarch),
                prefix.join("lib"),
                prefix.join("lib64"),
            ]
            .map(|dir| dir.join(LIBRARY)),
        );
        places.extend(python_packages(&prefix.join("lib")));
    }
    places
}

/// `lib/python3.*/site-packages/leveldb_bloom/libleveldb_bloom.so.0` under a prefix
/// (a venv, `pip install --user`, `--prefix`), one per Python version, sorted.
fn python_packages(lib: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(lib) else {
        return Vec::new();
    };
    let mut places: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("python3"))
        .map(|entry| {
            entry
                .path()
                .join("site-packages")
                .join(PYTHON_PACKAGE)
                .join(LIBRARY)
        })
        .collect();
    places.sort();
    places
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file at `path` (its directories made).
    fn touch(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"").unwrap();
    }

    #[test]
    fn each_route_s_layout_is_found_relative_to_the_tool() {
        let multiarch = format!("lib/{}-linux-gnu", std::env::consts::ARCH);
        for library in [
            "target/release/libleveldb_bloom.so",
            "lib/libleveldb_bloom.so.0",
            "lib64/libleveldb_bloom.so.0",
            &format!("{multiarch}/libleveldb_bloom.so.0"),
            "lib/python3.11/site-packages/leveldb_bloom/libleveldb_bloom.so.0",
        ] {
            let prefix = test_support::Scratch::new();
            let bin = if library.starts_with("target") {
                "target/release"
            } else {
                "bin"
            };
            let exe = prefix.dir().join(bin).join("leveldb-bloom");
            touch(&exe);
            touch(&prefix.dir().join(library));
            assert_eq!(library_of(&exe), prefix.dir().join(library), "{library}");
        }
    }

    fn library_of(exe: &Path) -> PathBuf {
        library(exe).unwrap_or_else(|e| panic!("{e:#}"))
    }

    #[test]
    fn a_tool_alone_says_where_it_looked_and_how_to_install() {
        let prefix = test_support::Scratch::new();
        let exe = prefix.dir().join("bin/leveldb-bloom");
        touch(&exe);
        let error = format!("{:#}", library(&exe).unwrap_err());
        assert!(error.contains("cargo install") && error.contains("pip install"));
        assert!(error.contains(
            &prefix
                .dir()
                .join("lib/libleveldb_bloom.so.0")
                .display()
                .to_string()
        ));
        let object = format!(
            "{:#}",
            default_bits_object(&prefix.dir().join("lib/x.so")).unwrap_err()
        );
        assert!(
            object.contains("libleveldb_bloom_default_bits.so: missing"),
            "{object}"
        );
    }
}
