//! Which tables an absent Get consults, from their key ranges as LevelDB 1.23's
//! `Version::Get` picks them: every level-0 table whose [smallest, largest] user-key
//! range holds the key, and on each deeper level the one table whose range holds
//! it. An absent key is taken to fall where the database's keys fall: each key
//! read counts for every table a Get of a key beside it would consult, and a
//! table's share of absent Gets is its count over all the keys.

use leveldb_table::db::manifest::{LiveTable, NUM_LEVELS};

/// A table's user-key range, two keys (in the order a level's search needs), and
/// its index.
type Range = (Vec<u8>, Vec<u8>, usize);

/// Counts, per live table, the database's keys inside its range.
pub struct RangeCounter {
    /// Level-0 tables: (smallest, largest, index).
    level0: Vec<Range>,
    /// Each deeper level's tables by largest key: (largest, smallest, index).
    deeper: Vec<Vec<Range>>,
    /// Whether user keys are in bytewise order; otherwise ranges cannot be compared,
    /// and every level-0 table counts every key (the costliest case) while a deeper
    /// level counts each key for its own table.
    bytewise: bool,
    counts: Vec<u64>,
    keys: u64,
}

impl RangeCounter {
    /// For the live tables of `levels`, indexed in level order then in the
    /// MANIFEST's order (as `Version::files` lists them).
    pub fn new(levels: &[Vec<LiveTable>; NUM_LEVELS], bytewise: bool) -> Self {
        let mut index = 0;
        let (mut level0, mut deeper) = (Vec::new(), Vec::new());
        for (level, tables) in levels.iter().enumerate() {
            let mut ranges: Vec<_> = tables
                .iter()
                .map(|table| {
                    index += 1;
                    let (smallest, largest) = (table.smallest.user_key(), table.largest.user_key());
                    (smallest.to_vec(), largest.to_vec(), index - 1)
                })
                .collect();
            if level == 0 {
                level0 = ranges;
            } else {
                ranges
                    .iter_mut()
                    .for_each(|r| std::mem::swap(&mut r.0, &mut r.1));
                ranges.sort();
                deeper.push(ranges);
            }
        }
        Self {
            level0,
            deeper,
            bytewise,
            counts: vec![0; index],
            keys: 0,
        }
    }

    /// Counts `key`, read from table `own` (its index), for every table a Get of a
    /// key beside it consults.
    pub fn count(&mut self, key: &[u8], own: usize) {
        self.keys += 1;
        for (smallest, largest, index) in &self.level0 {
            if !self.bytewise || (smallest.as_slice() <= key && key <= largest.as_slice()) {
                self.counts[*index] += 1;
            }
        }
        if !self.bytewise {
            if !self.level0.iter().any(|&(.., index)| index == own) {
                self.counts[own] += 1;
            }
            return;
        }
        for level in &self.deeper {
            // The first table whose largest key is >= the key, consulted if the key
            // is >= its smallest.
            let at = level.partition_point(|(largest, ..)| largest.as_slice() < key);
            if let Some((_, smallest, index)) = level.get(at) {
                if smallest.as_slice() <= key {
                    self.counts[*index] += 1;
                }
            }
        }
    }

    /// The share of absent Gets that consult table `index`.
    pub fn share(&self, index: usize) -> f64 {
        if self.keys == 0 {
            0.0
        } else {
            self.counts[index] as f64 / self.keys as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use leveldb_table::internal_key::InternalKey;

    fn table(level: usize, smallest: &str, largest: &str) -> LiveTable {
        let key = |user: &str| InternalKey([user.as_bytes(), &[1, 0, 0, 0, 0, 0, 0, 0]].concat());
        LiveTable {
            level,
            number: 0,
            size: 0,
            smallest: key(smallest),
            largest: key(largest),
        }
    }

    fn levels(tables: Vec<LiveTable>) -> [Vec<LiveTable>; NUM_LEVELS] {
        let mut levels: [Vec<LiveTable>; NUM_LEVELS] = Default::default();
        for table in tables {
            levels[table.level].push(table);
        }
        levels
    }

    #[test]
    fn a_level_0_table_whose_range_excludes_the_keys_is_never_consulted() {
        // Two level-0 tables over a and b, one far away over y..z; level 1 a..z.
        let levels = levels(vec![
            table(0, "a", "b"),
            table(0, "y", "z"),
            table(1, "a", "z"),
        ]);
        let mut counter = RangeCounter::new(&levels, true);
        for key in ["a", "ab", "b", "b"] {
            counter.count(key.as_bytes(), 0);
        }
        assert_eq!(counter.share(0), 1.0);
        assert_eq!(counter.share(1), 0.0);
        assert_eq!(counter.share(2), 1.0);
    }

    #[test]
    fn a_deeper_level_consults_the_one_table_whose_range_holds_the_key() {
        let levels = levels(vec![table(2, "a", "c"), table(2, "m", "p")]);
        let mut counter = RangeCounter::new(&levels, true);
        for key in ["b", "d", "n", "o"] {
            counter.count(key.as_bytes(), 0);
        }
        // "d" lies between the tables: none consulted.
        assert_eq!((counter.share(0), counter.share(1)), (0.25, 0.5));
    }

    #[test]
    fn without_bytewise_order_level_0_counts_every_key_and_deeper_ones_their_own() {
        let levels = levels(vec![table(0, "x", "y"), table(1, "a", "b")]);
        let mut counter = RangeCounter::new(&levels, false);
        counter.count(b"a", 1);
        assert_eq!((counter.share(0), counter.share(1)), (1.0, 1.0));
    }
}
