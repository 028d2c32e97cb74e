//! LevelDBs the swap cannot reach: a loaded object (the program, a library, a Python
//! extension) that holds LevelDB's bloom policy and calls `leveldb::NewBloomFilterPolicy`
//! without the dynamic linker, so no `LD_PRELOAD`ed definition can win. Found by
//! walking the loaded objects (`dl_iterate_phdr`), from what the loader mapped:
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

use std::ffi::{c_int, c_void, CStr};
use std::ops::Range;

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
struct Object {
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

/// What each loaded object but this library shows, in the loader's order.
fn loaded_objects() -> Vec<Object> {
    let mut objects = Vec::new();
    // SAFETY: the callback gets `objects` back as its data, and only while
    // dl_iterate_phdr runs.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut objects as *mut Vec<Object>).cast()) };
    objects
}

mod elf;

/// `dl_iterate_phdr`'s callback: reads the object `info` describes into the vector
/// at `data`, unless it is this library.
unsafe extern "C" fn visit(
    info: *mut libc::dl_phdr_info,
    _size: usize,
    data: *mut c_void,
) -> c_int {
    // SAFETY: dl_iterate_phdr passes a valid info, and `data` is the vector
    // `loaded_objects` passed, used by this thread alone.
    let (info, objects) = unsafe { (&*info, &mut *data.cast::<Vec<Object>>()) };
    let is_program = objects.is_empty() && !info.dlpi_name.is_null() && {
        // SAFETY: a NUL-terminated name (empty for the program).
        unsafe { CStr::from_ptr(info.dlpi_name) }.is_empty()
    };
    let phdrs: &[elf::Phdr] = if info.dlpi_phdr.is_null() {
        &[]
    } else {
        // SAFETY: the loader's program headers of the object, dlpi_phnum of them.
        unsafe { std::slice::from_raw_parts(info.dlpi_phdr, usize::from(info.dlpi_phnum)) }
    };
    let base = info.dlpi_addr as usize;
    let segments = || {
        phdrs
            .iter()
            .filter(|phdr| phdr.p_type == elf::PT_LOAD)
            .map(move |phdr| {
                let start = base.wrapping_add(phdr.p_vaddr as usize);
                (
                    start..start.wrapping_add(phdr.p_memsz as usize),
                    phdr.p_flags,
                )
            })
    };
    let anchor = self_bound as *const () as usize;
    if segments().any(|(range, _)| range.contains(&anchor)) {
        return 0;
    }
    let read_only: Vec<Range<usize>> = segments()
        .filter(|(_, flags)| flags & elf::PF_R != 0 && flags & elf::PF_W == 0)
        .map(|(range, _)| range)
        .collect();
    let holds_policy = LEVELDB_MARKS.iter().all(|mark| {
        read_only
            .iter()
            // SAFETY: a PT_LOAD segment of a loaded object is mapped and readable whole.
            .any(|range| unsafe { holds(range.clone(), mark) })
    });
    let dynamic = phdrs
        .iter()
        .find(|phdr| phdr.p_type == elf::PT_DYNAMIC)
        .map(|phdr| base.wrapping_add(phdr.p_vaddr as usize) as *const elf::Dyn);
    // SAFETY: the object's dynamic section, as the loader mapped and read it.
    let names = dynamic.map(|dynamic| unsafe { DynamicNames::read(dynamic, base) });
    let path = if is_program {
        std::fs::read_link("/proc/self/exe").map_or_else(
            |_| "the program".to_string(),
            |path| path.display().to_string(),
        )
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(info.dlpi_name) }
            .to_string_lossy()
            .into_owned()
    };
    let names = names.unwrap_or_default();
    objects.push(Object {
        path,
        holds_policy,
        opens_databases: names.opens_databases,
        exports_new_policy: names.has_new_policy,
        relocates_new_policy: names.relocates_new_policy,
        symbolic: names.symbolic,
        is_program,
    });
    0
}

/// Whether the `range` of memory holds `needle`.
///
/// # Safety
/// `range` must be readable.
unsafe fn holds(range: Range<usize>, needle: &[u8]) -> bool {
    let length = range.end.saturating_sub(range.start);
    // SAFETY: the caller's promise; memmem reads within both buffers.
    let found = unsafe {
        libc::memmem(
            range.start as *const c_void,
            length,
            needle.as_ptr().cast(),
            needle.len(),
        )
    };
    !found.is_null()
}

