//! `make install` and `make uninstall`, as a C developer uses them: install into a
//! scratch prefix, build `examples/installed.c` with nothing but what
//! `pkg-config --cflags --libs leveldb_bloom` says (shared, then static), run it, and
//! uninstall again, leaving no file behind.
//!
//! `make install` only copies what was built; it is pointed at this test run's own
//! build (`ARTIFACTS`), so it never runs cargo, whose lock `cargo test` holds.

use crate::common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use bloom::{BloomFilterPolicy, POLICY_NAME};
use common::{Lang, Program};

const VERSION: &str = env!("CARGO_PKG_VERSION");

#[test]
fn prefix_install_links_with_pkg_config_and_uninstalls() {
    let prefix = scratch_dir("prefix");
    let prefix_arg = format!("PREFIX={}", prefix.display());
    make(&["install", &prefix_arg]);

    assert_layout(&prefix);
    // The installed tool's `run` finds the library installed beside it.
    let printed = common::run(
        Command::new(prefix.join("bin/leveldb-bloom"))
            .args(["run", "--print-env"])
            .env_remove("LD_PRELOAD"),
    );
    let library = prefix.join("lib").join(common::SONAME);
    assert_eq!(
        printed,
        format!("export LD_PRELOAD='{}'\n", library.display())
    );
    // Installed without debug information (the build keeps it).
    let sections = common::run(
        Command::new("readelf")
            .arg("-S")
            .arg(prefix.join(format!("lib/libleveldb_bloom.so.{VERSION}"))),
    );
    assert!(!sections.contains(".debug_info"), "{sections}");
    // The tool is built without it, as `cargo install` (which never strips) installs it.
    let sections = common::run(Command::new("readelf").arg("-S").arg(common::tool()));
    assert!(!sections.contains(".debug_info"), "{sections}");
    let pkg_config = PkgConfig::new(&[("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))]);
    assert_eq!(pkg_config.query(&["--modversion"]), VERSION);
    check_programs("prefix", &pkg_config, &prefix.join("lib"));

    make(&["uninstall", &prefix_arg]);
    assert_emptied(&prefix);
}

#[test]
fn destdir_install_stages_the_final_prefix() {
    let stage = scratch_dir("destdir");
    let destdir_arg = format!("DESTDIR={}", stage.display());
    make(&["install", &destdir_arg, "PREFIX=/usr"]);

    let root = stage.join("usr");
    assert_layout(&root);
    let pc = fs::read_to_string(root.join("lib/pkgconfig/leveldb_bloom.pc")).expect("installed");
    assert!(pc.starts_with("prefix=/usr\n"), "{pc}");
    // A staged tree is used the way a cross build uses a sysroot.
    let pkg_config = PkgConfig::new(&[
        ("PKG_CONFIG_PATH", root.join("lib/pkgconfig")),
        ("PKG_CONFIG_SYSROOT_DIR", stage.clone()),
    ]);
    check_programs("destdir", &pkg_config, &root.join("lib"));

    make(&["uninstall", &destdir_arg, "PREFIX=/usr"]);
    assert_emptied(&stage);
}

/// A CMake project (`tests/cmake`) finds the installed package with
/// `find_package(leveldb_bloom)` beside Debian's `leveldb` package, after the
/// installed tree was moved (the package finds itself relative to its file): its LevelDB
/// programs, C and C++, listing `leveldb_bloom::leveldb_bloom` before or after
/// `leveldb::leveldb`, run swapped (status 3, read from inside); a C program without
/// LevelDB builds filters through the C API. Then uninstall leaves nothing behind.
#[test]
fn cmake_package_keeps_the_swap_in_either_link_order() {
    let prefix = scratch_dir("cmake-prefix");
    let prefix_arg = format!("PREFIX={}", prefix.display());
    make(&["install", &prefix_arg]);
    let moved = scratch_dir("cmake-moved");
    fs::remove_dir(&moved).expect("an empty directory");
    fs::rename(&prefix, &moved).expect("the installed tree moves");
    let build = scratch_dir("cmake-build");
    common::run(
        Command::new("cmake")
            .arg("-S")
            .arg(common::repo().join("tests/cmake"))
            .arg("-B")
            .arg(&build)
            .arg(format!("-DCMAKE_PREFIX_PATH={}", moved.display()))
            .arg(format!("-DREPO={}", common::repo().display())),
    );
    common::run(Command::new("cmake").arg("--build").arg(&build));
    for program in [
        "c_bloom_first",
        "c_leveldb_first",
        "cxx_bloom_first",
        "cxx_leveldb_first",
    ] {
        let db = scratch_dir(&format!("cmake-db-{program}"));
        let shown = common::run(common::command(build.join(program)).args([
            "write",
            db.to_str().unwrap(),
            "2000",
        ]));
        assert!(shown.contains("swap status: 3\n"), "{program}: {shown}");
        let _ = fs::remove_dir_all(&db);
    }
    let shown = common::run(common::command(build.join("c_alone")).args(["10", "hello", "world"]));
    assert!(shown.contains(POLICY_NAME), "{shown}");
    let _ = fs::remove_dir_all(&build);
    fs::rename(&moved, &prefix).expect("the installed tree moves back");
    make(&["uninstall", &prefix_arg]);
    assert_emptied(&prefix);
}

#[test]
fn install_without_a_build_stops_with_a_hint() {
    let prefix = scratch_dir("unbuilt");
    let empty = scratch_dir("unbuilt-artifacts");
    let output = make_command(&[
        "install",
        &format!("PREFIX={}", prefix.display()),
        &format!("ARTIFACTS={}", empty.display()),
    ])
    .output()
    .expect("make runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("run 'make' first"), "{stderr}");
    assert_eq!(files_under(&prefix), BTreeMap::new());
}

/// The files `make install` puts under `root` (a prefix), and nothing else.
fn assert_layout(root: &Path) {
    let real_name = format!("libleveldb_bloom.so.{VERSION}");
    let mut expected = BTreeMap::from([
        (format!("lib/{real_name}"), Entry::File),
        (
            format!("lib/{}", common::SONAME),
            Entry::Link(real_name.clone()),
        ),
        (
            "lib/libleveldb_bloom.so".to_string(),
            Entry::Link(common::SONAME.to_string()),
        ),
        ("lib/libleveldb_bloom.a".to_string(), Entry::File),
        (
            "lib/libleveldb_bloom_default_bits.so".to_string(),
            Entry::File,
        ),
        ("bin/leveldb-bloom".to_string(), Entry::File),
        (
            "lib/cmake/leveldb_bloom/leveldb_bloomConfig.cmake".to_string(),
            Entry::File,
        ),
        (
            "lib/cmake/leveldb_bloom/leveldb_bloomConfigVersion.cmake".to_string(),
            Entry::File,
        ),
        ("lib/pkgconfig/leveldb_bloom.pc".to_string(), Entry::File),
        (
            "share/bash-completion/completions/leveldb-bloom".to_string(),
            Entry::File,
        ),
        (
            "share/zsh/site-functions/_leveldb-bloom".to_string(),
            Entry::File,
        ),
        (
            "share/fish/vendor_completions.d/leveldb-bloom.fish".to_string(),
            Entry::File,
        ),
        (
            "share/leveldb-bloom/installed-directories".to_string(),
            Entry::File,
        ),
        ("share/man/man7/libleveldb_bloom.7".to_string(), Entry::File),
    ]);
    // One page per subcommand, as the tool writes them.
    let pages = scratch_dir(&format!(
        "man-pages-{}",
        root.file_name().unwrap().to_string_lossy()
    ));
    common::run(Command::new(common::tool()).arg("man-pages").arg(&pages));
    for page in files_under(&pages).into_keys() {
        expected.insert(format!("share/man/man1/{page}"), Entry::File);
    }
    for page in [
        "leveldb-bloom-audit.1",
        "leveldb-bloom-explain.1",
        "leveldb-bloom-show.1",
        "leveldb-bloom-refilter.1",
    ] {
        assert!(expected.contains_key(&format!("share/man/man1/{page}")));
    }
    for header in ["leveldb_bloom.h", "leveldb_bloom.hpp"] {
        let committed = common::repo().join("include").join(header);
        if committed.exists() {
            expected.insert(format!("include/{header}"), Entry::File);
            assert_eq!(
                fs::read(root.join("include").join(header)).expect("installed header"),
                fs::read(committed).expect("committed header"),
                "{header} is installed as committed"
            );
        }
    }
    assert_eq!(files_under(root), expected);
}

/// Uninstall left `root`, which the test made empty, empty again: no file, and no
/// directory install made.
fn assert_emptied(root: &Path) {
    let left: Vec<_> = fs::read_dir(root)
        .expect("the scratch directory stays")
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    assert_eq!(left, Vec::<PathBuf>::new(), "left behind by uninstall");
}

/// Builds and runs `examples/installed.c` against the installed library, shared and
/// static, with only pkg-config's flags.
fn check_programs(variant: &str, pkg_config: &PkgConfig, installed_lib_dir: &Path) {
    let cflags = pkg_config.query(&["--cflags"]);
    assert!(!cflags.contains(&repo_include()), "{cflags}");
    let libdir = pkg_config.query(&["--variable=libdir"]);
    assert_eq!(Path::new(&libdir), installed_lib_dir);

    // Shared: the loader finds the soname link through pkg-config's libdir.
    let flags = pkg_config.query(&["--cflags", "--libs"]);
    let shared = program(&format!("installed_{variant}_shared"), &flags)
        .arg(format!("-Wl,-rpath,{libdir}"))
        .build();
    check_output(&shared);
    let loaded = common::run(outside_cargo("ldd").arg(&shared));
    let soname_line = format!(
        "{} => {}",
        common::SONAME,
        installed_lib_dir.join(common::SONAME).display()
    );
    assert!(loaded.contains(&soname_line), "{loaded}");

    // Static: libleveldb_bloom.a with the Libs.private it needs, no shared library.
    let static_flags = pkg_config
        .query(&["--static", "--cflags", "--libs"])
        .replace(
            "-lleveldb_bloom",
            "-Wl,-Bstatic -lleveldb_bloom -Wl,-Bdynamic",
        );
    let fully_linked = program(&format!("installed_{variant}_static"), &static_flags).build();
    check_output(&fully_linked);
    let loaded = common::run(outside_cargo("ldd").arg(&fully_linked));
    assert!(!loaded.contains("leveldb_bloom"), "{loaded}");
}

fn program(name: &str, flags: &str) -> Program {
    flags.split_whitespace().fold(
        Program::new(name, Lang::C99, &["examples/installed.c"]).without_repo_headers(),
        Program::arg,
    )
}

/// The installed library builds the filter this crate builds.
fn check_output(exe: &Path) {
    let keys = ["hello", "world", "leveldb", "bloom"];
    let expected = BloomFilterPolicy::new(10).build_filter(&keys);
    let hex: String = expected.iter().map(|b| format!("{b:02x}")).collect();
    let stdout = common::run(outside_cargo(exe).arg("10").args(keys));
    assert_eq!(stdout, format!("{POLICY_NAME}\n{hex}\n"));
}

/// `program` run as outside `cargo test`, which points LD_LIBRARY_PATH at its build
/// directory (and so at the library there, not the installed one).
fn outside_cargo(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut command = Command::new(program);
    command.env_remove("LD_LIBRARY_PATH");
    command
}

fn repo_include() -> String {
    common::repo().join("include").display().to_string()
}

/// `pkg-config` seeing only the given environment for its search paths.
struct PkgConfig {
    env: Vec<(&'static str, PathBuf)>,
}

impl PkgConfig {
    fn new(env: &[(&'static str, PathBuf)]) -> Self {
        Self { env: env.to_vec() }
    }

    /// pkg-config's answer for `leveldb_bloom`, trimmed.
    fn query(&self, args: &[&str]) -> String {
        let mut command = Command::new("pkg-config");
        command
            .env_remove("PKG_CONFIG_SYSROOT_DIR")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .args(args)
            .arg("leveldb_bloom");
        common::run(&mut command).trim().to_string()
    }
}

/// `make -C <repo> <args>` installing from this test run's build.
/// `make` with this test run's build: the libraries in `target/<profile>/deps`, the
/// command-line tool (built by `cargo test --workspace`) beside it.
fn make(args: &[&str]) {
    let artifacts = format!("ARTIFACTS={}", common::lib_dir().display());
    common::run(
        make_command(args)
            .arg(artifacts)
            .arg(format!("TOOL={}", common::tool().display())),
    );
}

fn make_command(args: &[&str]) -> Command {
    let mut command = Command::new(std::env::var_os("MAKE").unwrap_or("make".into()));
    command
        // A `make test` above us must not hand its jobserver or flags down.
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .env_remove("MAKELEVEL")
        .arg("--no-print-directory")
        .arg("-C")
        .arg(common::repo())
        .args(args);
    command
}

/// An empty directory of its own for each test.
fn scratch_dir(name: &str) -> PathBuf {
    let dir = common::lib_dir().join("install-tests").join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("scratch directory");
    dir
}

#[derive(Debug, PartialEq, Eq)]
enum Entry {
    File,
    Link(String),
}

/// Every file and symbolic link under `root`, by relative path (directories are
/// not listed).
fn files_under(root: &Path) -> BTreeMap<String, Entry> {
    let mut found = BTreeMap::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).expect("readable directory") {
            let path = entry.expect("directory entry").path();
            let meta = fs::symlink_metadata(&path).expect("metadata");
            let relative = path.strip_prefix(root).expect("under root");
            let relative = relative.display().to_string();
            if meta.is_dir() {
                pending.push(path);
            } else if meta.is_symlink() {
                let target = fs::read_link(&path).expect("link target");
                found.insert(relative, Entry::Link(target.display().to_string()));
            } else {
                found.insert(relative, Entry::File);
            }
        }
    }
    found
}
