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

use super::loaded::global_symbol;

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

impl StringAbi {
    /// The ABI of the LevelDB of the object whose dynamic symbol names are `names`
    /// (see [`dynamic_names`](super::loaded::dynamic_names)).
    pub(super) fn for_names(names: &[u8]) -> Self {
        Self::of_names(names)
            .or_else(Self::of_global_scope)
            .unwrap_or(Self::Cxx11)
    }

    /// The ABI LevelDB's names among `names` (NUL-separated) show, if exactly one.
    fn of_names(names: &[u8]) -> Option<Self> {
        let (mut cxx11, mut cxx98) = (false, false);
        let leveldb = names
            .split(|&byte| byte == 0)
            .filter(|name| name.starts_with(b"_ZN7leveldb") || name.starts_with(b"_ZNK7leveldb"));
        for name in leveldb {
            if contains(name, b"NSt7__cxx1112basic_string") {
                cxx11 = true;
            } else if contains(name, b"RKSs") || contains(name, b"PSs") {
                cxx98 = true;
            }
        }
        match (cxx11, cxx98) {
            (true, false) => Some(Self::Cxx11),
            (false, true) => Some(Self::Cxx98),
            _ => None,
        }
    }

    /// The ABI of the `leveldb::DB::Open` in the global scope, if exactly one is.
    fn of_global_scope() -> Option<Self> {
        let [cxx11, cxx98] = DB_OPEN.map(|name| !global_symbol(name).is_null());
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
    use super::StringAbi;

    #[test]
    fn names_tell_the_abi() {
        let cxx11 = b"malloc\0_ZN7leveldb9DestroyDBERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEERKNS_7OptionsE\0";
        let cxx98 = b"_ZNK7leveldb6Status8ToStringEv\0_ZN7leveldb9DestroyDBERKSsRKNS_7OptionsE\0";
        assert_eq!(StringAbi::of_names(cxx11), Some(StringAbi::Cxx11));
        assert_eq!(StringAbi::of_names(cxx98), Some(StringAbi::Cxx98));
        // libstdc++'s own names, of both ABIs, are not LevelDB's.
        assert_eq!(StringAbi::of_names(b"_ZNSs6appendEPKcm\0_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE6appendEPKcm\0"), None);
        assert_eq!(
            StringAbi::of_names(&[cxx11.as_slice(), cxx98].concat()),
            None
        );
        assert_eq!(StringAbi::of_names(b""), None);
    }
}
