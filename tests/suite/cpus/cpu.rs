//! A CPU the tests run emulated: what it needs here, and building and running for it.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use common::{once, run, Lang, Program};

/// A CPU the tests run emulated.
#[derive(Clone, Copy)]
pub(super) struct Cpu {
    /// Rust's target triple.
    pub(super) target: &'static str,
    /// Debian's multiarch triple: the cross compilers' prefix and the library
    /// directory of the CPU's packages.
    pub(super) multiarch: &'static str,
    /// qemu-user's name for it: `qemu-<name>`.
    pub(super) qemu: &'static str,
}

pub(super) const AARCH64: Cpu = Cpu {
    target: "aarch64-unknown-linux-gnu",
    multiarch: "aarch64-linux-gnu",
    qemu: "aarch64",
};
/// Big-endian.
pub(super) const S390X: Cpu = Cpu {
    target: "s390x-unknown-linux-gnu",
    multiarch: "s390x-linux-gnu",
    qemu: "s390x",
};

impl Cpu {
    /// What is missing to build and run for this CPU here, if anything.
    pub(super) fn missing(self) -> Option<String> {
        let runs = |program: &str, arg: &str| {
            Command::new(program)
                .arg(arg)
                .output()
                .is_ok_and(|output| output.status.success())
        };
        let sysroot = run(Command::new("rustc").args(["--print", "sysroot"]));
        let checks = [
            (
                runs(&format!("qemu-{}", self.qemu), "--version"),
                format!("qemu-{} (qemu-user)", self.qemu),
            ),
            (
                runs(&format!("{}-g++", self.multiarch), "--version"),
                format!("{}-g++", self.multiarch),
            ),
            (
                Path::new(&format!("/usr/lib/{}/libleveldb.so", self.multiarch)).exists(),
                format!("/usr/lib/{}/libleveldb.so (libleveldb-dev)", self.multiarch),
            ),
            (
                Path::new(sysroot.trim())
                    .join("lib/rustlib")
                    .join(self.target)
                    .exists(),
                format!("the Rust target {} (rustup target add)", self.target),
            ),
        ];
        let missing: Vec<String> = checks
            .into_iter()
            .filter(|(present, _)| !present)
            .map(|(_, what)| what)
            .collect();
        (!missing.is_empty()).then(|| missing.join(", "))
    }

    /// Whether the tests can run for this CPU; prints the SKIPPED line when not.
    pub(super) fn available(self, test: &str) -> bool {
        let Some(missing) = self.missing() else {
            return true;
        };
        test_support::skipped(
            &format!("{test} on {}", self.target),
            &format!("not available here: {missing} (scripts/ensure-leveldb installs them)"),
        );
        false
    }

    /// `cargo <args>` for this CPU with the cargo profile `profile`, in `target/cpus`,
    /// with Debian's cross linker and qemu as the runner.
    pub(super) fn cargo(self, args: &[&str], profile: &str) -> Command {
        let mut command = Command::new(env!("CARGO"));
        let variable = self.target.to_uppercase().replace('-', "_");
        command
            .current_dir(common::repo())
            .args(args)
            .args(["--profile", profile, "--target", self.target])
            .env("CARGO_TARGET_DIR", common::cache_dir("cpus"))
            .env(
                format!("CARGO_TARGET_{variable}_LINKER"),
                format!("{}-gcc", self.multiarch),
            )
            .env(
                format!("CARGO_TARGET_{variable}_RUNNER"),
                format!("qemu-{}", self.qemu),
            );
        command
    }

    /// This library built for the CPU as it ships (the release profile; once per test
    /// run, one CPU at a time: two cores).
    pub(super) fn library(self) -> PathBuf {
        static BUILDING: Mutex<()> = Mutex::new(());
        once(&format!("libleveldb_bloom.{}", self.target), || {
            let _one_at_a_time = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
            run(&mut self.cargo(&["build", "-p", "leveldb-bloom-capi"], "release"));
            common::cache_dir("cpus")
                .join(self.target)
                .join("release/libleveldb_bloom.so")
        })
    }

    /// A program of `c_tests/` built for the CPU against its LevelDB.
    pub(super) fn program(self, name: &str, lang: Lang, source: &str) -> PathBuf {
        self.build(name, lang, source, &["-lleveldb", "-ldl"])
    }

    /// `source` built for the CPU with `flags`.
    pub(super) fn build(self, name: &str, lang: Lang, source: &str, flags: &[&str]) -> PathBuf {
        once(&format!("{name}.{}", self.target), || {
            flags
                .iter()
                .fold(
                    Program::new(name, lang, &[source]).cross(self.target),
                    |program, flag| program.arg(*flag),
                )
                .build()
        })
    }

    /// `exe` run under qemu, with this library preloaded when `preload`.
    pub(super) fn emulate(self, exe: &Path, preload: bool) -> Command {
        let mut command = common::command(format!("qemu-{}", self.qemu));
        if preload {
            command
                .arg("-E")
                .arg(format!("LD_PRELOAD={}", self.library().display()));
        }
        command.arg(exe);
        command
    }
}
