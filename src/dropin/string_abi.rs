//! Which `std::string` ABI the LevelDB calling this library was built with.
//!
//! `CreateFilter` appends to LevelDB's `std::string`, whose layout differs between
//! libstdc++'s two ABIs (`_GLIBCXX_USE_CXX11_ABI`). Which one LevelDB has shows in
//! the mangled names of its functions that take a string: `std::string` is
//! `NSt7__cxx1112basic_string…` in the new ABI and `Ss` in the old one. So the names
//! of the object that called `leveldb::NewBloomFilterPolicy` (LevelDB itself, or a
//! program or binding built against it, which must share its ABI) decide; then the
//! LevelDB of the global scope; and when nothing tells, the new ABI, GCC's default
//! since 5.1 and the only one Debian ships.

use std::ffi::CStr;

use super::loaded::leveldb_symbol;

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

/// What the dynamic symbol names of the object that made a policy tell (see
/// [`dynamic_names`](super::loaded::dynamic_names)), read in one pass.
pub(super) struct CallerNames {
    /// Whether it calls a function that opens a LevelDB database, of the C or the
    /// C++ API: it is LevelDB, or code using it.
    pub(super) opens_databases: bool,
    /// The ABI its LevelDB names show, if exactly one.
    shown_abi: Option<StringAbi>,
}

impl CallerNames {
    /// Reads `names`, NUL-separated.
    pub(super) fn read(names: &[u8]) -> Self {
        let (mut opens_databases, mut cxx11, mut cxx98) = (false, false, false);
        for name in names.split(|&byte| byte == 0) {
            opens_databases |=
                name == b"leveldb_open" || DB_OPEN.iter().any(|open| name == open.to_bytes());
            if !name.starts_with(b"_ZN7leveldb") && !name.starts_with(b"_ZNK7leveldb") {
                continue;
            }
            if contains(name, b"NSt7__cxx1112basic_string") {
                cxx11 = true;
            } else if contains(name, b"RKSs") || contains(name, b"PSs") {
                cxx98 = true;
            }
        }
        let shown_abi = match (cxx11, cxx98) {
            (true, false) => Some(StringAbi::Cxx11),
            (false, true) => Some(StringAbi::Cxx98),
            _ => None,
        };
        Self {
            opens_databases,
            shown_abi,
        }
    }

    /// The ABI of the caller's LevelDB: the one its names show, else that of the
    /// global scope's LevelDB, else the new one.
    pub(super) fn string_abi(&self) -> StringAbi {
        self.shown_abi
            .or_else(StringAbi::of_global_scope)
            .unwrap_or(StringAbi::Cxx11)
    }
}

impl StringAbi {
    /// The ABI of the `leveldb::DB::Open` in the global scope, if exactly one is.
    fn of_global_scope() -> Option<Self> {
        let [cxx11, cxx98] = DB_OPEN.map(|name| !leveldb_symbol(name).is_null());
        match (cxx11, cxx98) {
            (true, false) => Some(Self::Cxx11),
            (false, true) => Some(Self::Cxx98),
            _ => None,
        }
    }
}

fn contains(name: &[u8], part: &[u8]) -> bool {
    name.windows(part.len()).any(|window| window == part)
}

#[cfg(test)]
mod tests {
    use super::{CallerNames, StringAbi};

    #[test]
    fn names_tell_the_abi() {
        let shown = |names: &[u8]| CallerNames::read(names).shown_abi;
        let cxx11 = b"malloc\0_ZN7leveldb9DestroyDBERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS_7OptionsE\0";
        let cxx98 = b"_ZNK7leveldb6Status8ToStringEv\0_ZN7leveldb9DestroyDBERKSsRKNS_7OptionsE\0";
        assert_eq!(shown(cxx11), Some(StringAbi::Cxx11));
        assert_eq!(shown(cxx98), Some(StringAbi::Cxx98));
        // libstdc++'s own names, of both ABIs, are not LevelDB's.
        assert_eq!(shown(b"_ZNSs6appendEPKcm\0_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKcm\0"), None);
        assert_eq!(shown(&[cxx11.as_slice(), cxx98].concat()), None);
        assert_eq!(shown(b""), None);
    }

    #[test]
    fn names_tell_who_opens_databases() {
        let opens = |names: &[u8]| CallerNames::read(names).opens_databases;
        assert!(opens(b"malloc\0leveldb_open\0"));
        assert!(opens(b"_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_\0"));
        assert!(!opens(b"leveldb_open_extra\0leveldb_close\0"));
        assert!(!opens(b""));
    }
}
