//! `reach`: whether `LD_PRELOAD`ing libleveldb_bloom reaches the LevelDB bloom
//! policy of a program, extension module or library, read from its ELF file without
//! running it (goblin): its dynamic symbols, relocations and flags, and the marks
//! LevelDB's code leaves in its data.
//!
//! The dynamic linker decides a call through the PLT or GOT, the global scope (where
//! a preloaded library comes right after the program) first; a call the static
//! linker resolved inside the file never asks it. So a file that imports LevelDB's
//! bloom functions, or exports `leveldb::NewBloomFilterPolicy(int)` and calls it
//! through a relocation without `-Bsymbolic`, is reached; one that exports it but
//! was linked `-Bsymbolic` (`DF_SYMBOLIC`) or `-Bsymbolic-functions` (no relocation
//! names it), or holds LevelDB without exporting it (a static link, hidden
//! visibility), is not. The same rules as the library's own line at exit
//! (src/self_bound.rs).

pub mod command;
mod elf_read;
mod script;
mod verdict;

use serde::Serialize;

pub use elf_read::{read_elf, ElfParts};
pub use script::{read_script, Script};
pub use verdict::{DefaultBits, Verdict};

/// `leveldb::NewBloomFilterPolicy(int)`.
const NEW_POLICY: &str = "_ZN7leveldb20NewBloomFilterPolicyEi";
/// LevelDB's C API's bloom policy, which calls it.
const C_NEW_POLICY: &str = "leveldb_filterpolicy_create_bloom";
/// LevelDB's C API's open, and the start of `leveldb::DB::Open`'s names (each
/// `std::string` ABI spells the rest its way): what `LEVELDB_BLOOM_DEFAULT_BITS`
/// interposes.
const C_OPEN: &str = "leveldb_open";
/// The C API's setter, which tells the default bits where a LevelDB's `Options`
/// keeps its filter policy.
const C_SET_POLICY: &str = "leveldb_options_set_filter_policy";
const OPEN_PREFIX: &str = "_ZN7leveldb2DB4Open";
/// What LevelDB with its bloom policy leaves in a file's data: the policy's name and
/// the internal-key comparator's (db/dbformat.cc), which a program merely naming the
/// policy lacks.
const LEVELDB_MARKS: [&[u8]; 2] = [
    b"leveldb.BuiltinBloomFilter2",
    b"leveldb.InternalKeyComparator",
];
/// The name of libleveldb_bloom's statistics variable: a file holding it holds the
/// swap itself (libleveldb_bloom.so, or a program linked with libleveldb_bloom.a).
const SWAP_MARK: &[u8] = b"LEVELDB_BLOOM_STATS";

/// libstdc++'s `std::string` ABI, as a file's names show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringAbi {
    /// `std::__cxx11::basic_string` (`_GLIBCXX_USE_CXX11_ABI=1`).
    Cxx11,
    /// The old reference-counted string (`_GLIBCXX_USE_CXX11_ABI=0`).
    Cxx98,
    /// Names of both.
    Both,
}

/// One ELF file's findings.
#[derive(Debug, Serialize)]
pub struct FileReach {
    pub verdict: Verdict,
    /// Whether `LD_PRELOAD` reaches every LevelDB bloom call in the file; `None`
    /// when the file cannot tell (an interpreter: its LevelDB is in a module it loads).
    pub reached: Option<bool>,
    /// Whether LevelDB's code is in the file.
    pub holds_leveldb: bool,
    /// The ABI its LevelDB's names show, else the one of its libstdc++ string imports
    /// (none for a file without LevelDB).
    pub string_abi: Option<StringAbi>,
    /// Whether `LEVELDB_BLOOM_DEFAULT_BITS` reaches the databases it opens; none for
    /// a file that opens none.
    pub default_bits: Option<DefaultBits>,
}

/// The marks [`judge`] looks for in a file's read-only data: LevelDB's two, then
/// the swap's.
pub const MARKS: [&[u8]; 3] = [LEVELDB_MARKS[0], LEVELDB_MARKS[1], SWAP_MARK];

