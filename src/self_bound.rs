//! LevelDBs the swap cannot reach: a loaded object (the program, a library, a Python
//! extension) that holds LevelDB's bloom policy and calls `leveldb::NewBloomFilterPolicy`
//! without the dynamic linker, so no `LD_PRELOAD`ed definition can win. Found by
//! walking the loaded objects ([`each_object`]), from what the loader mapped (read
//! through [`Object`], so never outside it):
//!
//! - the object holds LevelDB with its bloom policy: its read-only segments hold the
//!   policy's name and LevelDB's internal comparator's (this library itself aside);
//! - it exports `leveldb::NewBloomFilterPolicy(int)` and was linked `-Bsymbolic`
//!   (`DF_SYMBOLIC`): every reference binds to itself first;
//! - it exports it but has no relocation naming it (`-Bsymbolic-functions`, or a
//!   link that resolved its calls): its calls are direct;
//! - it does not export it: LevelDB linked statically into a program, or hidden
//!   (`-fvisibility=hidden`, a version script) in a library.
//!
//! An object that exports the function and reaches it through a relocation, without
//! `DF_SYMBOLIC`, is reached: the dynamic linker binds it, the global scope first.
//! `stats_report` tells each unreachable one at exit; `leveldb_bloom_swap_status`
//! counts [`leveldb_loaded`] as LevelDB in the process.

use std::ops::ControlFlow;

use loader::{each_object, Object};

/// What LevelDB's bloom policy, built in, leaves in an object's read-only data: its
/// `Name()`, and the name of LevelDB's internal-key comparator (db/dbformat.cc), which
/// a program merely naming the policy lacks.
const LEVELDB_MARKS: [&[u8]; 2] = [
    b"leveldb.BuiltinBloomFilter2",
    b"leveldb.InternalKeyComparator",
];
/// `leveldb::NewBloomFilterPolicy(int)`.
const NEW_POLICY: &[u8] = b"_ZN7leveldb20NewBloomFilterPolicyEi";
/// Names only LevelDB, or code opening LevelDB databases, defines or imports.
const OPENS_DATABASES: [&[u8]; 3] = [
    b"leveldb_open",
    b"_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_",
    b"_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_",
];

/// Why an object's LevelDB binds its bloom policy inside itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Binding {
    /// Linked `-Bsymbolic`: `DF_SYMBOLIC` in `DT_FLAGS`, or `DT_SYMBOLIC`.
    Symbolic,
    /// Exported, but no relocation names it: `-Bsymbolic-functions`.
    NoRelocation,
    /// Not exported by the program: LevelDB linked statically.
    StaticLink,
    /// Not exported by a library: hidden visibility.
    Hidden,
}

impl Binding {
    /// Why, in the words of the line at exit.
    fn why(self) -> &'static str {
        match self {
            Self::Symbolic => {
                "linked with -Bsymbolic (DT_FLAGS has DF_SYMBOLIC): it binds \
                 leveldb::NewBloomFilterPolicy to itself"
            }
            Self::NoRelocation => {
                "linked with -Bsymbolic-functions (no PLT relocation for \
                 leveldb::NewBloomFilterPolicy): it calls its own directly"
            }
            Self::StaticLink => {
                "LevelDB is linked statically into the program (no dynamic symbol \
                 leveldb::NewBloomFilterPolicy)"
            }
            Self::Hidden => {
                "its LevelDB has hidden visibility (no dynamic symbol \
                 leveldb::NewBloomFilterPolicy)"
            }
        }
    }

    /// The route that swaps it.
    fn route(self) -> &'static str {
        match self {
            Self::Symbolic | Self::NoRelocation => {
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

/// A loaded object whose LevelDB the swap cannot reach.
pub(crate) struct SelfBound {
    pub(crate) path: String,
    pub(crate) binding: Binding,
}

impl SelfBound {
    /// The line said at exit.
    pub(crate) fn line(&self) -> String {
        format!(
            "leveldb-bloom: {}: LD_PRELOAD cannot swap its LevelDB bloom policy: {}; \
             its filters are LevelDB's own. Route: {}\n",
            self.path,
            self.binding.why(),
            self.binding.route()
        )
    }
}

/// What one loaded object shows.
struct Shown {
    path: String,
    holds_policy: bool,
    opens_databases: bool,
    exports_new_policy: bool,
    relocates_new_policy: bool,
    symbolic: bool,
    is_program: bool,
}

/// Every loaded object whose LevelDB binds its bloom policy inside itself.
pub(crate) fn self_bound() -> Vec<SelfBound> {
    loaded_objects()
        .into_iter()
        .filter(|object| object.holds_policy)
        .filter_map(|object| {
            let binding = if !object.exports_new_policy {
                if object.is_program {
                    Binding::StaticLink
                } else {
                    Binding::Hidden
                }
            } else if object.symbolic {
                Binding::Symbolic
            } else if !object.relocates_new_policy {
                Binding::NoRelocation
            } else {
                return None;
            };
            Some(SelfBound {
                path: object.path,
                binding,
            })
        })
        .collect()
}

/// Whether a LevelDB is in the process, however it was loaded: an object other than
/// this library holds its bloom policy, or defines or calls a function opening
/// databases.
pub(crate) fn leveldb_loaded() -> bool {
    loaded_objects()
        .iter()
        .any(|object| object.holds_policy || object.opens_databases)
}

/// What each loaded object but this library and its copies (under any name: they
/// hold the marks as constants) shows, in the loader's order.
fn loaded_objects() -> Vec<Shown> {
    let mut objects = Vec::new();
    each_object(|object| {
        if !crate::is_this_library(object) {
            objects.push(shown(object));
        }
        ControlFlow::Continue(())
    });
    objects
}

/// What `object` shows.
fn shown(object: &Object) -> Shown {
    let is_program = object.name().is_empty();
    let holds_policy = LEVELDB_MARKS.iter().all(|mark| {
        object
            .read_only_segments()
            .any(|segment| memchr::memmem::find(segment, mark).is_some())
    });
    let (mut exports_new_policy, mut opens_databases) = (false, false);
    for symbol in object.symbols() {
        exports_new_policy |= symbol.name == NEW_POLICY;
        opens_databases |= OPENS_DATABASES.contains(&symbol.name);
    }
    let relocates_new_policy = exports_new_policy && object.references(NEW_POLICY);
    let path = if is_program {
        std::fs::read_link("/proc/self/exe").map_or_else(
            |_| "the program".to_string(),
            |path| path.display().to_string(),
        )
    } else {
        object.name().to_string_lossy().into_owned()
    };
    Shown {
        path,
        holds_policy,
        opens_databases,
        exports_new_policy,
        relocates_new_policy,
        symbolic: object.is_symbolic(),
        is_program,
    }
}
