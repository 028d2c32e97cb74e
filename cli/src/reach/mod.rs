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

use anyhow::{anyhow, Result};
use goblin::elf::dynamic::{DF_SYMBOLIC, DT_SYMBOLIC};
use goblin::elf::header::ET_EXEC;
use goblin::elf::program_header::PT_INTERP;
use goblin::elf::Elf;
use serde::Serialize;

/// `leveldb::NewBloomFilterPolicy(int)`.
const NEW_POLICY: &str = "_ZN7leveldb20NewBloomFilterPolicyEi";
/// LevelDB's C API's bloom policy, which calls it.
const C_NEW_POLICY: &str = "leveldb_filterpolicy_create_bloom";
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

/// What `reach` finds in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// It imports LevelDB's bloom functions: the dynamic linker binds them.
    CallsThroughLinker,
    /// It exports `leveldb::NewBloomFilterPolicy` and calls it through a relocation.
    ExportsAndRelocates,
    /// It holds the swap itself.
    IsTheSwap,
    /// Linked `-Bsymbolic`.
    Symbolic,
    /// Exports it, no relocation names it: `-Bsymbolic-functions`.
    SymbolicFunctions,
    /// A program with LevelDB linked statically, not exported.
    StaticLink,
    /// A library whose LevelDB does not export it.
    Hidden,
    /// No LevelDB bloom function in it, called or held.
    NoLevelDb,
}

impl Verdict {
    /// Whether `LD_PRELOAD` reaches every LevelDB bloom call in the file.
    pub fn reached(self) -> bool {
        !matches!(
            self,
            Self::Symbolic | Self::SymbolicFunctions | Self::StaticLink | Self::Hidden
        )
    }

    /// What it means, in a sentence.
    pub fn reason(self) -> &'static str {
        match self {
            Self::CallsThroughLinker => {
                "calls LevelDB's bloom functions through the dynamic linker: LD_PRELOAD \
                 reaches them"
            }
            Self::ExportsAndRelocates => {
                "holds LevelDB and calls leveldb::NewBloomFilterPolicy through the dynamic \
                 linker (a PLT or GOT relocation, no -Bsymbolic): LD_PRELOAD reaches it"
            }
            Self::IsTheSwap => "holds libleveldb_bloom itself: already swapped",
            Self::Symbolic => {
                "binds leveldb::NewBloomFilterPolicy inside itself: linked with -Bsymbolic \
                 (DT_FLAGS has DF_SYMBOLIC); LD_PRELOAD cannot reach it"
            }
            Self::SymbolicFunctions => {
                "binds leveldb::NewBloomFilterPolicy inside itself: linked with \
                 -Bsymbolic-functions (it exports the function, but no relocation names \
                 it); LD_PRELOAD cannot reach it"
            }
            Self::StaticLink => {
                "holds LevelDB linked statically (no dynamic symbol \
                 leveldb::NewBloomFilterPolicy); LD_PRELOAD cannot reach it"
            }
            Self::Hidden => {
                "holds LevelDB with hidden symbols (no dynamic symbol \
                 leveldb::NewBloomFilterPolicy); LD_PRELOAD cannot reach it"
            }
            Self::NoLevelDb => "no LevelDB bloom function in it, called or held",
        }
    }

    /// The route that swaps the file's LevelDB.
    pub fn route(self) -> &'static str {
        match self {
            Self::CallsThroughLinker | Self::ExportsAndRelocates => {
                "LD_PRELOAD=libleveldb_bloom.so, or link -lleveldb_bloom ahead of -lleveldb"
            }
            Self::IsTheSwap | Self::NoLevelDb => "nothing to do",
            Self::Symbolic | Self::SymbolicFunctions => {
                "rebuild it without that flag (a Python extension: LDSHARED without \
                 -Wl,-Bsymbolic-functions), or link libleveldb_bloom.a into it ahead of \
                 LevelDB, or build its LevelDB with contrib/leveldb/util/bloom.cc"
            }
            Self::StaticLink | Self::Hidden => {
                "link libleveldb_bloom.a into it ahead of LevelDB, or build its LevelDB \
                 with contrib/leveldb/util/bloom.cc"
            }
        }
    }
}

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

