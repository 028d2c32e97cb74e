//! Small answers remembered without a lock: any thread, a signal handler, or a child
//! forked at any instant reads and writes them and never waits. Each slot is a
//! sequence lock that writers only try: one finding the slot busy leaves it (the
//! answer is computed again next time), and a slot a fork caught mid-write stays
//! unused in the child.

use std::sync::atomic::{fence, AtomicU64, AtomicU8, AtomicUsize, Ordering};

/// `N` answers (a byte each) under keys of two words; key (0, _) is no key.
pub(super) struct Memo<const N: usize> {
    slots: [Slot; N],
}

struct Slot {
    /// Odd while a writer fills the slot; changes with every write.
    sequence: AtomicUsize,
    key: (AtomicUsize, AtomicU64),
    answer: AtomicU8,
}

impl<const N: usize> Memo<N> {
    pub(super) const fn new() -> Self {
        const EMPTY: Slot = Slot {
            sequence: AtomicUsize::new(0),
            key: (AtomicUsize::new(0), AtomicU64::new(0)),
            answer: AtomicU8::new(0),
        };
        Self { slots: [EMPTY; N] }
    }

    /// The answer remembered under `key`, if any.
    pub(super) fn get(&self, key: (usize, u64)) -> Option<u8> {
        self.slots.iter().find_map(|slot| slot.read(key))
    }

    /// Remembers `answer` under `key`, in the slot `key` hashes to; left undone when
    /// another writer holds that slot.
    pub(super) fn put(&self, key: (usize, u64), answer: u8) {
        let index = (key.0 >> 4) ^ key.1 as usize;
        self.slots[index % N].try_write(key, answer);
    }
}

impl Slot {
    fn read(&self, key: (usize, u64)) -> Option<u8> {
        let before = self.sequence.load(Ordering::Acquire);
        let read = (
            self.key.0.load(Ordering::Relaxed),
            self.key.1.load(Ordering::Relaxed),
            self.answer.load(Ordering::Relaxed),
        );
        fence(Ordering::Acquire);
        let whole = before % 2 == 0 && self.sequence.load(Ordering::Relaxed) == before;
        (whole && key.0 != 0 && (read.0, read.1) == key).then_some(read.2)
    }

    fn try_write(&self, key: (usize, u64), answer: u8) {
        let before = self.sequence.load(Ordering::Relaxed);
        let claimed = before % 2 == 0
            && self
                .sequence
                .compare_exchange(before, before + 1, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok();
        if !claimed {
            return;
        }
        fence(Ordering::Release);
        self.key.0.store(key.0, Ordering::Relaxed);
        self.key.1.store(key.1, Ordering::Relaxed);
        self.answer.store(answer, Ordering::Relaxed);
        self.sequence.store(before + 2, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::Memo;

    #[test]
    fn remembers_answers_by_key() {
        let memo = Memo::<4>::new();
        assert_eq!(memo.get((0x1000, 0)), None);
        memo.put((0x1000, 0), 5);
        memo.put((0x2000, 1), 6);
        assert_eq!(memo.get((0x1000, 0)), Some(5));
        assert_eq!(memo.get((0x2000, 1)), Some(6));
        // Another generation of the same object is another key.
        assert_eq!(memo.get((0x1000, 1)), None);
        assert_eq!(memo.get((0, 0)), None);
    }
}
