//! What is known of each LevelDB in the process (its options' layout, its policy),
//! remembered under the LevelDB object's identity, without a lock: a value once put
//! stays. A process with more LevelDBs than [`KNOWN`] finds again what it could not
//! remember.

use std::sync::atomic::{AtomicUsize, Ordering};

/// LevelDBs remembered.
const KNOWN: usize = 8;

/// Values of one kind, each under a LevelDB's identity (never 0).
pub(crate) struct Known {
    ids: [AtomicUsize; KNOWN],
    values: [AtomicUsize; KNOWN],
}

impl Known {
    pub(crate) const fn new() -> Self {
        Self {
            ids: [const { AtomicUsize::new(0) }; KNOWN],
            values: [const { AtomicUsize::new(0) }; KNOWN],
        }
    }

    /// The value remembered for `id`, else the one `find` finds, remembered if there
    /// is room (another thread's, found first for the same `id`, wins).
    pub(crate) fn get_or(&self, id: usize, find: impl FnOnce() -> usize) -> usize {
        for (slot, value) in self.ids.iter().zip(&self.values) {
            if slot.load(Ordering::Acquire) == id {
                let known = value.load(Ordering::Acquire);
                if known != 0 {
                    return known;
                }
            }
        }
        let found = find();
        for (slot, value) in self.ids.iter().zip(&self.values) {
            let claimed = slot.compare_exchange(0, id, Ordering::AcqRel, Ordering::Acquire);
            if claimed.is_ok() {
                value.store(found, Ordering::Release);
                break;
            }
        }
        found
    }
}
