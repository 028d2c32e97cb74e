//! Which `std::string` ABI a LevelDB was built with, read from its own code.
//!
//! `CreateFilter` appends to LevelDB's `std::string`, whose layout differs between
//! libstdc++'s two ABIs (`_GLIBCXX_USE_CXX11_ABI`). An object is compiled for one,
//! and its dynamic symbols say which, by exact mangled names:
//!
//! 1. the members of `std::__cxx11::basic_string<char>` (new ABI) or of the
//!    reference-counted `std::string` (`Ss`, old ABI) it imports from libstdc++
//!    (whole class prefixes of the mangled names, never substrings of others);
//! 2. LevelDB's own `leveldb::DB::Open` it defines, whose mangled name spells the
//!    string type.
//!
//! The string members this library's own append helpers import are left out
//! (`OWN_IMPORTS`): linked statically into an object, they would show both ABIs.
//! An object showing exactly one ABI is proven; one showing none (no dynamic
//! section, libstdc++ linked in statically) or both is not, and no later evidence
//! (a symbol table, the program's imports) would say what *its* code was compiled
//! for, so none is taken. Each object's evidence is read once and remembered
//! ([`Notes`]) until an object leaves the process.

use std::ffi::CStr;
use std::ops::ControlFlow;

use super::objects::{each_object, with_object_at, Notes, Object};
use super::symbols::dynamic_symbols;

/// libstdc++'s two `std::string` ABIs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum StringAbi {
    /// `std::__cxx11::basic_string`, `_GLIBCXX_USE_CXX11_ABI=1`.
    Cxx11,
    /// The reference-counted string, `_GLIBCXX_USE_CXX11_ABI=0`.
    Cxx98,
}

/// `leveldb::DB::Open(const Options&, const std::string&, DB**)` in each ABI.
pub(super) const DB_OPEN: [&CStr; 2] = [
    c"_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_",
    c"_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_",
];

/// The mangled-name prefixes of each ABI's `std::string` members: non-const, const.
const MEMBERS: [[&[u8]; 2]; 2] = [
    [
        b"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE",
        b"_ZNKSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE",
    ],
    [b"_ZNSs", b"_ZNKSs"],
];

// The string members src/dropin/string_append.cc imports, listed by build.rs:
// `OWN_IMPORTS: [&[u8]; _]`.
include!(concat!(env!("OUT_DIR"), "/own_string_imports.rs"));

/// What one object's dynamic symbols show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Evidence {
    /// Shows each ABI: `[Cxx11, Cxx98]`.
    shows: [bool; 2],
    /// Defines LevelDB's C or C++ API's function that opens a database: it holds
    /// LevelDB.
    pub(super) holds_leveldb: bool,
    /// Has no dynamic symbol at all: a fully static program, which may hold LevelDB
    /// (linked in with this library's `.a`) and shows nothing of it.
    pub(super) shows_nothing: bool,
}

impl Evidence {
    /// Reads the dynamic symbols of an object: (name, whether it defines it).
    pub(super) fn read<'a>(symbols: impl Iterator<Item = (&'a [u8], bool)>) -> Self {
        let mut evidence = Self {
            shows_nothing: true,
            ..Self::default()
        };
        for (name, defined) in symbols {
            evidence.shows_nothing = false;
            let opens = DB_OPEN.iter().position(|open| name == open.to_bytes());
            if defined {
                evidence.holds_leveldb |= opens.is_some() || name == b"leveldb_open";
                if let Some(abi) = opens {
                    evidence.shows[abi] = true;
                }
            } else if !OWN_IMPORTS.contains(&name) {
                for (abi, prefixes) in MEMBERS.iter().enumerate() {
                    evidence.shows[abi] |= prefixes.iter().any(|prefix| name.starts_with(prefix));
                }
            }
        }
        evidence
    }

    /// The ABI the object was compiled for, when it shows exactly one.
    pub(super) fn abi(self) -> Option<StringAbi> {
        match self.shows {
            [true, false] => Some(StringAbi::Cxx11),
            [false, true] => Some(StringAbi::Cxx98),
            _ => None,
        }
    }

    /// Whether it may hold a LevelDB whose ABI it does not prove: one it holds
    /// without a single ABI, or one it could hold unseen.
    pub(super) fn may_hold_unproven_leveldb(self) -> bool {
        self.shows_nothing || self.holds_leveldb && self.abi().is_none()
    }

    fn to_byte(self) -> u8 {
        u8::from(self.shows[0])
            | u8::from(self.shows[1]) << 1
            | u8::from(self.holds_leveldb) << 2
            | u8::from(self.shows_nothing) << 3
    }

    fn from_byte(byte: u8) -> Self {
        Self {
            shows: [byte & 1 != 0, byte & 2 != 0],
            holds_leveldb: byte & 4 != 0,
            shows_nothing: byte & 8 != 0,
        }
    }
}

/// The evidence of `object`, remembered in `notes`.
fn evidence_of(object: &Object, notes: &mut Notes) -> Evidence {
    let id = object.id();
    let key = (id.headers, id.removals);
    if let Some(byte) = notes.objects.get(key) {
        return Evidence::from_byte(byte);
    }
    let symbols = dynamic_symbols(object).map(|symbol| (symbol.name, symbol.defined));
    let evidence = Evidence::read(symbols);
    notes.objects.put(key, evidence.to_byte());
    evidence
}

/// The ABI of the object whose code is at `address` (a return address), if proven.
pub(super) fn abi_at(address: usize) -> Option<StringAbi> {
    with_object_at(address, |object, notes| evidence_of(object, notes).abi()).flatten()
}

