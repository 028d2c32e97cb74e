//! Small answers remembered about the loaded objects, under keys of two words (an
//! object's identity, or the list's generation). Reached only inside a walk over
//! the loaded objects, whose lock guards them (see `objects`).

/// `N` answers (a byte each); when full, the oldest is forgotten.
pub(super) struct Memo<const N: usize> {
    entries: [((usize, u64), u8); N],
    /// The slot the next answer goes to.
    next: usize,
}

impl<const N: usize> Memo<N> {
    pub(super) const fn new() -> Self {
        // Key (0, 0) is never asked: no object's headers lie at 0, no generation is 0.
        Self {
            entries: [((0, 0), 0); N],
            next: 0,
        }
    }

    /// The answer remembered under `key`, if any.
    pub(super) fn get(&self, key: (usize, u64)) -> Option<u8> {
        self.entries
            .iter()
            .find(|(remembered, _)| *remembered == key)
            .map(|&(_, answer)| answer)
    }

    pub(super) fn put(&mut self, key: (usize, u64), answer: u8) {
        self.entries[self.next] = (key, answer);
        self.next = (self.next + 1) % N;
    }
}

#[cfg(test)]
mod tests {
    use super::Memo;

    #[test]
    fn remembers_the_last_answers_by_key() {
        let mut memo = Memo::<2>::new();
        assert_eq!(memo.get((0x1000, 1)), None);
        memo.put((0x1000, 1), 5);
        memo.put((0x2000, 1), 6);
        assert_eq!(memo.get((0x1000, 1)), Some(5));
        assert_eq!(memo.get((0x2000, 1)), Some(6));
        // Another generation of the same object is another key.
        assert_eq!(memo.get((0x1000, 2)), None);
        // Full: the oldest goes.
        memo.put((0x3000, 1), 7);
        assert_eq!(memo.get((0x1000, 1)), None);
        assert_eq!(memo.get((0x3000, 1)), Some(7));
    }
}
