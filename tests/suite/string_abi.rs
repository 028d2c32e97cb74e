//! The `std::string` ABI is proven, never guessed (src/dropin/string_abi.rs), and any
//! caller survives, as an attacker ran each case (issue 44; issue 55's in
//! decided_once.rs): every program below
//! works with stock LevelDB, and with this library it exits as stock does, prints
//! what stock prints, reads every key right and writes stock's tables byte for
//! byte, while this library's statistics show it built the filters.
//!
//! - an old-ABI LevelDB (built from Debian's source, tests/suite/common/source_leveldb.rs)
//!   loaded `RTLD_LOCAL` by a C plugin, also from a memfd; by Python `ctypes` with
//!   `leveldb_bloom_policy_create(10)`; and by a plugin whose C++ policy maker
//!   tail-calls `leveldb::NewBloomFilterPolicy` (checked to be a jump);
//! - a new-ABI program exporting `leveldb::LogGPSsample()` (`PSs` in its name);
//! - callers whose dynamic sections are crafted: `DT_STRSZ` beyond the mapping,
//!   linked above where they load (a negative load offset), a read-only `PT_DYNAMIC`.
//!
//! Valgrind runs the old-ABI plugin and the tail-call case on a small database.

use crate::common;

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::as_stock::{dropin_plugin, host, hosted, prove_as_stock, run, text, under_valgrind};
use common::source_leveldb::old_abi_leveldb;
use common::stats::StatsFile;
use common::{lib_path, once, Lang, Program, Scratch};

/// The drop-in plugin on the old-ABI LevelDB.
fn old_abi_plugin() -> PathBuf {
    dropin_plugin("string_abi_old_plugin.so", &old_abi_leveldb().1)
}

#[test]
fn old_abi_leveldb_in_a_plugin_opened_rtld_local() {
    let plugin = old_abi_plugin();
    prove_as_stock(hosted(&plugin), "dropin_c", "3");
    under_valgrind(&host(), &[plugin.to_str().unwrap()], "dropin_c");
}

/// The same plugin, loaded from a memfd the host inherits (`/proc/self/fd/N`).
#[test]
fn old_abi_leveldb_in_a_plugin_loaded_from_a_memfd() {
    let bytes = std::fs::read(old_abi_plugin()).unwrap();
    // SAFETY: a NUL-terminated name; no flags, so the descriptor is inherited.
    let fd = unsafe { libc::memfd_create(c"string_abi_plugin".as_ptr(), 0) };
    assert!(fd >= 0, "memfd_create: {}", std::io::Error::last_os_error());
    // SAFETY: a fresh descriptor this test owns.
    let memfd = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    std::io::Write::write_all(&mut &memfd, &bytes).unwrap();
    let plugin = PathBuf::from(format!("/proc/self/fd/{}", memfd.as_raw_fd()));
    prove_as_stock(hosted(&plugin), "dropin_c", "3");
}

/// The old-ABI LevelDB through `ctypes`, with this library's policy
/// (`leveldb_bloom_policy_create(10)`) set on its options.
#[test]
fn old_abi_leveldb_through_ctypes() {
    let (build, _) = old_abi_leveldb();
    let leveldb = build.join("libleveldb.so");
    let script = common::repo().join("tests/string_abi/ctypes_db.py");
    let command = |policy: &Path, dir: &Scratch| {
        let mut command = common::command("python3");
        command
            .arg(&script)
            .arg(&leveldb)
            .arg(policy)
            .arg(dir.path());
        command
    };
    let (stock_db, swapped_db) = (Scratch::new(), Scratch::new());
    let stock = run(command(Path::new("stock"), &stock_db), None);
    let stats = StatsFile::new();
    let mut swapped = command(&lib_path(), &swapped_db);
    swapped.env("LEVELDB_BLOOM_STATS", stats.path());
    let swapped = run(swapped, None);
    assert_eq!(text(&stock.stdout), text(&swapped.stdout));
    assert!(
        text(&swapped.stdout).contains(" 0 wrong"),
        "{}",
        text(&swapped.stdout)
    );
    stats.summary().assert_built();
    assert!(
        common::tables_with_filters(&stock_db) == common::tables_with_filters(&swapped_db),
        "tables differ from stock"
    );
}