/// One file's findings.
#[derive(Debug, Serialize)]
pub struct FileReach {
    pub verdict: Verdict,
    pub reached: bool,
    /// Whether LevelDB's code is in the file.
    pub holds_leveldb: bool,
    /// The ABI its LevelDB's names show, else the one of its libstdc++ string imports
    /// (none for a file without LevelDB).
    pub string_abi: Option<StringAbi>,
}

/// Reads the ELF file `bytes`; an error when it is not one.
pub fn reach(bytes: &[u8]) -> Result<FileReach> {
    if !bytes.starts_with(b"\x7fELF") {
        return Err(anyhow!(
            "not an ELF file (a program, shared library or extension module)"
        ));
    }
    let elf = Elf::parse(bytes).map_err(|e| anyhow!("a damaged ELF file: {e}"))?;
    let holds = |mark: &[u8]| memchr::memmem::find(bytes, mark).is_some();
    let holds_leveldb = LEVELDB_MARKS.iter().all(|mark| holds(mark));
    let name_of = |index: usize| {
        elf.dynsyms
            .get(index)
            .and_then(|symbol| elf.dynstrtab.get_at(symbol.st_name))
    };
    let (mut exports, mut imports) = (false, false);
    for symbol in elf.dynsyms.iter() {
        let Some(name) = elf.dynstrtab.get_at(symbol.st_name) else {
            continue;
        };
        if name == NEW_POLICY {
            exports |= !symbol.is_import();
        }
        if name == NEW_POLICY || name == C_NEW_POLICY {
            imports |= symbol.is_import();
        }
    }
    let relocates = elf
        .pltrelocs
        .iter()
        .chain(elf.dynrelas.iter())
        .chain(elf.dynrels.iter())
        .any(|relocation| relocation.r_sym != 0 && name_of(relocation.r_sym) == Some(NEW_POLICY));
    let symbolic = elf.dynamic.as_ref().is_some_and(|dynamic| {
        dynamic.info.flags & DF_SYMBOLIC != 0
            || dynamic.dyns.iter().any(|entry| entry.d_tag == DT_SYMBOLIC)
    });
    let program = elf.header.e_type == ET_EXEC
        || elf
            .program_headers
            .iter()
            .any(|header| header.p_type == PT_INTERP);
    let verdict = if holds(SWAP_MARK) {
        Verdict::IsTheSwap
    } else if exports && symbolic {
        Verdict::Symbolic
    } else if exports && !relocates {
        Verdict::SymbolicFunctions
    } else if exports {
        Verdict::ExportsAndRelocates
    } else if holds_leveldb && program {
        Verdict::StaticLink
    } else if holds_leveldb {
        Verdict::Hidden
    } else if imports {
        Verdict::CallsThroughLinker
    } else {
        Verdict::NoLevelDb
    };
    let names = elf
        .dynsyms
        .iter()
        .filter_map(|symbol| elf.dynstrtab.get_at(symbol.st_name));
    let has_leveldb = !matches!(verdict, Verdict::IsTheSwap | Verdict::NoLevelDb);
    Ok(FileReach {
        verdict,
        reached: verdict.reached(),
        holds_leveldb,
        string_abi: string_abi(names).filter(|_| has_leveldb),
    })
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
mod tests {
    use super::*;

    #[test]
    fn only_elf_files_are_read() {
        let error = reach(b"#!/bin/sh\n").unwrap_err();
        assert!(format!("{error}").contains("not an ELF file"), "{error}");
        assert!(reach(b"\x7fELF\x02\x01").is_err());
    }

    #[test]
    fn names_tell_the_string_abi() {
        let cxx11 = "_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_";
        let cxx98 = "_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_";
        assert_eq!(string_abi([cxx11].into_iter()), Some(StringAbi::Cxx11));
        assert_eq!(
            string_abi(
                [
                    cxx98,
                    "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_appendEPKcm"
                ]
                .into_iter()
            ),
            Some(StringAbi::Cxx98)
        );
        assert_eq!(
            string_abi(["_ZNSs6appendEPKcm"].into_iter()),
            Some(StringAbi::Cxx98)
        );
        assert_eq!(string_abi(["malloc"].into_iter()), None);
    }

    #[test]
    fn only_unreachable_verdicts_fail() {
        assert!(Verdict::CallsThroughLinker.reached());
        assert!(Verdict::NoLevelDb.reached());
        assert!(!Verdict::SymbolicFunctions.reached());
        assert!(!Verdict::Hidden.reached());
    }
}
