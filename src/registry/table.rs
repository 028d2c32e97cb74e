//! The registry's hash table: open addressing with linear probing, at most half
//! full, deleting by shifting entries back (see the registry's documentation).
//! Lookups read it while a writer may change it: the registry validates them.

use std::alloc::{alloc, Layout};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Handles are aligned addresses, never 0: 0 marks a free slot.
pub(super) const FREE: usize = 0;

pub(super) struct Slot<T> {
    pub(super) handle: AtomicUsize,
    pub(super) policy: AtomicPtr<T>,
}

/// A power-of-two number of slots.
pub(super) struct Table<T> {
    pub(super) slots: Box<[Slot<T>]>,
}

impl<T> Table<T> {
    /// An empty table of `capacity` slots, or `None` when memory runs out.
    pub(super) fn new(capacity: usize) -> Option<Box<Self>> {
        let mut slots = Vec::new();
        slots.try_reserve_exact(capacity).ok()?;
        slots.extend((0..capacity).map(|_| Slot {
            handle: AtomicUsize::new(FREE),
            policy: AtomicPtr::new(std::ptr::null_mut()),
        }));
        try_box(Self {
            slots: slots.into_boxed_slice(),
        })
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Where `handle`'s probe sequence starts.
    #[inline(always)]
    fn home(&self, handle: usize) -> usize {
        ((handle >> 4).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) & self.mask()
    }

    /// The slot holding `handle`, if any. Reads may race with a writer: the caller
    /// validates them with the sequence count.
    #[inline(always)]
    pub(super) fn find(&self, handle: usize) -> Option<usize> {
        let mut slot = self.home(handle);
        // A table is at most half full, so a free slot ends every search.
        loop {
            match self.slots[slot].handle.load(Ordering::Relaxed) {
                key if key == handle => return Some(slot),
                FREE => return None,
                _ => slot = (slot + 1) & self.mask(),
            }
        }
    }

    /// Puts `handle` in the first free slot of its sequence (writer only).
    pub(super) fn insert(&self, handle: usize, policy: *mut T) {
        let mut slot = self.home(handle);
        while self.slots[slot].handle.load(Ordering::Relaxed) != FREE {
            slot = (slot + 1) & self.mask();
        }
        self.slots[slot].policy.store(policy, Ordering::Relaxed);
        self.slots[slot].handle.store(handle, Ordering::Relaxed);
    }

    /// Empties `slot` and moves back every later entry of its cluster that may
    /// now sit nearer its home (writer only).
    pub(super) fn remove(&self, mut hole: usize) {
        let mut slot = hole;
        loop {
            slot = (slot + 1) & self.mask();
            let handle = self.slots[slot].handle.load(Ordering::Relaxed);
            if handle == FREE {
                break;
            }
            // The entry may fill the hole unless its home lies cyclically in (hole, slot].
            let home = self.home(handle);
            if (slot.wrapping_sub(home) & self.mask()) >= (slot.wrapping_sub(hole) & self.mask()) {
                let policy = self.slots[slot].policy.load(Ordering::Relaxed);
                self.slots[hole].policy.store(policy, Ordering::Relaxed);
                self.slots[hole].handle.store(handle, Ordering::Relaxed);
                hole = slot;
            }
        }
        self.slots[hole].handle.store(FREE, Ordering::Relaxed);
    }
}

/// `Box::new(value)`, or `None` when memory runs out: `Box::new` would abort the
/// process, and the C API promises NULL instead.
pub(super) fn try_box<T>(value: T) -> Option<Box<T>> {
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
