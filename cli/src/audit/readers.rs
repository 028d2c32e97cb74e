//! Who reads a filter block's name, and with which hash reading: the readers whose
//! misses fail the audit. A database does not say which programs read it, so every
//! known reader of a name counts, unless the user names the readers (`--reader`).

use leveldb_bloom::hash::TailBytes;
use leveldb_bloom::{LEGACY_POLICY_NAME, POLICY_NAME};
use leveldb_table::Family;

use crate::audit::dialect::ROCKSDB_BLOCK_BASED;
use crate::command_line::Reader;

/// Every reader the audit knows, in `--reader`'s order.
const KNOWN: [Reader; 6] = [
    Reader::Leveldb,
    Reader::Goleveldb,
    Reader::Hyperleveldb,
    Reader::OldLeveldbX86,
    Reader::OldLeveldbArm,
    Reader::Rocksdb,
];

impl Reader {
    /// The hash reading with which this reader reads filters named `name`; `None`
    /// when it ignores them (another name: slower for it, never wrong).
    fn reading_of(self, name: &str) -> Option<TailBytes> {
        match (self, name) {
            (Self::Leveldb, POLICY_NAME) => Some(TailBytes::Unsigned),
            (Self::Goleveldb | Self::OldLeveldbArm, LEGACY_POLICY_NAME) => {
                Some(TailBytes::Unsigned)
            }
            (Self::Hyperleveldb | Self::OldLeveldbX86, LEGACY_POLICY_NAME) => {
                Some(TailBytes::Signed)
            }
            (Self::Rocksdb, ROCKSDB_BLOCK_BASED) => Some(TailBytes::Signed),
            _ => None,
        }
    }
}

/// The hash readings whose misses count for one filter name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Readings {
    pub unsigned: bool,
    pub signed: bool,
}

impl Readings {
    /// The readings of the readers of filters named `name` in a table of `family`:
    /// those of `named` (every known reader when none is named). A Basho table's
    /// readers are Basho's own, whoever is named: its old name is the signed hash
    /// (its `leveldb.BuiltinBloomFilter2` is bloom2, checked apart).
    pub fn of(name: &str, family: Family, named: &[Reader]) -> Self {
        if family == Family::Basho {
            return match name {
                LEGACY_POLICY_NAME => Self::only(TailBytes::Signed),
                POLICY_NAME => Self::only(TailBytes::Unsigned),
                _ => Self::default(),
            };
        }
        let readers = if named.is_empty() { &KNOWN[..] } else { named };
        readers
            .iter()
            .filter_map(|reader| reader.reading_of(name))
            .fold(Self::default(), |readings, reading| {
                readings.with(Self::only(reading))
            })
    }

    fn only(reading: TailBytes) -> Self {
        Self {
            unsigned: reading == TailBytes::Unsigned,
            signed: reading == TailBytes::Signed,
        }
    }

    fn with(self, other: Self) -> Self {
        Self {
            unsigned: self.unsigned || other.unsigned,
            signed: self.signed || other.signed,
        }
    }

    /// Whether some reader reads the name.
    pub fn any(self) -> bool {
        self.unsigned || self.signed
    }

    /// Whether a key is missed by a counted reader, given whether the unsigned and
    /// the signed reading find it.
    pub fn miss(self, unsigned_found: bool, signed_found: bool) -> bool {
        (self.unsigned && !unsigned_found) || (self.signed && !signed_found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: Readings = Readings {
        unsigned: true,
        signed: true,
    };

    #[test]
    fn every_known_reader_of_a_name_counts_unless_readers_are_named() {
        let of = |name, named: &[Reader]| Readings::of(name, Family::Leveldb, named);
        assert_eq!(of(POLICY_NAME, &[]), Readings::only(TailBytes::Unsigned));
        // goleveldb and LevelDB < 1.18 on ARM unsigned, HyperLevelDB and x86 signed.
        assert_eq!(of(LEGACY_POLICY_NAME, &[]), BOTH);
        assert_eq!(
            of(LEGACY_POLICY_NAME, &[Reader::Goleveldb]),
            Readings::only(TailBytes::Unsigned)
        );
        assert_eq!(
            of(LEGACY_POLICY_NAME, &[Reader::Hyperleveldb]),
            Readings::only(TailBytes::Signed)
        );
        assert_eq!(
            of(ROCKSDB_BLOCK_BASED, &[]),
            Readings::only(TailBytes::Signed)
        );
        // A reader of another name ignores the filters: it misses nothing.
        assert!(!of(POLICY_NAME, &[Reader::Goleveldb]).any());
        assert!(!of("my.own.filter", &[]).any());
    }

    #[test]
    fn basho_tables_are_read_by_basho_whoever_is_named() {
        let signed = Readings::only(TailBytes::Signed);
        assert_eq!(
            Readings::of(LEGACY_POLICY_NAME, Family::Basho, &[Reader::Goleveldb]),
            signed
        );
    }

    #[test]
    fn a_key_is_missed_when_a_counted_reading_misses_it() {
        assert!(BOTH.miss(true, false) && BOTH.miss(false, true));
        assert!(!BOTH.miss(true, true));
        assert!(!Readings::only(TailBytes::Unsigned).miss(true, false));
    }
}
