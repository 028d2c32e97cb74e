//! `LEVELDB_BLOOM_DEFAULT_BITS=N`: a bloom policy for the databases a program opens
//! with none. Most LevelDB programs set no filter policy (it is the default of
//! LevelDB's `Options`, of its C API and of plyvel), and then LevelDB neither writes
//! nor reads filters: the swap has nothing to swap. With the variable set (1 to 100;
//! read once, when the library starts; ignored in a secure-execution process, as
//! every variable of this library), every database opened through LevelDB's
//! `leveldb_open` or `leveldb::DB::Open` (either `std::string` ABI) with no filter
//! policy gets this library's bloom policy at N bits per key: one policy object per
//! LevelDB in the process, kept until exit.
//!
//! The open functions are this library's (`open.cc`, linked into the shared library
//! only): each finds the definition its caller would have reached without this
//! library ([`real`]) and calls it with the same arguments, so that without the
//! variable a program runs exactly as stock. Where `Options::filter_policy` lies is
//! learned from that LevelDB's own C API ([`layout`]); a LevelDB that does not show
//! it gets nothing, and the library says so once on stderr.
//!
//! The policy is set in the caller's options for the duration of the real open
//! (LevelDB copies its options into the database it opens) and taken out again.
//! Another thread opening a database with the same options object at that moment may
//! open it with or without the policy; a thread setting the options' policy then
//! keeps its own (the policy is only set and taken out where it is this library's).

mod layout;
mod real;

use std::cell::Cell;
use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering};

use super::dropin::new_policy;
use super::environment;
use super::stats;
use super::stats_report::say;
use bloom::BloomFilterPolicy;

/// The environment variable, read once when the library starts.
const VARIABLE: &CStr = environment::DEFAULT_BITS;

/// Its value, or 0 when it is unset, ignored or empty.
static BITS: AtomicU32 = AtomicU32::new(0);

/// The open functions this library defines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OpenFunction {
    /// `leveldb_open` of the C API.
    C,
    /// `leveldb::DB::Open` of the new (`__cxx11`) `std::string` ABI.
    Cxx11,
    /// `leveldb::DB::Open` of the old `std::string` ABI.
    Cxx98,
}

impl OpenFunction {
    fn name(self) -> &'static CStr {
        match self {
            Self::C => c"leveldb_open",
            Self::Cxx11 => c"_ZN7leveldb2DB4OpenERKNS_7OptionsERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEPPS0_",
            Self::Cxx98 => c"_ZN7leveldb2DB4OpenERKNS_7OptionsERKSsPPS0_",
        }
    }
}

/// How to make one call of an open function: the definition to call, and the
/// policy set in the options until [`Open::finish`].
pub(crate) struct Open {
    /// The definition the caller would have reached without this library.
    pub(crate) real: *const c_void,
    /// The options' filter policy field and the policy set there, if one was.
    lent: Option<(*const AtomicPtr<c_void>, *mut c_void)>,
    /// Whether this is the thread's outermost open function.
    outermost: bool,
    function: OpenFunction,
    /// What this thread's outer call of the same function forwards to, if any.
    outer: usize,
}

thread_local! {
    /// Whether this thread is inside an open function of this library: LevelDB's
    /// `leveldb_open` calls `DB::Open`, which then only forwards.
    static OPENING: Cell<bool> = const { Cell::new(false) };
    /// The definition this thread's call of each open function is forwarding to,
    /// which a call of the same function inside it must not pick again (a shim
    /// ahead of this library that forwards back here would loop).
    static FORWARDING: Cell<[usize; 3]> = const { Cell::new([0; 3]) };
}

