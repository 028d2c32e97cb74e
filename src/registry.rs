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
//! Beside the table, the handle registered last and its policy are kept, read under
//! the same sequence count: a lookup of that handle (what a program with one policy
//! always passes) costs a few loads and no search.
//!
//! The process has one registry, [`REGISTRY`]; the tests make registries of their
//! own, so that each property is observed without other tests' handles.

use std::sync::atomic::{fence, AtomicPtr, AtomicUsize, Ordering};

use super::fork_lock::ForkLock;
use super::leveldb_filterpolicy_t;
use bloom::BloomFilterPolicy;

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

mod table;

use table::{try_box, Table, FREE};

/// Slots of the first table; each growth doubles it.
const FIRST_CAPACITY: usize = 64;

/// Which handles stand for which policies.
pub(crate) struct Registry {
    /// The current table (NULL until the first handle).
    table: AtomicPtr<Table<PolicyState>>,
    /// Odd while a writer changes the table.
    sequence: AtomicUsize,
    /// The handle registered last, else [`FREE`] once it is unregistered, and its
    /// policy: written only by writers, under the lock, and read as the table is.
    last: AtomicUsize,
    last_policy: AtomicPtr<PolicyState>,
    /// The writers' lock and state.
    writers: ForkLock<Writer>,
}

/// What only writers touch, under the lock.
struct Writer {
    live: usize,
    /// Tables grown out of, kept for lookups that may still read them; boxed, as
    /// their addresses must not move.
    #[allow(clippy::vec_box)]
    retired: Vec<Box<Table<PolicyState>>>,
}

/// The registry of this process's policies.
pub(crate) static REGISTRY: Registry = Registry::new();

impl Registry {
    const fn new() -> Self {
        Self {
            table: AtomicPtr::new(std::ptr::null_mut()),
            sequence: AtomicUsize::new(0),
            last: AtomicUsize::new(FREE),
            last_policy: AtomicPtr::new(std::ptr::null_mut()),
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
    fn current(&self) -> Option<&'static Table<PolicyState>> {
        // SAFETY: tables are never freed (see the module documentation).
        unsafe { self.table.load(Ordering::Acquire).as_ref() }
    }

    /// Records `handle` as standing for `policy`; false only when memory runs out.
    pub(crate) fn register(&'static self, handle: usize, policy: *mut PolicyState) -> bool {
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
            self.last_policy.store(policy, Ordering::Relaxed);
            self.last.store(handle, Ordering::Relaxed);
            true
        })
    }

    /// The policy `handle` stands for, if this library made it and has not
    /// destroyed it. The handle registered last takes a few loads, in line; any
    /// other the search out of line.
    #[inline(always)]
    pub(crate) fn lookup(&self, handle: usize) -> Option<*mut PolicyState> {
        let sequence = self.sequence.load(Ordering::Acquire);
        if handle != FREE && self.last.load(Ordering::Relaxed) == handle {
            let policy = self.last_policy.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            if sequence & 1 == 0 && self.sequence.load(Ordering::Relaxed) == sequence {
                return Some(policy);
            }
        }
        self.lookup_validated(handle)
    }

    /// [`lookup`](Self::lookup), read again until no writer changed the registry
    /// meanwhile.
    #[inline(never)]
    fn lookup_validated(&self, handle: usize) -> Option<*mut PolicyState> {
        if handle == FREE {
            return None;
        }
        loop {
            let sequence = self.sequence.load(Ordering::Acquire);
            let found = if self.last.load(Ordering::Relaxed) == handle {
                Some(self.last_policy.load(Ordering::Relaxed))
            } else {
                self.search(handle)
            };
            fence(Ordering::Acquire);
            if sequence & 1 == 0 && self.sequence.load(Ordering::Relaxed) == sequence {
                return found;
            }
            std::hint::spin_loop();
        }
    }

    /// The table's entry for `handle`, read as it may be changing: the caller
    /// validates it with the sequence count.
    fn search(&self, handle: usize) -> Option<*mut PolicyState> {
        let table = self.current()?;
        let slot = table.find(handle)?;
        Some(table.slots[slot].policy.load(Ordering::Relaxed))
    }

    /// Forgets `handle`, returning the policy it stood for.
    pub(crate) fn unregister(&'static self, handle: usize) -> Option<*mut PolicyState> {
        if handle == FREE {
            return None;
        }
        self.write(|writer| {
            let table = self.current()?;
            let slot = table.find(handle)?;
            if self.last.load(Ordering::Relaxed) == handle {
                self.last.store(FREE, Ordering::Relaxed);
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

/// The policy behind a handle this library returned and has not destroyed: how
/// every exported function resolves its handle, once.
///
/// # Safety
/// The handle must not be destroyed while the reference is in use.
#[inline(always)]
pub(crate) unsafe fn policy_of<'a>(
    handle: *const leveldb_filterpolicy_t,
) -> Option<&'a PolicyState> {
    // SAFETY: registered handles point at live policies until destroyed, which the
    // caller promised not to do meanwhile.
    REGISTRY
        .lookup(handle as usize)
        .map(|policy| unsafe { &*policy })
}

#[cfg(test)]
mod tests;
