//! Filter statistics of this process: how often filters were asked, and what they
//! answered, by format. Off until [`enable`]d; then each thread counts into a slot of
//! its own (plain loads and stores, no lock prefix, no cache line shared with another
//! counting thread), and [`snapshot`] adds the slots up. The format core counts
//! nothing: the operations of `ops` count here what they asked it.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use bloom::{Counts, Format, KeyAnswer};

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

/// One counter of one format. A query is counted once, under its answer and how it
/// was answered (by the filter's bits or by rule): queries, "absent", "may match" and
/// "by rule" are sums of these four, so a query costs one addition.
#[derive(Clone, Copy)]
enum Field {
    Absent,
    MayMatch,
    AbsentByRule,
    MayMatchByRule,
    FiltersBuilt,
    KeysAdded,
    FilterBytes,
}

const PER_FORMAT: usize = 7;

/// Index of `field` of `format` in a slot.
#[inline(always)]
fn index(format: Format, field: Field) -> usize {
    let base = match format {
        Format::Current => 0,
        Format::Legacy => PER_FORMAT,
    };
    base + field as usize
}

/// One thread's counters, alone on their cache lines. On x86-64 Linux, beside the
/// thread that owns them (its thread pointer; 0: free, and always for [`SHARED`]),
/// so that the owner is checked and counted on one line; written once, when a
/// thread claims the slot.
#[repr(align(128))]
struct Slot {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    owner: AtomicUsize,
    counters: [AtomicU64; 2 * PER_FORMAT],
}

impl Slot {
    const fn new() -> Self {
        Self {
            #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
            owner: AtomicUsize::new(0),
            counters: [const { AtomicU64::new(0) }; 2 * PER_FORMAT],
        }
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
            .map(|slot| slot.counters[i].load(Ordering::Relaxed))
            .fold(0u64, u64::wrapping_add)
    };
    let counts = |format| {
        let field = |field| sum(index(format, field));
        let (absent, may_match) = (field(Field::Absent), field(Field::MayMatch));
        let (absent_by_rule, may_match_by_rule) =
            (field(Field::AbsentByRule), field(Field::MayMatchByRule));
        let by_bits = absent.wrapping_add(may_match);
        let by_rule = absent_by_rule.wrapping_add(may_match_by_rule);
        Counts {
            queries: by_bits.wrapping_add(by_rule),
            absent: absent.wrapping_add(absent_by_rule),
            may_match: may_match.wrapping_add(may_match_by_rule),
            by_rule,
            filters_built: field(Field::FiltersBuilt),
            keys_added: field(Field::KeysAdded),
            filter_bytes: field(Field::FilterBytes),
        }
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
        for counter in &slot.counters {
            counter.store(0, Ordering::Relaxed);
        }
    }
}

/// This thread's counters: its slot in [`SLOT`], or [`SHARED`].
///
/// On x86-64 Linux a thread is known by its thread pointer (`%fs:0`, the address
/// of its thread control block, read in one instruction), the owner of at most one
/// slot: a thread-local variable of a shared library would cost a call to
/// `__tls_get_addr` per count. A thread that ends leaves its slot to the next thread
/// given the same control block, which goes on adding to its counts.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[inline(always)]
fn my_slot() -> Counters {
    let me = thread_pointer();
    let mut address = SLOT.as_ptr().wrapping_byte_add(home_offset(me));
    // An empty statement hands the slot's address back unchanged. It keeps the
    // address in one register, worked out once: the compiler would otherwise fold it
    // into the owner's load and work it out again for the count.
    #[expect(
        clippy::pointers_in_nomem_asm_block,
        reason = "the statement reads and writes no memory: it only hands the address on"
    )]
    // SAFETY: the statement is empty: no instruction, no effect.
    unsafe {
        std::arch::asm!("/* {} */", inout(reg) address, options(pure, nomem, nostack, preserves_flags));
    }
    // SAFETY: the address of an element of `SLOT` (see `home_offset`), a static, as
    // the statement left it.
    let home: &'static Slot = unsafe { &*address };
    if home.owner.load(Ordering::Relaxed) == me {
        return Counters::Own(home);
    }
    // Given the home slot's address, the one value this path keeps of the hash.
    claim(me, home)
}

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