/// A plugin on the old-ABI LevelDB whose policy comes from a C++ library's
/// `make_policy`, a jump to `leveldb::NewBloomFilterPolicy`.
#[test]
fn old_abi_leveldb_policy_made_through_a_tail_call() {
    let (_, leveldb) = old_abi_leveldb();
    let maker = once("string_abi_tail_call.so", || {
        ["-shared", "-fPIC", "-O2", "-D_GLIBCXX_USE_CXX11_ABI=0"]
            .into_iter()
            .map(String::from)
            .chain(leveldb.iter().cloned())
            .fold(
                Program::new(
                    "string_abi_tail_call.so",
                    Lang::Cxx11,
                    &["c_tests/tail_call_policy.cc"],
                ),
                Program::arg,
            )
            .build()
    });
    let code = common::run(Command::new("objdump").arg("-d").arg(&maker));
    let body = code
        .split("<make_policy>:")
        .nth(1)
        .expect("make_policy in the library");
    let body = body.split("\n\n").next().unwrap();
    assert!(
        body.contains("jmp") && body.contains("NewBloomFilterPolicy") && !body.contains("call"),
        "make_policy is no tail call:\n{body}"
    );
    let dir = maker.parent().unwrap().display().to_string();
    let flags = [
        leveldb,
        vec![
            "-Dleveldb_filterpolicy_create_bloom=make_policy".into(),
            format!("-L{dir}"),
            format!("-Wl,-rpath,{dir}"),
            "-l:string_abi_tail_call.so".into(),
        ],
    ]
    .concat();
    let plugin = dropin_plugin("string_abi_tail_call_plugin.so", &flags);
    prove_as_stock(hosted(&plugin), "dropin_c", "3");
    under_valgrind(&host(), &[plugin.to_str().unwrap()], "dropin_c");
}

/// A new-ABI program on Debian's LevelDB's C API that exports
/// `leveldb::LogGPSsample()`, whose mangled name holds `PSs`.
#[test]
fn program_exporting_a_name_with_pss() {
    let exe = once("string_abi_gps_sample", || {
        Program::new(
            "string_abi_gps_sample",
            Lang::C99,
            &["c_tests/dropin_c.c", "c_tests/gps_sample.c"],
        )
        .arg("-rdynamic")
        .arg("-lleveldb")
        .arg("-ldl")
        .build()
    });
    let exports = common::run(Command::new("nm").arg("-D").arg(&exe));
    assert!(
        exports.contains("T _ZN7leveldb12LogGPSsampleEv"),
        "{exports}"
    );
    prove_as_stock(
        |mode, dir, keys| {
            let mut command = common::command(&exe);
            command.args([mode, dir.path(), keys]);
            command
        },
        "dropin_c",
        "3",
    );
}

/// An ELF64 object's program headers: (offset in the file, type).
fn program_headers(elf: &[u8]) -> Vec<(usize, u32)> {
    let number = |at: usize, size: usize| {
        let mut bytes = [0; 8];
        bytes[..size].copy_from_slice(&elf[at..at + size]);
        u64::from_le_bytes(bytes) as usize
    };
    let (first, size, count) = (number(0x20, 8), number(0x36, 2), number(0x38, 2));
    (0..count)
        .map(|index| first + index * size)
        .map(|at| (at, number(at, 4) as u32))
        .collect()
}

const PT_DYNAMIC: u32 = 2;

/// The file offset of the dynamic section's entry of `tag`'s value.
fn dynamic_value_at(elf: &[u8], tag: u64) -> usize {
    let (header, _) = program_headers(elf)
        .into_iter()
        .find(|&(_, kind)| kind == PT_DYNAMIC)
        .expect("a dynamic section");
    let offset = u64::from_le_bytes(elf[header + 8..header + 16].try_into().unwrap()) as usize;
    (offset..)
        .step_by(16)
        .find(|&at| u64::from_le_bytes(elf[at..at + 8].try_into().unwrap()) == tag)
        .expect("the tag")
        + 8
}

