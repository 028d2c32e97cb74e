//! LevelDB's internal keys: a user key followed by an 8-byte tag, the sequence number
//! shifted left by 8 with the entry's type (1 a value, 0 a deletion) below it.

use std::cmp::Ordering;

/// The bytes of the internal-key tag (sequence number and type) after a user key.
pub const INTERNAL_KEY_TAG_LEN: usize = 8;
/// The largest sequence number (LevelDB's `kMaxSequenceNumber`): 56 bits.
pub const MAX_SEQUENCE: u64 = (1 << 56) - 1;
/// LevelDB's `kValueTypeForSeek`: the highest type, so that a lookup key sorts
/// before every entry of its user key up to its sequence number.
const VALUE_TYPE_FOR_SEEK: u64 = 1;

/// An internal key's bytes, as a MANIFEST stores a table's smallest and largest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InternalKey(pub Vec<u8>);

/// What an entry of a table is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    Deletion,
    Value,
}

/// An internal key taken apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParsedKey<'a> {
    pub user_key: &'a [u8],
    pub sequence: u64,
    pub kind: EntryKind,
}

/// Takes `key` apart; `None` when it is shorter than its tag or its type is neither
/// a value nor a deletion (LevelDB's `ParseInternalKey` fails there too).
pub fn parse_internal_key(key: &[u8]) -> Option<ParsedKey<'_>> {
    let user_len = key.len().checked_sub(INTERNAL_KEY_TAG_LEN)?;
    let tag = u64::from_le_bytes(key[user_len..].try_into().ok()?);
    let kind = match tag & 0xff {
        0 => EntryKind::Deletion,
        1 => EntryKind::Value,
        _ => return None,
    };
    Some(ParsedKey {
        user_key: &key[..user_len],
        sequence: tag >> 8,
        kind,
    })
}

impl InternalKey {
    /// The user key: the bytes before the tag (all of them, for a key too short to
    /// have one, as LevelDB's `ExtractUserKey` would misread it anyway).
    pub fn user_key(&self) -> &[u8] {
        &self.0[..self.0.len().saturating_sub(INTERNAL_KEY_TAG_LEN)]
    }
}

/// LevelDB's `InternalKeyComparator` over the bytewise comparator: user keys in
/// increasing order, then tags (sequence and type) in decreasing order, so that the
/// newest entry of a key comes first.
pub fn compare_internal_keys(a: &[u8], b: &[u8]) -> Ordering {
    fn split(k: &[u8]) -> (&[u8], u64) {
        let user_len = k.len().saturating_sub(INTERNAL_KEY_TAG_LEN);
        let tag = k
            .get(user_len..)
            .and_then(|t| t.try_into().ok())
            .map_or(0, u64::from_le_bytes);
        (&k[..user_len], tag)
    }
    let ((a_user, a_tag), (b_user, b_tag)) = (split(a), split(b));
    a_user.cmp(b_user).then(b_tag.cmp(&a_tag))
}

/// The internal key a Get of `user_key` at snapshot `sequence` seeks (LevelDB's
/// `LookupKey::internal_key`): at or before every entry of `user_key` whose sequence
/// is at most `sequence`, and after every entry of a smaller user key. With
/// [`MAX_SEQUENCE`] it sorts before every entry of `user_key`.
pub fn lookup_key(user_key: &[u8], sequence: u64) -> Vec<u8> {
    let mut key = Vec::with_capacity(user_key.len() + INTERNAL_KEY_TAG_LEN);
    key.extend_from_slice(user_key);
    key.extend_from_slice(&(sequence << 8 | VALUE_TYPE_FOR_SEEK).to_le_bytes());
    key
}