/// Where the slot of thread `me` is looked for first, as a byte offset in [`SLOT`]:
/// a multiplicative hash of its low 32 bits, where threads' control blocks differ
/// (each at the top of its own stack, a few pages to megabytes from the next), its
/// top bits shifted down to where they count slots of 128 bytes (one shift, one
/// mask). Threads equal there look on from the same slot, and only cost [`claim`]
/// more steps.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[inline(always)]
fn home_offset(me: usize) -> usize {
    const SLOT_BITS: u32 = size_of::<Slot>().trailing_zeros();
    const INDEX_BITS: u32 = SLOTS.trailing_zeros();
    const { assert!(size_of::<Slot>() == 1 << SLOT_BITS && SLOTS == 1 << INDEX_BITS) };
    // The top bits of the low 32 of the product, which only `me`'s low 32 bits make.
    let hash = me.wrapping_mul(0x61c8_8647);
    hash >> (u32::BITS - INDEX_BITS - SLOT_BITS) & (SLOTS - 1) << SLOT_BITS
}

/// The slot `me` owns or claims now, looking on from its home slot; [`SHARED`] when
/// every slot is another thread's.
#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
#[cold]
fn claim(me: usize, home: &'static Slot) -> Counters {
    // Its index, from its address.
    let home = (home as *const Slot)
        .addr()
        .wrapping_sub(SLOT.as_ptr().addr())
        / size_of::<Slot>();
    for probe in 0..SLOTS {
        let i = (home + probe) % SLOTS;
        let owner = SLOT[i].owner.load(Ordering::Relaxed);
        if owner == me
            || (owner == 0
                && SLOT[i]
                    .owner
                    .compare_exchange(0, me, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok())
        {
            return Counters::Own(&SLOT[i]);
        }
    }
    Counters::Shared
}

/// This thread's slot in [`SLOT`], or [`SHARED`]: the next unclaimed one, kept in a
/// thread-local variable.
#[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
#[inline(always)]
fn my_slot() -> Counters {
    /// Slots handed out so far (may run past `SLOTS`).
    static CLAIMED: AtomicUsize = AtomicUsize::new(0);
    const UNCLAIMED: usize = usize::MAX;
    thread_local! {
        static MINE: std::cell::Cell<usize> = const { std::cell::Cell::new(UNCLAIMED) };
    }
    let slot = MINE.with(|mine| {
        if mine.get() == UNCLAIMED {
            mine.set(CLAIMED.fetch_add(1, Ordering::Relaxed));
        }
        mine.get()
    });
    SLOT.get(slot).map_or(Counters::Shared, Counters::Own)
}

/// The counters a thread adds to (from [`my_slot`]).
#[derive(Clone, Copy)]
enum Counters {
    /// Its own slot, which no other thread writes.
    Own(&'static Slot),
    /// [`SHARED`], every thread's that found no slot of its own.
    Shared,
}

impl Counters {
    /// Adds `n` to counter `i` (the caller checked [`enabled`]).
    #[inline(always)]
    fn add(self, i: usize, n: u64) {
        match self {
            // Only this thread writes its slot: a plain load and store.
            Self::Own(slot) => {
                let c = &slot.counters[i];
                c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
            }
            Self::Shared => {
                SHARED.counters[i].fetch_add(n, Ordering::Relaxed);
            }
        }
    }
}

/// The counter of a query of `format` answered `answer` (an "absent" or "may match"
/// by the bits, or either by rule), with no branch.
#[inline(always)]
fn answer_index(format: Format, answer: KeyAnswer) -> usize {
    const _: () = assert!(
        Field::MayMatch as usize == Field::Absent as usize + 1
            && Field::AbsentByRule as usize == Field::Absent as usize + 2
            && Field::MayMatchByRule as usize == Field::Absent as usize + 3
    );
    index(format, Field::Absent) + usize::from(answer.may_match) + 2 * usize::from(answer.by_rule)
}

/// Counts one query of `format`, answered `answer`: one addition (the caller checked
/// [`enabled`]).
#[inline(always)]
pub(crate) fn record_query(format: Format, answer: KeyAnswer) {
    my_slot().add(answer_index(format, answer), 1);
}

/// Counts a batch of `queries` of `format` on one filter, `absent` of them answered
/// "absent", all by rule if `by_rule`.
#[inline(always)]
pub(crate) fn record_batch(format: Format, queries: usize, absent: usize, by_rule: bool) {
    if enabled() && queries > 0 {
        let slot = my_slot();
        let answered = |may_match| answer_index(format, KeyAnswer { may_match, by_rule });
        slot.add(answered(false), absent as u64);
        slot.add(answered(true), (queries - absent) as u64);
    }
}

/// Counts one filter of `format` built for `keys` keys, `bytes` long.
#[inline(always)]
pub(crate) fn record_build(format: Format, keys: usize, bytes: usize) {
    if enabled() {
        let slot = my_slot();
        slot.add(index(format, Field::FiltersBuilt), 1);
        slot.add(index(format, Field::KeysAdded), keys as u64);
        slot.add(index(format, Field::FilterBytes), bytes as u64);
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