/// Judges the ELF file whose parts (read with [`MARKS`]) are `parts`.
pub fn judge(parts: &ElfParts) -> FileReach {
    let holds_leveldb = parts.marks[..2].iter().all(|&held| held);
    let defines = |name: &str| parts.symbols.iter().any(|s| !s.import && s.name == name);
    let imports = |name: &str| parts.symbols.iter().any(|s| s.import && s.name == name);
    let opens = |s: &elf_read::DynSymbol| s.name == C_OPEN || s.name.starts_with(OPEN_PREFIX);
    let exports = defines(NEW_POLICY);
    let calls_bloom = imports(NEW_POLICY) || imports(C_NEW_POLICY);
    let imports_open = parts.symbols.iter().any(|s| s.import && opens(s));
    let exports_open = parts.symbols.iter().any(|s| !s.import && opens(s));
    let relocates = |name: &dyn Fn(&str) -> bool| parts.relocated.iter().any(|r| name(r));
    // An interpreter defines its main function, or imports it from its library.
    let interpreter = verdict::interpreter_of(|name| defines(name) || imports(name));
    let verdict = if parts.marks[2] {
        Verdict::IsTheSwap
    } else if exports && parts.symbolic {
        Verdict::Symbolic
    } else if exports && !relocates(&|r| r == NEW_POLICY) {
        Verdict::SymbolicFunctions
    } else if exports {
        Verdict::ExportsAndRelocates
    } else if holds_leveldb && parts.program {
        Verdict::StaticLink
    } else if holds_leveldb {
        Verdict::Hidden
    } else if calls_bloom {
        verdict::linked_order(&parts.needed)
    } else if imports_open {
        Verdict::OpensWithoutPolicy
    } else if let Some(interpreter) = interpreter {
        interpreter
    } else {
        Verdict::NoLevelDb
    };
    let open_relocated = relocates(&|r| r.starts_with(OPEN_PREFIX));
    // The library learns where `Options` keeps the policy from that LevelDB's C API.
    let c_api = defines(C_SET_POLICY);
    let default_bits = if verdict == Verdict::IsTheSwap {
        None
    } else if imports_open {
        Some(DefaultBits::Reaches)
    } else if exports_open && open_relocated && !parts.symbolic {
        Some(if c_api {
            DefaultBits::Reaches
        } else {
            DefaultBits::NoCApi
        })
    } else if exports_open || holds_leveldb {
        Some(DefaultBits::BoundInside)
    } else {
        None
    };
    let names = parts.symbols.iter().map(|s| s.name.as_str());
    let has_leveldb = verdict.concerns_leveldb();
    FileReach {
        verdict,
        reached: verdict.reached(),
        holds_leveldb,
        string_abi: string_abi(names).filter(|_| has_leveldb),
        default_bits,
    }
}

/// The `std::string` ABI of a file's LevelDB: from LevelDB's own names that take a
/// string (`NSt7__cxx1112basic_string…` new, `Ss` old), else from the libstdc++
/// string functions it imports or defines (`_ZNSt7__cxx1112basic_string…`,
/// `_ZNSs…`/`_ZNKSs…`).
fn string_abi<'a>(names: impl Iterator<Item = &'a str>) -> Option<StringAbi> {
    let (mut leveldb, mut libstdcxx) = ((false, false), (false, false));
    for name in names {
        if name.starts_with("_ZN7leveldb") || name.starts_with("_ZNK7leveldb") {
            leveldb.0 |= name.contains("NSt7__cxx1112basic_string");
            leveldb.1 |= name.contains("RKSs") || name.contains("PSs");
        } else {
            libstdcxx.0 |= name.starts_with("_ZNSt7__cxx1112basic_string")
                || name.starts_with("_ZNKSt7__cxx1112basic_string");
            libstdcxx.1 |= name.starts_with("_ZNSs") || name.starts_with("_ZNKSs");
        }
    }
    let abi = |(cxx11, cxx98)| match (cxx11, cxx98) {
        (true, false) => Some(StringAbi::Cxx11),
        (false, true) => Some(StringAbi::Cxx98),
        (true, true) => Some(StringAbi::Both),
        (false, false) => None,
    };
    abi(leveldb).or_else(|| abi(libstdcxx))
}

#[cfg(test)]
mod tests;
