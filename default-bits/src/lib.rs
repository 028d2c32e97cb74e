//! `libleveldb_bloom_default_bits.so`: `LEVELDB_BLOOM_DEFAULT_BITS=N` (1 to 100), a
//! bloom filter policy of N bits per key for the LevelDB databases a program opens
//! with none (most do: it is the default of LevelDB's `Options`, of its C API and of
//! plyvel), in an object of its own that only a user who asks for it preloads
//! (`leveldb-bloom run --default-bits N`, or `LD_PRELOAD`), beside
//! `libleveldb_bloom.so`, which interposes nothing but the policy creators.
//!
//! It defines LevelDB's `leveldb_open` and, on x86-64, `leveldb::DB::Open` of both
//! `std::string` ABIs ([`open`]). Each forwards to the definition its caller's
//! reference binds to without this object (`loader::bind`: the next one in the
//! caller's scope, never this object nor a copy of it, so no call can come back
//! here), with the caller's own options, or, where they set no filter policy and the
//! variable is set, a copy of them given one ([`options`]): the caller's `Options`
//! is never written. The copy's layout is read from that LevelDB's own code; its
//! policy is made as that LevelDB's own reference to `NewBloomFilterPolicy` binds
//! ([`policy`]). Nothing here takes the loader's lock or keeps a state per thread: a
//! nested open, or a plugin constructor opening a database on a worker it joins, run
//! as stock. The variable is read once ([`variable`]), ignored in a secure-execution
//! process, and a bad value is said once, only in a process that opens a database.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod known;
mod open;
mod options;
mod policy;
mod variable;

use std::ffi::{c_char, CStr};

/// This object's version (Cargo.toml's), a static string. Its name also marks this
/// object and its copies, which forward to no one of them.
#[no_mangle]
pub extern "C" fn leveldb_bloom_default_bits_version() -> *const c_char {
    VERSION.as_ptr()
}

const VERSION: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(version) => version,
        Err(_) => panic!("the version holds no NUL"),
    };

/// Whether `object` is this object or a copy of it (under any name), or a
/// `libleveldb_bloom` of a version that still defined the open functions: none is
/// forwarded to.
fn is_interposer(object: &loader::Object) -> bool {
    object
        .lookup(b"leveldb_bloom_default_bits_version")
        .is_some()
        || object.lookup(b"leveldb_bloom_version").is_some()
            && object.lookup(b"leveldb_open").is_some()
}

/// The object's ELF constructor: starts the reader of the loaded objects and reads
/// the variable.
extern "C" fn start() {
    loader::start();
    variable::read();
}

#[used]
#[link_section = ".init_array"]
static START: extern "C" fn() = start;
