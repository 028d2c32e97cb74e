//! A C or C++ program of this repository, built with the project's strict flags.

use std::path::PathBuf;

use super::{lib_dir, repo};
/// C99, C++11 or C++17, each with -Wall -Wextra -Werror -pedantic.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lang {
    C99,
    Cxx11,
    Cxx17,
}

pub struct Program {
    name: String,
    lang: Lang,
    sources: Vec<PathBuf>,
    args: Vec<String>,
    repo_headers: bool,
    /// The target triple it is built for: this build's, unless [`Program::cross`].
    target: &'static str,
}

impl Program {
    /// A program built from `sources` (paths relative to the repository).
    pub fn new(name: &str, lang: Lang, sources: &[&str]) -> Self {
        Self {
            name: name.to_string(),
            lang,
            sources: sources.iter().map(|s| repo().join(s)).collect(),
            args: Vec::new(),
            repo_headers: true,
            target: env!("LEVELDB_BLOOM_TARGET"),
        }
    }

    /// Built for another CPU, with its cross compiler (Debian's `<triple>-gcc`, as the
    /// `cc` crate finds it); the file name gets the triple.
    pub fn cross(mut self, target: &'static str) -> Self {
        self.name = format!("{}.{target}", self.name);
        self.target = target;
        self
    }

    /// Leaves out `-Iinclude`: the headers must come from the arguments (e.g. an
    /// installed copy found by pkg-config).
    pub fn without_repo_headers(mut self) -> Self {
        self.repo_headers = false;
        self
    }

    /// Extra compiler or linker arguments, placed after the sources.
    pub fn arg(mut self, arg: impl Into<String>) -> Self {
        self.args.push(arg.into());
        self
    }

    /// Links `-lleveldb_bloom` from this build, with an rpath to it.
    pub fn link_bloom(self) -> Self {
        let dir = lib_dir().display().to_string();
        self.arg(format!("-L{dir}"))
            .arg(format!("-Wl,-rpath,{dir}"))
            .arg("-lleveldb_bloom")
    }

    /// Links this build's `libleveldb_bloom.a`, and the system libraries it needs.
    pub fn link_bloom_static(self) -> Self {
        [
            "-Wl,-Bstatic",
            "-lleveldb_bloom",
            "-Wl,-Bdynamic",
            "-lstdc++",
            "-lpthread",
            "-ldl",
            "-lm",
        ]
        .into_iter()
        .fold(self.arg(format!("-L{}", lib_dir().display())), Self::arg)
    }

    /// Builds with AddressSanitizer (LeakSanitizer included) and
    /// UndefinedBehaviorSanitizer, every error fatal; the program gets an `_asan`
    /// suffix so it never overwrites the plain build. Run it with [`sanitized`].
    pub fn sanitize(mut self) -> Self {
        self.name.push_str("_asan");
        self.arg("-fsanitize=address,undefined")
            .arg("-fno-omit-frame-pointer")
            .arg("-fno-sanitize-recover=all")
    }

    /// Compiles and links; panics with the compiler's output on failure.
    pub fn build(self) -> PathBuf {
        let cpp = self.lang != Lang::C99;
        let tool = cc::Build::new()
            .cpp(cpp)
            .target(self.target)
            .host(env!("LEVELDB_BLOOM_TARGET"))
            .opt_level(1)
            .debug(true)
            .cargo_metadata(false)
            .cargo_warnings(false)
            .get_compiler();
        let out_dir = lib_dir().join("c_tests");
        std::fs::create_dir_all(&out_dir).expect("output directory");
        let exe = out_dir.join(&self.name);
        let std = match self.lang {
            Lang::C99 => "-std=c99",
            Lang::Cxx11 => "-std=c++11",
            Lang::Cxx17 => "-std=c++17",
        };
        let mut command = tool.to_command();
        command
            .args([
                std,
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-D_GNU_SOURCE",
            ])
            .args(
                self.repo_headers
                    .then(|| format!("-I{}", repo().join("include").display())),
            )
            .arg("-o")
            .arg(&exe)
            .args(&self.sources)
            .args(&self.args);
        let output = command.output().expect("the C compiler runs");
        assert!(
            output.status.success(),
            "compiling {} failed: {:?}\n{}{}",
            self.name,
            command,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        exe
    }
}
