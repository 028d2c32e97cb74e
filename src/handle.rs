//! Which pointers are policies of this library.
//!
//! A handle given to C is either a [`Policy`] itself or, when LevelDB is in the
//! process, the LevelDB object that wraps one (see `dropin`). Every handle this
//! library returns is recorded here, mapped to its `Policy`, so each exported
//! function accepts both kinds and recognises a pointer it did not make. Lookups are
//! lock-free, because they sit on the query path.

use std::alloc::{alloc, Layout};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use crate::bloom::{BloomFilterPolicy, ReciprocalCache};

/// The state behind every handle.
pub(crate) struct Policy {
    pub(crate) bloom: BloomFilterPolicy,
    /// The LevelDB object wrapping this policy (0 if none), so its entry can be
    /// dropped when LevelDB destroys the wrapper.
    pub(crate) leveldb_wrapper: AtomicUsize,
    /// Spares one-key queries the division that sets up a filter's probes.
    pub(crate) reciprocals: ReciprocalCache,
}

impl Policy {
    /// A policy on the heap, or `None` when memory runs out.
    pub(crate) fn new(bloom: BloomFilterPolicy) -> Option<Box<Self>> {
        try_box(Self {
            bloom,
            leveldb_wrapper: AtomicUsize::new(0),
            reciprocals: ReciprocalCache::new(),
        })
    }
}

/// `Box::new(value)`, or `None` when memory runs out: `Box::new` would abort the
/// process, and the C API promises NULL instead.
pub(crate) fn try_box<T>(value: T) -> Option<Box<T>> {
    let layout = Layout::new::<T>();
    if layout.size() == 0 {
        return Some(Box::new(value));
    }
    // SAFETY: the layout is not zero-sized, as `alloc` requires.
    let raw = unsafe { alloc(layout) }.cast::<T>();
    if raw.is_null() {
        return None;
    }
    // SAFETY: `raw` is fresh memory from the global allocator with `T`'s layout, as
    // `Box::from_raw` requires, and is initialised before the box is made.
    unsafe {
        raw.write(value);
        Some(Box::from_raw(raw))
    }
}

/// How many handles may be live at once; creating one more fails cleanly.
pub const MAX_LIVE_POLICIES: usize = 1 << 16;

// An open-addressing table keyed by handle address. Keys move EMPTY → RESERVED →
// address → TOMBSTONE → RESERVED …, so a probe sequence is never cut short by a
// removal; handle addresses are aligned, so they never equal the markers.
const EMPTY: usize = 0;
const TOMBSTONE: usize = 1;
const RESERVED: usize = 2;

static KEYS: [AtomicUsize; MAX_LIVE_POLICIES] =
    [const { AtomicUsize::new(EMPTY) }; MAX_LIVE_POLICIES];
static VALUES: [AtomicPtr<Policy>; MAX_LIVE_POLICIES] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_LIVE_POLICIES];

/// The slot where `handle`'s probe sequence starts (and, with few handles, ends).
#[inline(always)]
fn home_slot(handle: usize) -> usize {
    (handle >> 4).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (usize::BITS - 16)
}

fn probe_sequence(handle: usize) -> impl Iterator<Item = usize> {
    let start = home_slot(handle);
    (0..MAX_LIVE_POLICIES).map(move |i| (start + i) % MAX_LIVE_POLICIES)
}

/// Records `handle` as standing for `policy`; false if the table is full.
pub(crate) fn register(handle: usize, policy: *mut Policy) -> bool {
    for slot in probe_sequence(handle) {
        let key = KEYS[slot].load(Ordering::Acquire);
        if (key == EMPTY || key == TOMBSTONE)
            && KEYS[slot]
                .compare_exchange(key, RESERVED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            VALUES[slot].store(policy, Ordering::Relaxed);
            KEYS[slot].store(handle, Ordering::Release);
            return true;
        }
    }
    false
}

#[inline(always)]
fn find(handle: usize) -> Option<usize> {
    if handle <= RESERVED {
        return None;
    }
    // Where a handle almost always is: one load and compare on the query path.
    let home = home_slot(handle);
    if KEYS[home].load(Ordering::Acquire) == handle {
        return Some(home);
    }
    find_beyond_home(handle)
}

fn find_beyond_home(handle: usize) -> Option<usize> {
    for slot in probe_sequence(handle) {
        match KEYS[slot].load(Ordering::Acquire) {
            key if key == handle => return Some(slot),
            EMPTY => return None,
            _ => {}
        }
    }
    None
}

/// The policy `handle` stands for, if this library made it and has not destroyed it.
pub(crate) fn lookup(handle: usize) -> Option<*mut Policy> {
    find(handle).map(|slot| VALUES[slot].load(Ordering::Relaxed))
}

/// Forgets `handle`, returning the policy it stood for.
pub(crate) fn unregister(handle: usize) -> Option<*mut Policy> {
    let slot = find(handle)?;
    let policy = VALUES[slot].load(Ordering::Relaxed);
    KEYS[slot]
        .compare_exchange(handle, TOMBSTONE, Ordering::AcqRel, Ordering::Relaxed)
        .ok()
        .map(|_| policy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_lookup_unregister() {
        let mut a = Policy::new(BloomFilterPolicy::new(10)).unwrap();
        let mut b = Policy::new(BloomFilterPolicy::new(20)).unwrap();
        let (pa, pb): (*mut Policy, *mut Policy) = (&mut *a, &mut *b);
        assert!(register(pa as usize, pa));
        assert!(register(0x1000, pb));
        assert_eq!(lookup(pa as usize), Some(pa));
        assert_eq!(lookup(0x1000), Some(pb));
        assert_eq!(lookup(0x2000), None);
        assert_eq!(lookup(0), None);
        assert_eq!(unregister(0x1000), Some(pb));
        assert_eq!(unregister(0x1000), None);
        assert_eq!(lookup(0x1000), None);
        assert_eq!(lookup(pa as usize), Some(pa));
        assert_eq!(unregister(pa as usize), Some(pa));
    }
}
