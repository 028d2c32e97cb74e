//! What a policy creator returns, decided once, when the policy is made, as the
//! dynamic linker would have answered its caller without this library.
//!
//! Stock's answer to a caller of `leveldb::NewBloomFilterPolicy` (or of LevelDB's
//! `leveldb_filterpolicy_create_bloom`) is the policy of the definition the
//! caller's reference binds to ([`loader::bind`]: ld.so's rule, this library and its
//! copies left out). That LevelDB spells its `std::string` in its own names
//! ([`string_abi`](super::string_abi)):
//!
//! - one of libstdc++'s two: this library's object, appending to that string;
//! - none it can write (libc++'s, or nothing shown): that LevelDB's own policy,
//!   made by its own definition: stock, exactly (said once on stderr);
//! - no LevelDB in the caller's scope (this library linked in LevelDB's place): the
//!   caller's own code decides, by the string members it imports and the LevelDB
//!   functions it defines, in its dynamic symbols, else in its file's symbol table
//!   (a program linked statically keeps its names there); where it shows none, a
//!   C++ caller gets NULL (said once).
//!
//! This library's own creators (`leveldb_bloom_policy_create`) always return its
//! object, for its C functions; the LevelDB their caller's `leveldb_open` binds to
//! decides their string, and where nothing proves one the object has none, and ends
//! the process (said) if a LevelDB ever calls its `CreateFilter`.

use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::string_abi::{self, Proof, StringAbi};
use loader::say;
use loader::Object;

/// Which creator the caller called.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Creator {
    /// `leveldb::NewBloomFilterPolicy(int)`.
    CxxApi,
    /// `leveldb_filterpolicy_create_bloom`, LevelDB's C API.
    CApi,
    /// `leveldb_bloom_policy_create` and the other names of this library's own.
    Own,
}

impl Creator {
    /// The LevelDB function whose binding tells which LevelDB the policy is for.
    fn bound_name(self) -> &'static CStr {
        match self {
            Self::CxxApi => c"_ZN7leveldb20NewBloomFilterPolicyEi",
            Self::CApi => c"leveldb_filterpolicy_create_bloom",
            Self::Own => c"leveldb_open",
        }
    }
}

/// What to return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Decision {
    /// This library's object, appending to this string (none: its `CreateFilter`
    /// refuses to run).
    Ours(Option<StringAbi>),
    /// The policy the LevelDB function at this address makes (`int` → policy).
    Stock(usize),
    /// NULL: no filter policy.
    Refused,
}

/// The decision for a call of `creator` made from `caller` (the address it returns
/// to; 0 when unknown: the caller's own scope is then not searched). Refused when
/// memory runs out.
///
/// The last decision is remembered with what it depends on (the creator, the
/// caller's object, the loader's counts of objects added and removed), so that a
/// program making many policies from one place pays for the walk once, whatever
/// the number of loaded objects; a lock another thread holds, or a forked child,
/// just decides again.
pub(super) fn decide(creator: Creator, caller: usize) -> Decision {
    static LAST: Mutex<Option<(Key, Decision)>> = Mutex::new(None);
    let key = loader::generation().and_then(|generation| {
        let object = loader::with_object_at(caller, |object| object.id())?;
        Some((creator, object, generation))
    });
    let remembered = |last: &Option<(Key, Decision)>| {
        last.as_ref()
            .filter(|(known, _)| Some(*known) == key)
            .map(|&(_, decision)| decision)
    };
    if let Some(decision) = LAST.try_lock().ok().and_then(|last| remembered(&last)) {
        return decision;
    }
    let decision = decide_anew(creator, caller);
    if let (Some(key), Ok(mut last)) = (key, LAST.try_lock()) {
        *last = Some((key, decision));
    }
    decision
}

/// What a remembered decision depends on.
type Key = (Creator, usize, (u64, u64));

/// [`decide`], walking the loaded objects.
fn decide_anew(creator: Creator, caller: usize) -> Decision {
    let name = creator.bound_name().to_bytes();
    let bound = loader::bind(
        caller,
        decide as *const () as usize,
        name,
        crate::is_this_library,
        string_abi::of_leveldb,
        |_| (),
    );
    let Ok((_, leveldb)) = bound else {
        return Decision::Refused;
    };
    if let Some(leveldb) = leveldb {
        let why = match leveldb.inspected {
            Proof::Proven(abi) => return Decision::Ours(Some(abi)),
            Proof::LibCxx => "libc++'s std::string, which this library cannot write",
            Proof::Nothing => "no single std::string in its exported names",
        };
        let place = object_name(leveldb.address);
        return match creator {
            Creator::Own => {
                say_once(&format!(
                    "leveldb-bloom: the LevelDB in {place} shows {why}: a policy from \
                     leveldb_bloom_policy_create must not be given to it\n"
                ));
                Decision::Ours(None)
            }
            Creator::CxxApi | Creator::CApi => {
                say_once(&format!(
                    "leveldb-bloom: the LevelDB in {place} shows {why}: it keeps its own \
                     bloom policy\n"
                ));
                Decision::Stock(leveldb.address)
            }
        };
    }
    // No LevelDB: the caller's own code (still loaded: it is running) decides, by
    // its dynamic symbols, else by its file's symbol table (a static program's).
    let code = loader::with_object_at(caller, |code| {
        let holds = holds_this_library(code);
        match string_abi::of_code(code, holds) {
            Proof::Nothing => string_abi::of_file(code, holds),
            proof => proof,
        }
    });
    match (code, creator) {
        (Some(Proof::Proven(abi)), _) => Decision::Ours(Some(abi)),
        (_, Creator::CxxApi) => {
            say_once(&format!(
                "leveldb-bloom: leveldb::NewBloomFilterPolicy called from {}, with no \
                 LevelDB in its scope and no single std::string in its symbols: NULL (no \
                 filter policy: slower, never wrong)\n",
                object_name(caller)
            ));
            Decision::Refused
        }
        _ => Decision::Ours(None),
    }
}

/// The decision for a policy made for the LevelDB whose code lies at `leveldb` (a
/// function of its own): this library's object where that LevelDB proves one of
/// libstdc++'s strings, else its own policy (`NewBloomFilterPolicy` where it exports
/// it), else none.
pub(super) fn decide_for(leveldb: usize) -> Decision {
    let found = loader::with_object_at(leveldb, |object| {
        let own = object
            .lookup(c"_ZN7leveldb20NewBloomFilterPolicyEi".to_bytes())
            .map(|symbol| symbol.address);
        (string_abi::of_leveldb(object), own)
    });
    match found {
        Some((Proof::Proven(abi), _)) => Decision::Ours(Some(abi)),
        Some((_, Some(own))) => Decision::Stock(own),
        _ => Decision::Refused,
    }
}

/// Whether `object` holds this very code (this library, or a program linked with
/// `libleveldb_bloom.a`).
fn holds_this_library(object: &Object) -> bool {
    object.holds(decide as *const () as usize)
}

/// The name of the object holding `address`, for messages.
fn object_name(address: usize) -> String {
    let name = loader::with_object_at(address, |object| match object.is_program() {
        true => "the program".into(),
        false => format!("{:?}", object.name().to_string_lossy()),
    });
    name.unwrap_or_else(|| "unknown code".into())
}

/// Writes `message` on stderr the first time only.
fn say_once(message: &str) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        say(message);
    }
}
