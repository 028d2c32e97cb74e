//! What `reach` says of one ELF file: the verdict, its reason and route, and
//! whether `LEVELDB_BLOOM_DEFAULT_BITS` reaches the databases it opens. The
//! routes name the runtime package's file, `libleveldb_bloom.so.0` (the bare
//! `.so` comes only with the -dev package).

use serde::Serialize;

/// The preload every route names: what `make install` and the runtime package
/// install, and the loader finds by name.
pub const PRELOAD: &str = "LD_PRELOAD=libleveldb_bloom.so.0";

/// The recipe for databases opened with no filter policy, kept in one place.
const DEFAULT_BITS_RECIPE: &str = "leveldb-bloom refilter DB once (the program stopped), then \
     leveldb-bloom run --default-bits 10 -- PROGRAM on every run";

/// What `reach` finds in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// It imports LevelDB's bloom functions: the dynamic linker binds them.
    CallsThroughLinker,
    /// It imports them and needs libleveldb_bloom ahead of any LevelDB: bound to
    /// this library already.
    LinkedAhead,
    /// It imports them and needs libleveldb_bloom, but after LevelDB, whose
    /// definitions the dynamic linker finds first.
    LinkedBehind,
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
    /// It opens LevelDB databases (imports `leveldb_open` or `leveldb::DB::Open`)
    /// and calls no bloom function: it sets no bloom policy, so none is swapped.
    OpensWithoutPolicy,
    /// A Python interpreter: its LevelDB, if any, is in an extension module.
    PythonInterpreter,
    /// Node.js: its LevelDB, if any, is in an addon.
    NodeInterpreter,
    /// No LevelDB bloom function in it, called or held.
    NoLevelDb,
}

impl Verdict {
    /// Whether `LD_PRELOAD` reaches every LevelDB bloom call in the file; `None` for
    /// an interpreter, whose LevelDB lives in a module this file does not show.
    pub fn reached(self) -> Option<bool> {
        match self {
            Self::Symbolic | Self::SymbolicFunctions | Self::StaticLink | Self::Hidden => {
                Some(false)
            }
            Self::PythonInterpreter | Self::NodeInterpreter => None,
            _ => Some(true),
        }
    }

    /// Whether the file holds or calls LevelDB (its `std::string` ABI matters).
    pub fn concerns_leveldb(self) -> bool {
        !matches!(
            self,
            Self::IsTheSwap | Self::NoLevelDb | Self::PythonInterpreter | Self::NodeInterpreter
        )
    }

    /// What it means, in a sentence.
    pub fn reason(self) -> &'static str {
        match self {
            Self::CallsThroughLinker => {
                "calls LevelDB's bloom functions through the dynamic linker: LD_PRELOAD \
                 reaches them"
            }
            Self::LinkedAhead => {
                "linked with libleveldb_bloom ahead of LevelDB: the dynamic linker binds its \
                 bloom calls to this library already"
            }
            Self::LinkedBehind => {
                "linked with libleveldb_bloom, but after LevelDB: the dynamic linker binds its \
                 bloom calls to LevelDB's own; LD_PRELOAD reaches them"
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
            Self::OpensWithoutPolicy => {
                "opens LevelDB databases (it imports leveldb_open or leveldb::DB::Open) and \
                 calls no bloom function: it sets no filter policy, so there is none to swap"
            }
            Self::PythonInterpreter => {
                "a Python interpreter: the LevelDB a script uses is in the extension module \
                 it imports, not in this file"
            }
            Self::NodeInterpreter => {
                "Node.js: the LevelDB a script uses is in the addon (*.node) it loads, not in \
                 this file"
            }
            Self::NoLevelDb => "no LevelDB bloom function in it, called or held",
        }
    }