/// What an object's dynamic section tells.
#[derive(Default)]
struct DynamicNames {
    /// Its dynamic string table names `leveldb::NewBloomFilterPolicy`.
    has_new_policy: bool,
    /// A relocation (PLT or data) names it.
    relocates_new_policy: bool,
    opens_databases: bool,
    symbolic: bool,
}

impl DynamicNames {
    /// # Safety
    /// `dynamic` must be a loaded object's dynamic section, ending with `DT_NULL`,
    /// and `base` its load address.
    unsafe fn read(dynamic: *const elf::Dyn, base: usize) -> Self {
        let mut tags = std::collections::BTreeMap::new();
        for index in 0.. {
            // SAFETY: the caller's promise: entries up to DT_NULL are readable.
            let entry = unsafe { &*dynamic.add(index) };
            if entry.tag == elf::DT_NULL {
                break;
            }
            tags.entry(entry.tag).or_insert(entry.value);
        }
        let value = |tag: isize| tags.get(&tag).copied().unwrap_or(0);
        // glibc relocates the addresses in a writable dynamic section in place; else
        // (a read-only one) they are offsets from `base`.
        let address = |tag: isize| {
            tags.get(&tag).map(|&value| {
                if value < base {
                    value.wrapping_add(base)
                } else {
                    value
                }
            })
        };
        let mut names = Self {
            symbolic: tags.contains_key(&elf::DT_SYMBOLIC)
                || value(elf::DT_FLAGS) & elf::DF_SYMBOLIC != 0,
            ..Self::default()
        };
        let (Some(strtab), Some(symtab)) = (address(elf::DT_STRTAB), address(elf::DT_SYMTAB))
        else {
            return names;
        };
        // SAFETY: the object's string table, mapped with it, DT_STRSZ bytes.
        let strings =
            unsafe { std::slice::from_raw_parts(strtab as *const u8, value(elf::DT_STRSZ)) };
        for name in strings.split(|&byte| byte == 0) {
            names.has_new_policy |= name == NEW_POLICY;
            names.opens_databases |= OPENS_DATABASES.contains(&name);
        }
        if !names.has_new_policy {
            return names;
        }
        let symbol_name = |index: usize| -> &[u8] {
            let symbol = (symtab + index * elf::SYM_SIZE) as *const elf::Sym;
            // SAFETY: a relocation's symbol index lies in the object's symbol table.
            let offset = unsafe { (*symbol).name } as usize;
            strings
                .get(offset..)
                .and_then(|rest| rest.split(|&byte| byte == 0).next())
                .unwrap_or_default()
        };
        let plt_is_rela = value(elf::DT_PLTREL) == elf::DT_RELA as usize;
        let tables = [
            (elf::DT_RELA, elf::DT_RELASZ, true),
            (elf::DT_REL, elf::DT_RELSZ, false),
            (elf::DT_JMPREL, elf::DT_PLTRELSZ, plt_is_rela),
        ];
        names.relocates_new_policy = tables.into_iter().any(|(table, size, rela)| {
            address(table).is_some_and(|table| {
                // SAFETY: the object's relocation table, mapped with it, `size` bytes.
                unsafe { symbol_indices(table, value(size), rela) }
                    .any(|index| index != 0 && symbol_name(index) == NEW_POLICY)
            })
        });
        names
    }
}

/// The symbol index of each relocation of the table at `table`: `size` bytes of
/// `Rela` entries (`rela`), else of `Rel` entries.
///
/// # Safety
/// The table must be readable for `size` bytes.
unsafe fn symbol_indices(table: usize, size: usize, rela: bool) -> impl Iterator<Item = usize> {
    let entry = if rela { elf::RELA_SIZE } else { elf::REL_SIZE };
    (0..size / entry).map(move |index| {
        let info = (table + index * entry + elf::INFO_OFFSET) as *const usize;
        // SAFETY: the caller's promise; index < size / entry.
        elf::symbol_index(unsafe { info.read_unaligned() })
    })
}