impl Open {
    /// Prepares a call of `function` made from `caller` (the address it returns to)
    /// with `options` (a `leveldb_options_t*` or a `const leveldb::Options*`): `None`
    /// when no definition of it is found.
    ///
    /// # Safety
    /// `options` must be NULL or what the caller passes LevelDB's open function: a
    /// live options object of the LevelDB found.
    pub(crate) unsafe fn prepare(
        function: OpenFunction,
        options: *const c_void,
        caller: *const c_void,
    ) -> Option<Self> {
        let outer = FORWARDING.with(Cell::get)[function as usize];
        let real = real::definition(function.name(), caller, outer as *const c_void)?;
        FORWARDING.with(|forwarding| {
            let mut now = forwarding.get();
            now[function as usize] = real as usize;
            forwarding.set(now);
        });
        let bits = BITS.load(Ordering::Relaxed);
        let outermost = !OPENING.with(|opening| opening.replace(true));
        let forward = Self {
            real,
            lent: None,
            outermost,
            function,
            outer,
        };
        if !outermost || options.is_null() || (bits == 0 && !stats::enabled()) {
            return Some(forward);
        }
        let Some(offset) = layout::filter_policy_offset(real) else {
            if bits != 0 {
                say_once_unproven(real);
            }
            return Some(forward);
        };
        // SAFETY: the LevelDB that reads these options keeps its filter policy, a
        // pointer, at `offset` (proven by `layout`), aligned for one: the options
        // object holds pointers and `offset` is a multiple of their size.
        let field = unsafe { &*options.cast::<u8>().add(offset).cast::<AtomicPtr<c_void>>() };
        if !field.load(Ordering::Acquire).is_null() {
            return Some(forward);
        }
        let policy = (bits != 0).then(|| policy_for(bits, real)).flatten();
        let lent = policy.and_then(|policy| {
            let set = field.compare_exchange(
                ptr::null_mut(),
                policy,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
            set.is_ok().then_some((ptr::from_ref(field), policy))
        });
        stats::record_open_without_policy(bits, lent.is_some());
        let mut open = forward;
        open.lent = lent;
        Some(open)
    }

    /// After the real open: takes the policy out of the options again, unless the
    /// program set one of its own meanwhile.
    pub(crate) fn finish(self) {
        if let Some((field, policy)) = self.lent {
            // SAFETY: the caller's options, which live at least until its call of the
            // open function returns, after the real one did.
            let field = unsafe { &*field };
            let _ = field.compare_exchange(
                policy,
                ptr::null_mut(),
                Ordering::AcqRel,
                Ordering::Acquire,
            );
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        // The outermost open function of this thread is done (a nested one only
        // forwarded, and leaves the flag to it).
        if self.outermost {
            OPENING.with(|opening| opening.set(false));
        }
        FORWARDING.with(|forwarding| {
            let mut now = forwarding.get();
            now[self.function as usize] = self.outer;
            forwarding.set(now);
        });
    }
}

/// The policy at `bits` bits per key for the LevelDB that `real` lies in: made
/// once per LevelDB (one whose `std::string` ABI is unproven gets what stock would:
/// see `dropin::new_policy`) and kept for the whole process; NULL when memory runs
/// out.
fn policy_for(bits: u32, real: *const c_void) -> Option<*mut c_void> {
    /// LevelDBs remembered; a process with more makes a policy per open for them.
    const KNOWN: usize = 8;
    static LEVELDB: [AtomicUsize; KNOWN] = [const { AtomicUsize::new(0) }; KNOWN];
    static POLICY: [AtomicPtr<c_void>; KNOWN] = [const { AtomicPtr::new(ptr::null_mut()) }; KNOWN];
    let leveldb = real::object_base(real)?;
    for (slot, policy) in LEVELDB.iter().zip(&POLICY) {
        let known = policy.load(Ordering::Acquire);
        if slot.load(Ordering::Acquire) == leveldb && !known.is_null() {
            return Some(known);
        }
    }
    let made = new_policy(BloomFilterPolicy::new(bits)).cast::<c_void>();
    if made.is_null() {
        return None;
    }
    // A slot claimed by another thread for the same LevelDB keeps that thread's
    // policy; this one lives on, as every policy made here does.
    for (slot, policy) in LEVELDB.iter().zip(&POLICY) {
        let claimed = slot.compare_exchange(0, leveldb, Ordering::AcqRel, Ordering::Acquire);
        if claimed.is_ok() {
            policy.store(made, Ordering::Release);
            break;
        }
    }
    Some(made)
}

/// Says once per process that a LevelDB does not show where its options keep the
/// filter policy, so its databases run as stock.
fn say_once_unproven(real: *const c_void) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if SAID.swap(true, Ordering::Relaxed) {
        return;
    }
    say(&format!(
        "leveldb-bloom: {}: the LevelDB in {} does not show where its options keep the \
         filter policy (it has no C API): the databases it opens without a policy of their \
         own stay without one\n",
        VARIABLE.to_string_lossy(),
        real::object_name(real)
    ));
}

/// Reads the variable: a whole number of bits per key from 1 to 100; anything else
/// is ignored, saying so on stderr. The library's ELF constructor.
extern "C" fn read_variable() {
    super::guard(
        || (),
        || {
            // SAFETY: the library's ELF constructor, as `variable` requires.
            let Some(value) = (unsafe { environment::variable(VARIABLE) }) else {
                return;
            };
            let value = value.to_string_lossy();
            match parse_bits(&value) {
                Ok(bits) if cfg!(default_bits_open) => BITS.store(bits, Ordering::Relaxed),
                Ok(_) => say(&format!(
                    "leveldb-bloom: {}: this build of the library cannot see databases \
                     opened (it was linked without its open functions): ignored\n",
                    VARIABLE.to_string_lossy()
                )),
                Err(None) => {}
                Err(Some(why)) => say(&format!(
                    "leveldb-bloom: {}={value:?}: {why}: ignored\n",
                    VARIABLE.to_string_lossy()
                )),
            }
        },
    )
}

#[used]
#[link_section = ".init_array"]
static READ_VARIABLE: extern "C" fn() = read_variable;

/// The variable's value as bits per key; `Err(None)` for an empty value (as unset),
/// else why it is refused.
fn parse_bits(value: &str) -> Result<u32, Option<&'static str>> {
    if value.is_empty() {
        return Err(None);
    }
    match value.parse::<u32>() {
        Ok(bits @ 1..=100) if value.bytes().all(|b| b.is_ascii_digit()) => Ok(bits),
        _ => Err(Some("not a whole number of bits per key from 1 to 100")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_bits;

    #[test]
    fn bits_from_1_to_100_and_nothing_else() {
        assert_eq!(parse_bits("10"), Ok(10));
        assert_eq!(parse_bits("1"), Ok(1));
        assert_eq!(parse_bits("100"), Ok(100));
        assert_eq!(parse_bits(""), Err(None));
        for refused in [
            "0",
            "101",
            "-5",
            "+5",
            " 10",
            "10 ",
            "ten",
            "1e1",
            "99999999999",
        ] {
            assert!(
                parse_bits(refused).is_err_and(|why| why.is_some()),
                "{refused}"
            );
        }
    }
}