/// The drop-in plugin on Debian's LevelDB, as built, patched by `patch`, saved as
/// `name`.
fn crafted_plugin(name: &str, flags: &[&str], patch: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let flags: Vec<String> = ["-lleveldb", "-ldl"]
        .iter()
        .chain(flags)
        .map(|f| f.to_string())
        .collect();
    let built = dropin_plugin(&format!("{name}.built.so"), &flags);
    let mut elf = std::fs::read(&built).unwrap();
    patch(&mut elf);
    let crafted = built.with_file_name(format!("{name}.so"));
    std::fs::write(&crafted, elf).unwrap();
    crafted
}

#[test]
fn caller_whose_string_table_size_exceeds_its_mapping() {
    let plugin = crafted_plugin("string_abi_strsz", &[], |elf| {
        const DT_STRSZ: u64 = 10;
        let at = dynamic_value_at(elf, DT_STRSZ);
        elf[at..at + 8].copy_from_slice(&0x7fff_ffff_0000u64.to_le_bytes());
    });
    prove_as_stock(hosted(&plugin), "dropin_c", "3");
}

/// The load offset the loader reports (`LD_DEBUG=files`) for `plugin` run by the
/// host `command`.
fn load_offset(mut command: Command, plugin: &str) -> u64 {
    command.env("LD_DEBUG", "files");
    let loaded = text(&run(command, None).stderr);
    loaded
        .lines()
        .skip_while(|line| !line.contains(plugin))
        .find_map(|line| line.split("base: 0x").nth(1))
        .and_then(|rest| u64::from_str_radix(rest.split_whitespace().next()?, 16).ok())
        .expect("the loader's report of the plugin")
}

/// The drop-in plugin on Debian's LevelDB linked at `address`, patched by `patch`,
/// run by a host that occupies that address first, so that the loader maps the
/// plugin elsewhere: `reserve` is `MAIN_HOST_RESERVE` (the address alone) or
/// `MAIN_HOST_RESERVE_ABOVE` (all free space from there up, so: below it).
fn linked_at(
    name: &str,
    address: u64,
    reserve: &'static str,
    patch: impl FnOnce(&mut Vec<u8>),
) -> (impl Fn(&str, &Scratch, &str) -> Command, u64) {
    let plugin = crafted_plugin(name, &[&format!("-Wl,-Ttext-segment={address:#x}")], patch);
    let hosted = move |mode: &str, dir: &Scratch, keys: &str| {
        let mut command = hosted(&plugin)(mode, dir, keys);
        command.env(reserve, format!("{address:x}"));
        command
    };
    let offset = load_offset(
        hosted("write", &Scratch::new(), "10"),
        &format!("{name}.so"),
    );
    (hosted, offset)
}

/// Linked high, loaded below: a negative load offset; the loader relocated its
/// (writable) dynamic section in place. The host fills all free space above the
/// link address: a random layout alone put the plugin above it in about 1 run of 16.
#[test]
fn caller_loaded_below_its_link_address() {
    let (hosted, offset) = linked_at(
        "string_abi_linked_high",
        0x7ff0_0000_0000,
        "MAIN_HOST_RESERVE_ABOVE",
        |_| {},
    );
    assert!(offset >= 1 << 63, "load offset {offset:#x}: not negative");
    prove_as_stock(hosted, "dropin_c", "3");
}

/// A read-only `PT_DYNAMIC`, which the loader leaves as linked, in an object linked
/// at an address at least its load offset (so no rule on the values' size tells
/// the addresses from the offsets).
#[test]
fn caller_with_a_read_only_dynamic_section() {
    const LINKED_AT: u64 = 0x6000_0000_0000;
    let (hosted, offset) = linked_at(
        "string_abi_read_only_dynamic",
        LINKED_AT,
        "MAIN_HOST_RESERVE",
        |elf| {
            const PF_W: u32 = 2;
            for (at, kind) in program_headers(elf) {
                if kind == PT_DYNAMIC {
                    let flags = u32::from_le_bytes(elf[at + 4..at + 8].try_into().unwrap());
                    elf[at + 4..at + 8].copy_from_slice(&(flags & !PF_W).to_le_bytes());
                }
            }
        },
    );
    assert!(
        offset != 0 && offset <= LINKED_AT,
        "load offset {offset:#x}"
    );
    prove_as_stock(hosted, "dropin_c", "3");
}
