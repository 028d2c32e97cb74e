//! Which `std::string` an object's code was compiled with, read from its dynamic
//! symbols (or its file's symbol table, where those show nothing), by exact mangled
//! names (never a substring of another name: a
//! `leveldb::LogGPSsample()` holding `PSs` tells nothing):
//!
//! - a LevelDB spells its own in the functions it exports that take a string
//!   (`leveldb::DB::Open`, `DestroyDB`, `RepairDB`, …): `std::__cxx11::basic_string`
//!   for libstdc++'s new ABI, `Ss` (the reference-counted string) for its old one,
//!   `std::__1::basic_string` for libc++'s;
//! - any other code shows the string members it imports from its C++ library
//!   (whole class prefixes), beside the LevelDB names it defines.
//!
//! Exactly one shown proves it. In an object holding this library's own code (a
//! program linked with `libleveldb_bloom.a`), the string members its append helpers
//! import are left out (`OWN_IMPORTS`): they show both of libstdc++'s. Anywhere
//! else they are the object's own (a program may import no other string member).

use loader::Object;

/// The `std::string` ABIs this library can append to (libstdc++'s two,
/// `_GLIBCXX_USE_CXX11_ABI`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StringAbi {
    /// `std::__cxx11::basic_string`, `_GLIBCXX_USE_CXX11_ABI=1`.
    Cxx11,
    /// The reference-counted string, `_GLIBCXX_USE_CXX11_ABI=0`.
    Cxx98,
}

/// What an object's names prove.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Proof {
    /// One of libstdc++'s strings.
    Proven(StringAbi),
    /// libc++'s string: one this library cannot write.
    LibCxx,
    /// No string, or more than one.
    Nothing,
}

/// The strings seen: `[new libstdc++, old libstdc++, libc++]`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Seen([bool; 3]);

impl Seen {
    fn proof(self) -> Proof {
        match self.0 {
            [true, false, false] => Proof::Proven(StringAbi::Cxx11),
            [false, true, false] => Proof::Proven(StringAbi::Cxx98),
            [false, false, true] => Proof::LibCxx,
            _ => Proof::Nothing,
        }
    }

    /// Notes a LevelDB function `name` the object defines.
    fn defines(&mut self, name: &[u8]) {
        let leveldb = name.starts_with(b"_ZN7leveldb") || name.starts_with(b"_ZNK7leveldb");
        if !leveldb {
            return;
        }
        let holds = |part: &[u8]| name.windows(part.len()).any(|window| window == part);
        self.0[0] |= holds(CXX11_STRING);
        self.0[1] |= OLD_ABI_FUNCTIONS.contains(&name);
        self.0[2] |= holds(LIBCXX_STRING);
    }

    /// Notes a name the object defines or imports (see [`of_code`]).
    fn note(&mut self, name: &[u8], defined: bool, holds_this_library: bool) {
        match defined {
            true => self.defines(name),
            false => self.imports(name, holds_this_library),
        }
    }

    /// Notes a name the object imports, leaving out this library's own when
    /// `holds_this_library`.
    fn imports(&mut self, name: &[u8], holds_this_library: bool) {
        if holds_this_library && OWN_IMPORTS.contains(&name) {
            return;
        }
        for (seen, prefixes) in self.0.iter_mut().zip(MEMBERS) {
            *seen |= prefixes.iter().any(|prefix| name.starts_with(prefix));
        }
    }
}

/// `std::__cxx11::basic_string<char>` in a mangled name.
const CXX11_STRING: &[u8] = b"NSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE";
/// libc++'s `std::__1::basic_string` in a mangled name.
const LIBCXX_STRING: &[u8] = b"NSt3__112basic_stringIc";
/// LevelDB's exported functions taking a `std::string` (`DB::Open`, `DestroyDB`,
/// `RepairDB`), for each string: libstdc++'s new ABI, its old one, libc++'s.
const FUNCTIONS: [[&[u8]; 3]; 3] = [
    [
        b"_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_",
        b"_ZN7leveldb9DestroyDBERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS_7OptionsE",
        b"_ZN7leveldb8RepairDBERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS_7OptionsE",
    ],
    OLD_ABI_FUNCTIONS,
    [
        b"_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt3__112basic_stringIcNS4_11char_traitsIcEENS4_9allocatorIcEEEEPPS0_",
        b"_ZN7leveldb9DestroyDBERKNSt3__112basic_stringIcNS0_11char_traitsIcEENS0_9allocatorIcEEEERKNS_7OptionsE",
        b"_ZN7leveldb8RepairDBERKNSt3__112basic_stringIcNS0_11char_traitsIcEENS0_9allocatorIcEEEERKNS_7OptionsE",
    ],
];
/// LevelDB's exported functions taking a `std::string` of libstdc++'s old ABI, whose
/// `Ss` no other reading of a name could tell apart.
const OLD_ABI_FUNCTIONS: [&[u8]; 3] = [
    b"_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_",
    b"_ZN7leveldb9DestroyDBERKSsRKNS_7OptionsE",
    b"_ZN7leveldb8RepairDBERKSsRKNS_7OptionsE",
];
/// The mangled-name prefixes of each string's members: non-const, const.
const MEMBERS: [[&[u8]; 2]; 3] = [
    [
        b"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE",
        b"_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE",
    ],
    [b"_ZNSs", b"_ZNKSs"],
    [b"_ZNSt3__112basic_stringIc", b"_ZNKSt3__112basic_stringIc"],
];

