//! Filter statistics of this process: how often filters were asked, and what they
//! answered, by format. Off until [`enable`]d; then each thread counts into a slot of
//! its own (plain loads and stores, no lock prefix, no cache line shared with another
//! counting thread), and [`snapshot`] adds the slots up. The format core counts
//! nothing: the operations of `ops` count here what they asked it.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bloom::{Counts, Format};

/// The counts of both formats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Stats {
    /// `leveldb.BuiltinBloomFilter2`, LevelDB ≥ 1.18's.
    pub(crate) current: Counts,
    /// `leveldb.BuiltinBloomFilter`, goleveldb's and LevelDB < 1.18's.
    pub(crate) legacy: Counts,
}

impl Stats {
    /// Both formats' counts added up.
    pub(crate) fn total(&self) -> Counts {
        self.current + self.legacy
    }
}

/// One counter of one format. Queries are not counted: they are the answers
/// "absent" and "may match" added up, so a query costs one addition.
#[derive(Clone, Copy)]
enum Field {
    Absent,
    MayMatch,
    ByRule,
    FiltersBuilt,
    KeysAdded,
    FilterBytes,
}

const PER_FORMAT: usize = 6;

/// Index of `field` of `format` in a slot.
#[inline(always)]
fn index(format: Format, field: Field) -> usize {
    let base = match format {
        Format::Current => 0,
        Format::Legacy => PER_FORMAT,
    };
    base + field as usize
}

/// One thread's counters, alone on their cache lines.
#[repr(align(128))]
struct Slot([AtomicU64; 2 * PER_FORMAT]);

impl Slot {
    const fn new() -> Self {
        Self([const { AtomicU64::new(0) }; 2 * PER_FORMAT])
    }
}

/// Threads that get a slot of their own, each for the rest of the process (a thread
/// keeps no destructor to give it back); later threads share [`SHARED`].
const SLOTS: usize = 256;
static SLOT: [Slot; SLOTS] = [const { Slot::new() }; SLOTS];
/// The counters of threads that found every slot taken: atomic adds.
static SHARED: Slot = Slot::new();

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Starts counting (in every thread).
pub(crate) fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// Stops counting; the counts so far are kept.
pub(crate) fn disable() {
    ENABLED.store(false, Ordering::Relaxed);
}

/// Whether counting is on.
#[inline(always)]
pub(crate) fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// The counts so far, all threads' added up. A thread counting at that moment may
/// or may not have its latest query included.
pub(crate) fn snapshot() -> Stats {
    let sum = |i: usize| -> u64 {
        SLOT.iter()
            .chain([&SHARED])
            .map(|slot| slot.0[i].load(Ordering::Relaxed))
            .fold(0u64, u64::wrapping_add)
    };
    let counts = |format| Counts {
        queries: sum(index(format, Field::Absent))
            .wrapping_add(sum(index(format, Field::MayMatch))),
        absent: sum(index(format, Field::Absent)),
        may_match: sum(index(format, Field::MayMatch)),
        by_rule: sum(index(format, Field::ByRule)),
        filters_built: sum(index(format, Field::FiltersBuilt)),
        keys_added: sum(index(format, Field::KeysAdded)),
        filter_bytes: sum(index(format, Field::FilterBytes)),
    };
    Stats {
        current: counts(Format::Current),
        legacy: counts(Format::Legacy),
    }
}

/// Sets every count to 0. Meant for a quiet moment: a thread counting meanwhile may
/// write back a count it read before the reset.
pub(crate) fn reset() {
    for slot in SLOT.iter().chain([&SHARED]) {
        for counter in &slot.0 {
            counter.store(0, Ordering::Relaxed);
        }
    }
}

/// This thread's slot in [`SLOT`], or `SLOTS` (past the end: [`SHARED`]).
///
/// On x86-64 Linux a thread is known by its thread pointer (`%fs:0`, the address
/// of its thread control block, read in one instruction), the owner of at most one
/// slot: a thread-local variable of a shared library would cost a call to
/// `__tls_get_addr` per count. A thread that ends leaves its slot to the next thread
/// given the same control block, which goes on adding to its counts.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[inline(always)]
fn my_slot() -> usize {
    let me = thread_pointer();
    let home = home_slot(me);
    if OWNER[home].load(Ordering::Relaxed) == me {
        return home;
    }
    claim(me, home)
}

/// Which thread owns each slot (its thread pointer; 0: free). Written once per
/// slot, when a thread claims it; read by that thread on every count.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
static OWNER: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[inline(always)]
fn thread_pointer() -> usize {
    let pointer: usize;
    // SAFETY: on x86-64 Linux (glibc and musl alike) %fs holds the thread's control
    // block, whose first word points at itself: a load from memory every thread
    // owns for its lifetime, with no other effect.
    unsafe {
        std::arch::asm!(
            "mov {}, qword ptr fs:[0]",
            out(reg) pointer,
            options(nostack, readonly, preserves_flags, pure)
        );
    }
    pointer
}

/// Where the slot of thread `me` is looked for first (a multiplicative hash).
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[inline(always)]
fn home_slot(me: usize) -> usize {
    (me.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (usize::BITS - SLOTS.trailing_zeros())) % SLOTS
}

