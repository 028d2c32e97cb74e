//! The exported functions that turn filter statistics on and read them.

use std::ffi::c_int;
use std::mem::{offset_of, size_of};

use super::super::guard;
use super::super::stats;
use bloom::Counts;

/// Filter statistics of this process, as `leveldb_bloom_stats` fills them in.
///
/// Set `size` to `sizeof(leveldb_bloom_stats_t)` before the call: the library writes
/// only the fields that fit in `size` bytes, so a program built against this header
/// keeps working with a later library that has more fields.
///
/// A LevelDB `Get` asks one filter per table it looks in (a table holds one filter
/// per 2 KiB of its data); every "absent" answer is a data-block read saved.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct leveldb_bloom_stats_t {
    /// `sizeof(leveldb_bloom_stats_t)` as the caller knows it; set by the caller.
    pub size: usize,
    /// Keys asked about, one per one-key query and one per key of a batch.
    pub queries: u64,
    /// Queries answered "absent": data-block reads saved.
    pub absent: u64,
    /// Queries answered "may match": present keys and false positives.
    pub may_match: u64,
    /// Queries answered by rule rather than by the filter's bits (a filter shorter
    /// than 2 bytes: absent; k of 0 or above 30: may match); included above.
    pub by_rule: u64,
    /// Filters built.
    pub filters_built: u64,
    /// Keys added to the filters built, duplicates included.
    pub keys_added: u64,
    /// Bytes of the filters built, k byte included.
    pub filter_bytes: u64,
    /// Of `queries`: those of legacy-format policies ("leveldb.BuiltinBloomFilter").
    pub legacy_queries: u64,
    /// Of `absent`: those of legacy-format policies.
    pub legacy_absent: u64,
    /// Of `filters_built`: those of legacy-format policies.
    pub legacy_filters_built: u64,
}

impl leveldb_bloom_stats_t {
    fn of(all: Counts, legacy: Counts) -> Self {
        Self {
            size: size_of::<Self>(),
            queries: all.queries,
            absent: all.absent,
            may_match: all.may_match,
            by_rule: all.by_rule,
            filters_built: all.filters_built,
            keys_added: all.keys_added,
            filter_bytes: all.filter_bytes,
            legacy_queries: legacy.queries,
            legacy_absent: legacy.absent,
            legacy_filters_built: legacy.filters_built,
        }
    }
}

/// Turns counting on (`enable` non-zero) or off (0) for the whole process. Off
/// until called, unless the environment variable `LEVELDB_BLOOM_STATS` was set, and
/// its destination opened, when the library was loaded (ignored in a setuid or
/// setgid process); then a forked child also starts its counts from zero. Counts are
/// kept while off.
#[no_mangle]
pub extern "C" fn leveldb_bloom_stats_enable(enable: c_int) {
    guard(
        || (),
        || match enable {
            0 => stats::disable(),
            _ => stats::enable(),
        },
    )
}

/// Fills `*out` with the counts so far, all threads' added up, writing only the
/// fields that fit in `out->size` bytes (`size` itself is left as it is). Returns 0,
/// or -1 when `out` is NULL or `out->size` holds no field beyond `size`.
///
/// # Safety
/// `out` must be NULL or point to `out->size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn leveldb_bloom_stats(out: *mut leveldb_bloom_stats_t) -> c_int {
    guard(
        || -1,
        || {
            if out.is_null() {
                return -1;
            }
            // SAFETY: non-NULL, and at least its `size` field is readable per the
            // caller (the field is first, so any stats struct has it).
            let caller_size = unsafe { out.cast::<usize>().read_unaligned() };
            let first = offset_of!(leveldb_bloom_stats_t, queries);
            let end = caller_size.min(size_of::<leveldb_bloom_stats_t>());
            // Whole fields only.
            let end = first + (end.saturating_sub(first) / size_of::<u64>()) * size_of::<u64>();
            if end <= first {
                return -1;
            }
            let now = stats::snapshot();
            let filled = leveldb_bloom_stats_t::of(now.total(), now.legacy);
            // SAFETY: `end` is within both structs, and the caller's has `size` bytes
            // writable; the bytes copied are whole u64 fields after `size`.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (&filled as *const leveldb_bloom_stats_t)
                        .cast::<u8>()
                        .add(first),
                    out.cast::<u8>().add(first),
                    end - first,
                )
            };
            0
        },
    )
}

/// Sets every count to 0. Best called while no other thread is querying: a query
/// counted at that moment may survive the reset.
#[no_mangle]
pub extern "C" fn leveldb_bloom_stats_reset() {
    guard(|| (), stats::reset)
}

/// Counts a database opened with no filter policy while `LEVELDB_BLOOM_DEFAULT_BITS`
/// was `bits_per_key`, and whether it was given (`given` non-zero) that library's
/// policy: for `libleveldb_bloom_default_bits.so`, which sees the opens, so that the
/// statistics summary can say so. Programs have no use for it.
#[no_mangle]
pub extern "C" fn leveldb_bloom_stats_record_default_open(bits_per_key: c_int, given: c_int) {
    guard(
        || (),
        || {
            let bits = u32::try_from(bits_per_key).unwrap_or(0);
            stats::record_open_without_policy(bits, given != 0)
        },
    );
}