/// What the loaded objects show when a policy is made.
#[derive(Clone, Copy, Default)]
pub(super) struct Survey {
    /// An object holds LevelDB.
    pub(super) leveldb: bool,
    /// An object holding LevelDB, or one that could hold it unseen (a fully static
    /// program), does not prove its ABI.
    pub(super) unproven: bool,
}

impl Survey {
    /// Surveys the loaded objects; remembered until an object joins or leaves.
    pub(super) fn now() -> Self {
        let (mut survey, mut generation) = (Self::default(), None);
        each_object(|object, notes| {
            if generation.is_none() {
                let (added, removed) = object.generation();
                let key = ((added as usize).wrapping_add(1), removed);
                generation = Some(key);
                if let Some(byte) = notes.survey.get(key) {
                    survey = Self {
                        leveldb: byte & 1 != 0,
                        unproven: byte & 2 != 0,
                    };
                    return ControlFlow::Break(());
                }
            }
            if is_this_library(object) {
                return ControlFlow::Continue(());
            }
            let evidence = evidence_of(object, notes);
            survey.leveldb |= evidence.holds_leveldb;
            survey.unproven |= evidence.may_hold_unproven_leveldb();
            // The walk holds the notes' lock: the last object's note, the whole
            // survey, is the one others read.
            if let Some(key) = generation {
                let byte = u8::from(survey.leveldb) | u8::from(survey.unproven) << 1;
                notes.survey.put(key, byte);
            }
            ControlFlow::Continue(())
        });
        survey
    }
}

/// Whether `object` is this shared library, whose own definitions of LevelDB's open
/// functions (`default_bits`: both ABIs' `leveldb::DB::Open`) are no LevelDB. Linked
/// statically, this library is part of the program, whose evidence counts.
fn is_this_library(object: &Object) -> bool {
    !object.name().is_empty() && object.holds(is_this_library as *const () as usize)
}

/// The first loaded object that may hold a LevelDB it does not prove the ABI of
/// (see [`Evidence::may_hold_unproven_leveldb`]): its program headers' address and
/// name.
pub(super) fn unproven_leveldb() -> Option<(usize, String)> {
    let mut found = None;
    each_object(|object, notes| {
        let evidence = evidence_of(object, notes);
        if is_this_library(object) || !evidence.may_hold_unproven_leveldb() {
            return ControlFlow::Continue(());
        }
        found = Some((
            object.id().headers,
            object.name().to_string_lossy().into_owned(),
        ));
        ControlFlow::Break(())
    });
    found
}

#[cfg(test)]
mod tests {
    use super::{Evidence, StringAbi, DB_OPEN};

    fn read(symbols: &[(&[u8], bool)]) -> Evidence {
        Evidence::read(symbols.iter().copied())
    }

    const CXX11_APPEND: &[u8] =
        b"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_appendEPKcm";
    const CXX98_APPEND: &[u8] = b"_ZNSs6appendEPKcm";

    #[test]
    fn imported_string_members_tell_the_abi() {
        assert_eq!(read(&[(CXX11_APPEND, false)]).abi(), Some(StringAbi::Cxx11));
        assert_eq!(
            read(&[(b"_ZNKSs4findEcm", false)]).abi(),
            Some(StringAbi::Cxx98)
        );
        assert_eq!(read(&[(CXX98_APPEND, false)]).abi(), Some(StringAbi::Cxx98));
        // Both, or none: unproven.
        assert_eq!(
            read(&[(CXX11_APPEND, false), (CXX98_APPEND, false)]).abi(),
            None
        );
        assert_eq!(read(&[(b"malloc", false)]).abi(), None);
        // Defined members are libstdc++'s own, not evidence of a user.
        assert_eq!(read(&[(CXX98_APPEND, true)]).abi(), None);
    }

    #[test]
    fn only_whole_names_count() {
        // A LevelDB function whose name holds `PSs` (leveldb::LogGPSsample) is no
        // old string; nor is another class of the new ABI.
        let names: [(&[u8], bool); 3] = [
            (b"_ZN7leveldb12LogGPSsampleEv", true),
            (
                b"_ZTVNSt7__cxx1115basic_stringbufIcSt11char_traitsIcESaIcEEE",
                false,
            ),
            (b"_ZNSbIwSt11char_traitsIwESaIwEE6appendEPKwm", false),
        ];
        assert_eq!(read(&names).abi(), None);
    }

    #[test]
    fn leveldb_shows_in_its_definitions() {
        let cxx98 = read(&[(DB_OPEN[1].to_bytes(), true)]);
        assert_eq!(
            (cxx98.abi(), cxx98.holds_leveldb),
            (Some(StringAbi::Cxx98), true)
        );
        let c_api = read(&[(b"leveldb_open", true), (CXX11_APPEND, false)]);
        assert_eq!(
            (c_api.abi(), c_api.holds_leveldb),
            (Some(StringAbi::Cxx11), true)
        );
        // Code using LevelDB imports these names: it is not LevelDB.
        assert!(!read(&[(b"leveldb_open", false), (DB_OPEN[0].to_bytes(), false)]).holds_leveldb);
    }

    #[test]
    fn an_object_without_dynamic_symbols_may_hide_leveldb() {
        let static_program = read(&[]);
        assert!(static_program.shows_nothing && static_program.may_hold_unproven_leveldb());
        assert!(!read(&[(b"malloc", false)]).may_hold_unproven_leveldb());
        assert!(
            !read(&[(b"leveldb_open", true), (CXX11_APPEND, false)]).may_hold_unproven_leveldb()
        );
        assert!(read(&[(b"leveldb_open", true)]).may_hold_unproven_leveldb());
    }

    #[test]
    fn evidence_is_remembered_as_a_byte() {
        for byte in 0..16 {
            assert_eq!(Evidence::from_byte(byte).to_byte(), byte);
        }
    }
}