/// The slot `me` owns or claims now, looking on from `home`; `SLOTS` when every
/// slot is another thread's.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[cold]
fn claim(me: usize, home: usize) -> usize {
    for probe in 0..SLOTS {
        let i = (home + probe) % SLOTS;
        let owner = OWNER[i].load(Ordering::Relaxed);
        if owner == me
            || (owner == 0
                && OWNER[i]
                    .compare_exchange(0, me, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok())
        {
            return i;
        }
    }
    SLOTS
}

/// This thread's slot in [`SLOT`], or `SLOTS` (past the end: [`SHARED`]): the next
/// unclaimed one, kept in a thread-local variable.
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
#[inline(always)]
fn my_slot() -> usize {
    /// Slots handed out so far (may run past `SLOTS`).
    static CLAIMED: AtomicUsize = AtomicUsize::new(0);
    const UNCLAIMED: usize = usize::MAX;
    thread_local! {
        static MINE: std::cell::Cell<usize> = const { std::cell::Cell::new(UNCLAIMED) };
    }
    MINE.with(|mine| {
        if mine.get() == UNCLAIMED {
            mine.set(CLAIMED.fetch_add(1, Ordering::Relaxed).min(SLOTS));
        }
        mine.get()
    })
}

/// Adds `n` to counter `i` of `slot` (from [`my_slot`]; the caller checked
/// [`enabled`]).
#[inline(always)]
fn add(slot: usize, i: usize, n: u64) {
    match SLOT.get(slot) {
        // Only this thread writes its slot: a plain load and store.
        Some(slot) => {
            let c = &slot.0[i];
            c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
        }
        None => {
            SHARED.0[i].fetch_add(n, Ordering::Relaxed);
        }
    }
}

/// One query being counted, in this thread's counters of its format: started
/// (its by-rule answer counted) before the question, so that only the counters'
/// place is kept across it; the caller checked [`enabled`].
pub(crate) struct Query {
    slot: usize,
    absent: usize,
}

impl Query {
    /// Starts counting a query of `format`, answered by rule (`by_rule`) or by bits.
    #[inline(always)]
    pub(crate) fn start(format: Format, by_rule: bool) -> Self {
        let slot = my_slot();
        add(slot, index(format, Field::ByRule), u64::from(by_rule));
        Self {
            slot,
            absent: index(format, Field::Absent),
        }
    }

    /// Counts its answer: "may match" (`answer`) or "absent". No branch.
    #[inline(always)]
    pub(crate) fn answered(self, answer: bool) {
        const _: () = assert!(Field::MayMatch as usize == Field::Absent as usize + 1);
        add(self.slot, self.absent + usize::from(answer), 1);
    }
}

/// Counts a batch of `queries` of `format`, `absent` of them answered "absent",
/// `by_rule` of them by rule.
#[inline(always)]
pub(crate) fn record_batch(format: Format, queries: usize, absent: usize, by_rule: bool) {
    if enabled() && queries > 0 {
        let slot = my_slot();
        add(slot, index(format, Field::Absent), absent as u64);
        add(
            slot,
            index(format, Field::MayMatch),
            (queries - absent) as u64,
        );
        if by_rule {
            add(slot, index(format, Field::ByRule), queries as u64);
        }
    }
}

/// Counts one filter of `format` built for `keys` keys, `bytes` long.
#[inline(always)]
pub(crate) fn record_build(format: Format, keys: usize, bytes: usize) {
    if enabled() {
        let slot = my_slot();
        add(slot, index(format, Field::FiltersBuilt), 1);
        add(slot, index(format, Field::KeysAdded), keys as u64);
        add(slot, index(format, Field::FilterBytes), bytes as u64);
    }
}

/// Databases opened through LevelDB's open functions with no filter policy (seen by
/// `libleveldb_bloom_default_bits.so`, which tells through
/// `leveldb_bloom_stats_record_default_open`), how many of them
/// got the variable's policy, and the variable's bits per key (0: unset). Not reset
/// in a forked child: a child opens its own databases, and these only add a note to
/// the summary.
static OPENED_WITHOUT_POLICY: AtomicU64 = AtomicU64::new(0);
static GIVEN_DEFAULT_POLICY: AtomicU64 = AtomicU64::new(0);
static DEFAULT_BITS: AtomicU64 = AtomicU64::new(0);

/// Counts a database opened with no filter policy while the variable was at
/// `bits`, and whether it got the default policy.
pub(crate) fn record_open_without_policy(bits: u32, given_default: bool) {
    DEFAULT_BITS.store(bits.into(), Ordering::Relaxed);
    OPENED_WITHOUT_POLICY.fetch_add(1, Ordering::Relaxed);
    if given_default {
        GIVEN_DEFAULT_POLICY.fetch_add(1, Ordering::Relaxed);
    }
}

/// Databases opened with no filter policy so far, how many got the default, and
/// the variable's bits per key.
pub(crate) fn opens_without_policy() -> (u64, u64, u64) {
    (
        OPENED_WITHOUT_POLICY.load(Ordering::Relaxed),
        GIVEN_DEFAULT_POLICY.load(Ordering::Relaxed),
        DEFAULT_BITS.load(Ordering::Relaxed),
    )
}