    /// The route that swaps the file's LevelDB.
    pub fn route(self) -> String {
        match self {
            Self::CallsThroughLinker | Self::ExportsAndRelocates => {
                format!("{PRELOAD}, or link -lleveldb_bloom ahead of -lleveldb")
            }
            Self::LinkedBehind => {
                format!("{PRELOAD}, or relink with -lleveldb_bloom ahead of -lleveldb")
            }
            Self::IsTheSwap | Self::LinkedAhead | Self::NoLevelDb => "nothing to do".into(),
            Self::Symbolic | Self::SymbolicFunctions => {
                "rebuild it without that flag (a Python extension: LDSHARED without \
                 -Wl,-Bsymbolic-functions), or link libleveldb_bloom.a into it ahead of \
                 LevelDB, or build its LevelDB with contrib/leveldb/util/bloom.cc"
                    .into()
            }
            Self::StaticLink => "relink it with libleveldb_bloom.a ahead of LevelDB's \
                 libleveldb.a (a program on LevelDB's C API also needs \
                 -Wl,--allow-multiple-definition: LevelDB's c.o defines the C bloom functions \
                 too, and the first definition, this library's, is kept), or build its \
                 LevelDB with contrib/leveldb/util/bloom.cc"
                .into(),
            Self::Hidden => "link libleveldb_bloom.a into it ahead of LevelDB (with \
                 -Wl,--allow-multiple-definition when its LevelDB has the C API), or build \
                 its LevelDB with contrib/leveldb/util/bloom.cc"
                .into(),
            Self::OpensWithoutPolicy => {
                format!("give its databases a bloom policy: {DEFAULT_BITS_RECIPE}")
            }
            Self::PythonInterpreter => "run leveldb-bloom reach on the extension module: \
                 python3 -c 'import plyvel._plyvel as m; print(m.__file__)' prints plyvel's \
                 (another binding: import it and print its module's __file__); while the \
                 program runs, grep -i leveldb /proc/PID/maps names every loaded one"
                .into(),
            Self::NodeInterpreter => "run leveldb-bloom reach on the addon: find \
                 \"$(dirname \"$(node -p \"require.resolve('classic-level')\")\")\" -name \
                 '*.node' lists classic-level's (another package: its name); while the program \
                 runs, grep -i leveldb /proc/PID/maps names every loaded one"
                .into(),
        }
    }
}

/// Whether `LEVELDB_BLOOM_DEFAULT_BITS` (with the swap preloaded) reaches the
/// databases a file opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DefaultBits {
    /// Its opens go through the dynamic linker (imported, or exported and called
    /// through a relocation without `-Bsymbolic`): the variable reaches them.
    Reaches,
    /// Its LevelDB binds its opens inside itself: the variable cannot reach them.
    BoundInside,
    /// Its opens are reached, but its LevelDB has no C API, from which the library
    /// learns where `Options` keeps the policy (Node's classic-level): none is given.
    NoCApi,
}

impl DefaultBits {
    /// What it means for the file's databases, in a sentence.
    pub fn text(self) -> String {
        match self {
            Self::Reaches => format!(
                "LEVELDB_BLOOM_DEFAULT_BITS reaches the databases it opens: one opened with \
                 no filter policy (LevelDB's default options; plyvel's bloom_filter_bits=0) \
                 has no policy to swap, and gets this library's: {DEFAULT_BITS_RECIPE}"
            ),
            Self::BoundInside => "LEVELDB_BLOOM_DEFAULT_BITS cannot reach the databases it \
                 opens (its LevelDB binds its opens inside itself): one opened with no filter \
                 policy keeps none; set a policy in the program"
                .into(),
            Self::NoCApi => "LEVELDB_BLOOM_DEFAULT_BITS reaches its opens but gives no \
                 policy: its LevelDB has no C API (leveldb_options_set_filter_policy), from \
                 which the library learns where Options keeps it; set a policy in the program"
                .into(),
        }
    }
}

/// The interpreter a file is, by the symbols it has (`has`): CPython's
/// `Py_BytesMain` (or `Py_Main`), Node's `napi_module_register`.
pub fn interpreter_of(has: impl Fn(&str) -> bool) -> Option<Verdict> {
    if has("Py_BytesMain") || has("Py_Main") {
        Some(Verdict::PythonInterpreter)
    } else if has("napi_module_register") {
        Some(Verdict::NodeInterpreter)
    } else {
        None
    }
}

/// A file that calls LevelDB's bloom functions, by where `needed` (its `DT_NEEDED`,
/// in load order) puts libleveldb_bloom: ahead of every LevelDB, after one, or not
/// at all.
pub fn linked_order(needed: &[String]) -> Verdict {
    let position = |bloom: bool| {
        needed.iter().position(|name| {
            name.starts_with("libleveldb") && name.starts_with("libleveldb_bloom") == bloom
        })
    };
    match (position(true), position(false)) {
        (Some(bloom), Some(leveldb)) if bloom < leveldb => Verdict::LinkedAhead,
        (Some(_), None) => Verdict::LinkedAhead,
        (Some(_), Some(_)) => Verdict::LinkedBehind,
        (None, _) => Verdict::CallsThroughLinker,
    }
}