// The string members src/dropin/string_append.cc imports, listed by build.rs:
// `OWN_IMPORTS: [&[u8]; _]`.
include!(concat!(env!("OUT_DIR"), "/own_string_imports.rs"));

/// What a LevelDB's own exported functions prove: [`FUNCTIONS`] looked up as the
/// loader looks names up (a few hash lookups, whatever the object's size).
pub(super) fn of_leveldb(object: &Object) -> Proof {
    let mut seen = Seen::default();
    for (shown, names) in seen.0.iter_mut().zip(FUNCTIONS) {
        *shown = names.iter().any(|name| object.lookup(name).is_some());
    }
    seen.proof()
}

/// What code that is no LevelDB (or holds one unexported) proves: the string
/// members it imports and the LevelDB functions it defines. `holds_this_library`:
/// the object holds this library's code.
pub(super) fn of_code(object: &Object, holds_this_library: bool) -> Proof {
    let mut seen = Seen::default();
    for symbol in object.symbols() {
        seen.note(symbol.name, symbol.defined, holds_this_library);
    }
    seen.proof()
}

/// [`of_code`] read from the symbol table of the object's file: for code whose
/// dynamic symbols prove nothing, such as a program linked statically, which has
/// none (a file stripped of its table proves nothing).
pub(super) fn of_file(object: &Object, holds_this_library: bool) -> Proof {
    let mut seen = Seen::default();
    let read = object.each_file_symbol(|name, defined| {
        seen.note(name, defined, holds_this_library);
    });
    match read {
        true => seen.proof(),
        false => Proof::Nothing,
    }
}

#[cfg(test)]
mod tests {
    use super::{Proof, Seen, StringAbi, OWN_IMPORTS};

    const CXX11_APPEND: &[u8] =
        b"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_appendEPKcm";
    const CXX98_APPEND: &[u8] = b"_ZNSs6appendEPKcm";
    const CXX11_OPEN: &[u8] = b"_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_";
    const LIBCXX_OPEN: &[u8] = b"_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt3__112basic_stringIcNS4_11char_traitsIcEENS4_9allocatorIcEEEEPPS0_";

    fn imported(names: &[&[u8]]) -> Proof {
        let mut seen = Seen::default();
        names.iter().for_each(|name| seen.imports(name, true));
        seen.proof()
    }

    fn defined(names: &[&[u8]]) -> Proof {
        let mut seen = Seen::default();
        names.iter().for_each(|name| seen.defines(name));
        seen.proof()
    }

    #[test]
    fn imported_string_members_tell_the_abi() {
        assert_eq!(imported(&[CXX11_APPEND]), Proof::Proven(StringAbi::Cxx11));
        assert_eq!(
            imported(&[b"_ZNKSs4findEcm"]),
            Proof::Proven(StringAbi::Cxx98)
        );
        assert_eq!(imported(&[CXX98_APPEND]), Proof::Proven(StringAbi::Cxx98));
        assert_eq!(imported(&[CXX11_APPEND, CXX98_APPEND]), Proof::Nothing);
        assert_eq!(imported(&[b"malloc"]), Proof::Nothing);
        assert_eq!(
            imported(&[
                b"_ZNSt3__112basic_stringIcNS_11char_traitsIcEENS_9allocatorIcEEE6appendEPKcm"
            ]),
            Proof::LibCxx
        );
    }

    #[test]
    fn a_leveldb_spells_its_string_in_its_functions() {
        assert_eq!(defined(&[CXX11_OPEN]), Proof::Proven(StringAbi::Cxx11));
        assert_eq!(
            defined(&[b"_ZN7leveldb9DestroyDBERKSsRKNS_7OptionsE"]),
            Proof::Proven(StringAbi::Cxx98)
        );
        assert_eq!(defined(&[LIBCXX_OPEN]), Proof::LibCxx);
        // A name holding `PSs` is no old string; another class of the new ABI is no
        // string member.
        assert_eq!(defined(&[b"_ZN7leveldb12LogGPSsampleEv"]), Proof::Nothing);
        assert_eq!(
            imported(&[b"_ZTVNSt7__cxx1115basic_stringbufIcSt11char_traitsIcESaIcEEE"]),
            Proof::Nothing
        );
        // libstdc++'s own definitions are no LevelDB's.
        assert_eq!(defined(&[CXX98_APPEND]), Proof::Nothing);
    }

    #[test]
    fn this_librarys_own_imports_count_only_in_other_code() {
        let mut here = Seen::default();
        here.imports(OWN_IMPORTS[0], true);
        assert_eq!(here.proof(), Proof::Nothing);
        let mut elsewhere = Seen::default();
        elsewhere.imports(OWN_IMPORTS[0], false);
        assert!(matches!(elsewhere.proof(), Proof::Proven(_)));
    }
}
