//! Which pointers are policies of this library.
//!
//! A handle given to C is this library's policy object (see `dropin`), whose state is
//! a [`PolicyState`]. Every handle this library returns is recorded here, mapped to its
//! `PolicyState`, so each exported function recognises a pointer it did not make.
//!
//! The registry is an open-addressing hash table with linear probing that grows
//! without limit (kept at most half full) and deletes by shifting entries back, so
//! no tombstone ever lengthens a search: a lookup costs the same after any number of
//! create/destroy cycles. Writers (create, destroy) take a lock; lookups, on the
//! query path, take none: they read under a sequence count and retry if a writer
//! changed the table meanwhile (a seqlock). A grown-out-of table is kept, never
//! freed, as a lookup may still be reading it; together the retired tables are
//! smaller than the current one. The writers' lock is a [`ForkLock`], so no write is
//! in flight across a `fork()`: a child finds the lock free and the sequence count
//! even (see `fork`).
//!
//! Beside the table, the handle registered last is kept while its policy is of the
//! current format ([`Registry::is_last_current`]): a query through it, which needs
//! the format only to answer "absent", then costs one load instead of a lookup.
//!
//! The process has one registry, [`REGISTRY`]; the tests make registries of their
//! own, so that each property is observed without other tests' handles.

use std::alloc::{alloc, Layout};
use std::sync::atomic::{fence, AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use super::fork_lock::ForkLock;
use bloom::{BloomFilterPolicy, Format};

/// The state behind every handle.
pub(crate) struct PolicyState {
    pub(crate) bloom: BloomFilterPolicy,
    /// The policy object this is the state of (0 until it is made), so its entry
    /// can be dropped when the object is destroyed.
    pub(crate) object: AtomicUsize,
}

impl PolicyState {
    /// A policy on the heap, or `None` when memory runs out.
    pub(crate) fn new(bloom: BloomFilterPolicy) -> Option<Box<Self>> {
        try_box(Self {
            bloom,
            object: AtomicUsize::new(0),
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

/// Slots of the first table; each growth doubles it.
const FIRST_CAPACITY: usize = 64;
/// Handles are aligned addresses, never 0: 0 marks a free slot.
const FREE: usize = 0;

struct Slot {
    handle: AtomicUsize,
    policy: AtomicPtr<PolicyState>,
}

/// A power-of-two number of slots.
struct Table {
    slots: Box<[Slot]>,
}

impl Table {
    /// An empty table of `capacity` slots, or `None` when memory runs out.
    fn new(capacity: usize) -> Option<Box<Self>> {
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
    fn find(&self, handle: usize) -> Option<usize> {
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
    fn insert(&self, handle: usize, policy: *mut PolicyState) {
        let mut slot = self.home(handle);
        while self.slots[slot].handle.load(Ordering::Relaxed) != FREE {
            slot = (slot + 1) & self.mask();
        }
        self.slots[slot].policy.store(policy, Ordering::Relaxed);
        self.slots[slot].handle.store(handle, Ordering::Relaxed);
    }

    /// Empties `slot` and moves back every later entry of its cluster that may
    /// now sit nearer its home (writer only).
    fn remove(&self, mut hole: usize) {
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

/// Which handles stand for which policies.
pub(crate) struct Registry {
    /// The current table (NULL until the first handle).
    table: AtomicPtr<Table>,
    /// Odd while a writer changes the table.
    sequence: AtomicUsize,
    /// The handle registered last while it stands for a policy of the current
    /// format, else [`FREE`]. Written only by writers, under the lock: set when such a
    /// handle is registered, cleared when it is unregistered, before it leaves the
    /// table. So it is always FREE or a registered handle of a current policy.
    last_current: AtomicUsize,
    /// Whether a handle of a legacy policy was ever registered: until one is, every
    /// handle stands for a current policy, and counting a query under its format
    /// needs no lookup.
    legacy_registered: AtomicBool,
    /// The writers' lock and state.
    writers: ForkLock<Writer>,
}

/// What only writers touch, under the lock.
struct Writer {
    live: usize,
    /// Tables grown out of, kept for lookups that may still read them; boxed, as
    /// their addresses must not move.
    #[allow(clippy::vec_box)]
    retired: Vec<Box<Table>>,
}

/// The registry of this process's policies.
pub(crate) static REGISTRY: Registry = Registry::new();

impl Registry {
    const fn new() -> Self {
        Self {
            table: AtomicPtr::new(std::ptr::null_mut()),
            sequence: AtomicUsize::new(0),
            last_current: AtomicUsize::new(FREE),
            legacy_registered: AtomicBool::new(false),
            writers: ForkLock::new(Writer {
                live: 0,
                retired: Vec::new(),
            }),
        }
    }

    /// The writers' lock, which the fork handlers hold across every `fork()`.
    pub(crate) fn writers_lock(&self) -> &ForkLock<impl Sized> {
        &self.writers
    }

    /// Runs `change` on the writers' state with the lock held and readers told to
    /// retry.
    fn write<T>(&'static self, change: impl FnOnce(&mut Writer) -> T) -> T {
        /// Makes the sequence count even again when dropped, also if `change`
        /// panics; the lock is released after it.
        struct Writing<'r>(&'r AtomicUsize, usize);
        impl Drop for Writing<'_> {
            fn drop(&mut self) {
                self.0.store(self.1.wrapping_add(2), Ordering::Release);
            }
        }
        let mut writer = self.writers.lock();
        let sequence = self.sequence.load(Ordering::Relaxed);
        self.sequence
            .store(sequence.wrapping_add(1), Ordering::Relaxed);
        fence(Ordering::Release);
        let _writing = Writing(&self.sequence, sequence);
        change(&mut writer)
    }

    /// The current table, if any.
    fn current(&self) -> Option<&'static Table> {
        // SAFETY: tables are never freed (see the module documentation).
        unsafe { self.table.load(Ordering::Acquire).as_ref() }
    }

    /// Records `handle` as standing for `policy`, whose format is `format`; false
    /// only when memory runs out.
    pub(crate) fn register(
        &'static self,
        handle: usize,
        policy: *mut PolicyState,
        format: Format,
    ) -> bool {
        if handle == FREE {
            return false;
        }
        self.write(|writer| {
            let capacity = self.current().map_or(0, |table| table.slots.len());
            if 2 * (writer.live + 1) > capacity {
                let Some(grown) = Table::new((2 * capacity).max(FIRST_CAPACITY)) else {
                    return false;
                };
                if writer.retired.try_reserve(1).is_err() {
                    return false;
                }
                if let Some(old) = self.current() {
                    for slot in old.slots.iter() {
                        let key = slot.handle.load(Ordering::Relaxed);
                        if key != FREE {
                            grown.insert(key, slot.policy.load(Ordering::Relaxed));
                        }
                    }
                }
                let old = self.table.swap(Box::into_raw(grown), Ordering::AcqRel);
                if !old.is_null() {
                    // SAFETY: made by Box::into_raw here before; kept, not freed.
                    writer.retired.push(unsafe { Box::from_raw(old) });
                }
            }
            let table = self.current().expect("just made");
            if table.find(handle).is_some() {
                return false;
            }
            table.insert(handle, policy);
            writer.live += 1;
            let last = match format {
                Format::Current => handle,
                Format::Legacy => {
                    self.legacy_registered.store(true, Ordering::Relaxed);
                    FREE
                }
            };
            self.last_current.store(last, Ordering::Relaxed);
            true
        })
    }

    /// Whether `handle` is registered and stands for a policy of the current format,
    /// as far as one load can tell: true only for the handle registered last (a
    /// `false` says nothing). No lookup, and nothing behind the handle is read.
    #[inline(always)]
    pub(crate) fn is_last_current(&self, handle: usize) -> bool {
        handle != FREE && self.last_current.load(Ordering::Relaxed) == handle
    }

    /// Whether every handle registered so far stood for a policy of the current
    /// format.
    #[inline(always)]
    pub(crate) fn all_current(&self) -> bool {
        !self.legacy_registered.load(Ordering::Relaxed)
    }

    /// The policy `handle` stands for, if this library made it and has not
    /// destroyed it.
    #[inline(always)]
    pub(crate) fn lookup(&self, handle: usize) -> Option<*mut PolicyState> {
        if handle == FREE {
            return None;
        }
        loop {
            let sequence = self.sequence.load(Ordering::Acquire);
            let table = self.current()?;
            let found = table
                .find(handle)
                .map(|slot| table.slots[slot].policy.load(Ordering::Relaxed));
            fence(Ordering::Acquire);
            if sequence & 1 == 0 && self.sequence.load(Ordering::Relaxed) == sequence {
                return found;
            }
            std::hint::spin_loop();
        }
    }

    /// Forgets `handle`, returning the policy it stood for.
    pub(crate) fn unregister(&'static self, handle: usize) -> Option<*mut PolicyState> {
        if handle == FREE {
            return None;
        }
        self.write(|writer| {
            let table = self.current()?;
            let slot = table.find(handle)?;
            if self.last_current.load(Ordering::Relaxed) == handle {
                self.last_current.store(FREE, Ordering::Relaxed);
            }
            let policy = table.slots[slot].policy.load(Ordering::Relaxed);
            table.remove(slot);
            writer.live -= 1;
            Some(policy)
        })
    }

    /// Whether a handle was ever registered in this process (or in the parent it was
    /// forked from): whether the library was used.
    pub(crate) fn ever_registered(&self) -> bool {
        !self.table.load(Ordering::Relaxed).is_null()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A registry of the test's own, never shared (its tables are kept for good, as
    /// the process's are).
    fn registry() -> &'static Registry {
        Box::leak(Box::new(Registry::new()))
    }

    #[test]
    fn register_lookup_unregister() {
        let registry = registry();
        let mut a = PolicyState::new(BloomFilterPolicy::new(10)).unwrap();
        let mut b = PolicyState::new(BloomFilterPolicy::new(20)).unwrap();
        let (pa, pb): (*mut PolicyState, *mut PolicyState) = (&mut *a, &mut *b);
        assert!(!registry.ever_registered());
        assert!(registry.register(pa as usize, pa, Format::Current));
        assert!(registry.register(0x1000, pb, Format::Current));
        assert!(
            !registry.register(0x1000, pb, Format::Current),
            "registered twice"
        );
        assert!(
            !registry.register(FREE, pb, Format::Current),
            "0 is no handle"
        );
        assert_eq!(registry.lookup(pa as usize), Some(pa));
        assert_eq!(registry.lookup(0x1000), Some(pb));
        assert_eq!(registry.lookup(0x2000), None);
        assert_eq!(registry.lookup(FREE), None);
        assert_eq!(registry.unregister(0x1000), Some(pb));
        assert_eq!(registry.unregister(0x1000), None);
        assert_eq!(registry.lookup(0x1000), None);
        assert_eq!(registry.lookup(pa as usize), Some(pa));
        assert_eq!(registry.unregister(pa as usize), Some(pa));
        assert!(registry.ever_registered());
    }

    /// The handle registered last is the last current one exactly while it is
    /// registered and its policy current; a legacy handle ends "all current".
    #[test]
    fn last_current_is_the_last_registered_current_handle() {
        let registry = registry();
        let policy = std::ptr::dangling_mut::<PolicyState>();
        let (first, second, legacy) = (0xc0_0000_0010, 0xc0_0000_0020, 0xc0_0000_0030);
        assert!(!registry.is_last_current(FREE));
        assert!(registry.register(first, policy, Format::Current));
        assert!(registry.is_last_current(first));
        assert!(registry.register(second, policy, Format::Current));
        assert!(registry.is_last_current(second) && !registry.is_last_current(first));
        assert!(registry.all_current());
        assert!(registry.register(legacy, policy, Format::Legacy));
        assert!(!registry.is_last_current(legacy) && !registry.is_last_current(second));
        assert!(!registry.all_current());
        assert!(registry.register(first + 0x100, policy, Format::Current));
        assert_eq!(registry.unregister(first + 0x100), Some(policy));
        assert!(
            !registry.is_last_current(first + 0x100),
            "cleared when unregistered"
        );
    }

    /// Growth, and back-shift deletion among colliding handles: every handle stays
    /// findable while others come and go.
    #[test]
    fn grows_and_deletes_without_losing_entries() {
        let registry = registry();
        let policy = std::ptr::dangling_mut::<PolicyState>();
        // Handles far apart in memory but often sharing a home slot.
        let handles: Vec<usize> = (1..=5_000usize).map(|i| 0x10_0000 + (i << 20)).collect();
        for &h in &handles {
            assert!(registry.register(h, policy, Format::Current));
        }
        for (i, &h) in handles.iter().enumerate() {
            if i % 3 == 0 {
                assert_eq!(registry.unregister(h), Some(policy));
            }
        }
        for (i, &h) in handles.iter().enumerate() {
            assert_eq!(registry.lookup(h).is_some(), i % 3 != 0, "handle {i}");
        }
        for (i, &h) in handles.iter().enumerate() {
            if i % 3 != 0 {
                assert_eq!(registry.unregister(h), Some(policy));
            }
        }
        assert!(handles.iter().all(|&h| registry.lookup(h).is_none()));
    }

    /// Lookups take no lock: while a writer registers and unregisters thousands of
    /// other handles (growing the table several times and shifting entries back),
    /// readers always find the handles that stay and never one that was never
    /// registered.
    #[test]
    fn lookups_during_writes_see_every_live_handle() {
        let registry = registry();
        let (kept, other) = (
            std::ptr::dangling_mut::<PolicyState>(),
            std::ptr::without_provenance_mut::<PolicyState>(0x40),
        );
        // Addresses, which threads may share, to compare lookups with.
        let kept_address = kept as usize;
        let stays: Vec<usize> = (1..=64usize).map(|i| 0x7000_0000 + (i << 12)).collect();
        for &h in &stays {
            assert!(registry.register(h, kept, Format::Current));
        }
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            for _ in 0..2 {
                scope.spawn(|| {
                    while !done.load(Ordering::Relaxed) {
                        for &h in &stays {
                            assert_eq!(registry.lookup(h).map(|p| p as usize), Some(kept_address));
                            assert_eq!(registry.lookup(h + 8), None);
                        }
                    }
                });
            }
            for round in 0..20usize {
                let churn: Vec<usize> = (0..2_000usize)
                    .map(|i| 0x9000_0000 + ((round * 2_000 + i) << 12))
                    .collect();
                for &h in &churn {
                    assert!(registry.register(h, other, Format::Current));
                }
                for &h in &churn {
                    assert_eq!(registry.unregister(h), Some(other));
                }
            }
            done.store(true, Ordering::Relaxed);
        });
    }
}
