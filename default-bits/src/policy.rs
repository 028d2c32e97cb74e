//! The policy a database opened without one gets: made as the LevelDB that opens it
//! would make its own bloom policy (its own reference to
//! `leveldb::NewBloomFilterPolicy`, bound as the loader binds it), once per LevelDB,
//! kept for the process. Where that reference reaches `libleveldb_bloom` (the swap
//! loaded too), the policy is asked of it for this very LevelDB
//! (`leveldb_bloom_policy_create_for`), so that it appends to that LevelDB's
//! `std::string`; else it is that LevelDB's own.

use std::ffi::{c_int, c_void};

use super::is_interposer;
use super::known::Known;

/// `leveldb::NewBloomFilterPolicy(int)`.
const NEW_POLICY: &[u8] = b"_ZN7leveldb20NewBloomFilterPolicyEi";

/// What `libleveldb_bloom` offers this object, where the policy reference binds to it.
#[derive(Clone, Copy)]
struct Swap {
    create_for: usize,
    record_open: usize,
}

/// The policy at `bits` bits per key for the LevelDB whose code lies at `real`, or
/// None when none can be made (no definition, no memory).
pub(crate) fn for_leveldb(bits: u32, real: usize) -> Option<*mut c_void> {
    static POLICIES: Known = Known::new();
    let id = loader::with_object_at(real, |object| object.id())?;
    let made = POLICIES.get_or(id, || make(bits, real) as usize);
    (made != 0).then_some(made as *mut c_void)
}

/// Tells `libleveldb_bloom`'s statistics, where it is there, of a database opened
/// without a policy while the variable was `bits`, and whether it got one.
pub(crate) fn record_open(bits: u32, real: usize, given: bool) {
    if let Some((_, Some(swap))) = bound(real) {
        // SAFETY: `leveldb_bloom_stats_record_default_open(int, int)` of that library.
        let record: extern "C" fn(c_int, c_int) = unsafe { std::mem::transmute(swap.record_open) };
        record(c_int::try_from(bits).unwrap_or(0), c_int::from(given));
    }
}

/// A new policy for the LevelDB at `real`; NULL when none can be made.
fn make(bits: u32, real: usize) -> *mut c_void {
    let bits = c_int::try_from(bits).unwrap_or(c_int::MAX);
    match bound(real) {
        Some((_, Some(swap))) => {
            // SAFETY: `leveldb_bloom_policy_create_for(int, const void*)`.
            let create: extern "C" fn(c_int, *const c_void) -> *mut c_void =
                unsafe { std::mem::transmute(swap.create_for) };
            create(bits, real as *const c_void)
        }
        Some((new, None)) => {
            // SAFETY: LevelDB's `const FilterPolicy* NewBloomFilterPolicy(int)`.
            let new: extern "C" fn(c_int) -> *mut c_void = unsafe { std::mem::transmute(new) };
            new(bits)
        }
        None => std::ptr::null_mut(),
    }
}

/// The definition the LevelDB at `real` binds `NewBloomFilterPolicy` to, and what
/// `libleveldb_bloom` offers where that definition is its.
fn bound(real: usize) -> Option<(usize, Option<Swap>)> {
    let swap = |object: &loader::Object| {
        Some(Swap {
            create_for: object.lookup(b"leveldb_bloom_policy_create_for")?.address,
            record_open: object
                .lookup(b"leveldb_bloom_stats_record_default_open")?
                .address,
        })
    };
    // Not interposed by this object: its place in the order does not matter (0).
    let (_, bound) = loader::bind(real, 0, NEW_POLICY, is_interposer, swap, |_| ()).ok()?;
    bound.map(|bound| (bound.address, bound.inspected))
}
