//! The objects glibc's dynamic loader has loaded, read as it mapped them, for the
//! libraries of leveldb-bloom that must know what a program's LevelDB is without
//! loading anything or asking the loader for its lock:
//!
//! - [`Object`]: one loaded object, every byte read inside one of its readable
//!   `PT_LOAD` segments, so a crafted dynamic section is never followed outside
//!   what the object maps; its dynamic symbols found as the loader finds them
//!   (its hash table, [`Object::lookup`]) or listed ([`Object::symbols`]), and
//!   the symbol table of the file it was mapped from ([`Object::each_file_symbol`]);
//! - [`with_object_at`] and [`each_object`]: the object holding an address, and
//!   all of them in load order, without a lock a forked child could find held
//!   (see `walk.rs`);
//! - [`bind`]: the definition a reference from a given object binds to, by ld.so's
//!   rule, leaving out the objects the caller names (an interposer and its copies).
//!
//! - [`say`] and [`write_unblocked`]: a line on the host's stderr (or a file) that
//!   never blocks for long and never raises SIGPIPE;
//! - [`with_caller!`]: the address an exported function returns to.
//!
//! Nothing here knows LevelDB: the names it looks for are its callers'.

#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]

mod caller;
mod file_symbols;
mod object;
mod say;
mod scope;
mod symbols;
mod walk;

pub use object::Object;
pub use say::{say, write_unblocked};
pub use scope::{bind, Bound, OutOfMemory};
pub use symbols::Symbol;
pub use walk::{each_object, generation, start, with_object_at};

/// The CPUs (`CARGO_CFG_TARGET_ARCH`) [`with_caller!`] passes the caller's address
/// on: the ones its naked functions are written for.
pub const CPUS: [&str; 3] = ["x86_64", "aarch64", "s390x"];
