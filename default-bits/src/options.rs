//! A copy of a caller's `Options` given a filter policy, laid out as the LevelDB
//! that reads it lays its own out, proven from that LevelDB's own code, never
//! assumed (1.18 has no `max_file_size`, upstream after 1.23 adds
//! `zstd_compression_level`, Mojang's fork holds 256 compressor pointers):
//!
//! - where `filter_policy` lies: its C API's `leveldb_options_set_filter_policy`
//!   writes exactly one pointer-aligned word of a zeroed scratch object, and on an
//!   object its `leveldb_options_create` made that word is NULL, then what was set,
//!   then NULL again (`leveldb_options_t` is `struct { Options rep; }`);
//! - how large `Options` is: its constructor (`leveldb::Options::Options()`,
//!   exported) writes every field of a scratch object filled with a pattern, twice
//!   with two patterns: the last byte either changes ends the fields.
//!
//! `Options` holds plain values and pointers (its destructor is the compiler's), so
//! a copy of its bytes is an `Options`; LevelDB copies the options into the database
//! it opens, so the copy lives only for the call. A LevelDB without its C API (built
//! into Node's `classic-level`) shows no layout: its databases stay as stock, said
//! once.

use std::ffi::c_void;
use std::mem::size_of;
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};

use super::known::Known;
use super::policy;
use super::variable;

/// Room for the scratch options: 8 KiB, past every known layout (Mojang's
/// compressor arrays put its filter policy beyond 2 KiB).
const SCRATCH_WORDS: usize = 1024;
const WORD: usize = size_of::<usize>();

/// Where a LevelDB's `Options` keeps its filter policy, and how many bytes it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Layout {
    policy_at: usize,
    size: usize,
}

impl Layout {
    /// One word for [`Known`]: 0 is "unknown", so a proven absence is `usize::MAX`.
    fn to_word(layout: Option<Self>) -> usize {
        layout.map_or(usize::MAX, |layout| layout.size << 16 | layout.policy_at)
    }

    fn from_word(word: usize) -> Option<Self> {
        (word != usize::MAX).then_some(Self {
            policy_at: word & 0xffff,
            size: word >> 16,
        })
    }
}

/// A copy of a caller's options, with a filter policy set: what LevelDB reads
/// instead of the caller's own object.
pub(crate) struct Given(Vec<usize>);

impl Given {
    pub(crate) fn as_ptr(&self) -> *const c_void {
        self.0.as_ptr().cast()
    }
}

/// The copy of `options` LevelDB's open function at `real` should read instead, if
/// any: when the variable is set, the options set no filter policy, and that
/// LevelDB shows its options' layout and gives a policy. An open without a policy
/// is told to the statistics, variable or not.
///
/// # Safety
/// `options` is NULL or the caller's live options object of the LevelDB at `real`
/// (a `leveldb_options_t` or a `leveldb::Options`).
pub(crate) unsafe fn given(options: *const c_void, real: usize) -> Option<Given> {
    if options.is_null() {
        return None;
    }
    let bits = variable::bits();
    let Some(layout) = layout_of(real) else {
        if bits.is_some() {
            say_once_unproven(real);
        }
        return None;
    };
    // SAFETY: the caller's options, of `layout.size` bytes (proven), read as words:
    // the object holds pointers, so it is aligned for them.
    let field = unsafe {
        options
            .cast::<u8>()
            .add(layout.policy_at)
            .cast::<usize>()
            .read()
    };
    if field != 0 {
        return None;
    }
    let Some(bits) = bits else {
        policy::record_open(0, real, false);
        return None;
    };
    let made = policy::for_leveldb(bits, real);
    policy::record_open(bits, real, made.is_some());
    let mut copy = vec![0usize; layout.size.div_ceil(WORD)];
    // SAFETY: `layout.size` bytes of the caller's options into a copy that large.
    unsafe {
        ptr::copy_nonoverlapping(options.cast::<u8>(), copy.as_mut_ptr().cast(), layout.size)
    };
    copy[layout.policy_at / WORD] = made? as usize;
    Some(Given(copy))
}

/// The layout of the options of the LevelDB whose code lies at `real`.
fn layout_of(real: usize) -> Option<Layout> {
    static LAYOUTS: Known = Known::new();
    let id = loader::with_object_at(real, |object| object.id())?;
    Layout::from_word(LAYOUTS.get_or(id, || Layout::to_word(prove_layout(real))))
}

type Create = unsafe extern "C" fn() -> *mut c_void;
type SetFilterPolicy = unsafe extern "C" fn(*mut c_void, *mut c_void);
type Destroy = unsafe extern "C" fn(*mut c_void);
type Construct = unsafe extern "C" fn(*mut c_void);

/// Only its address is used: a value no options field holds by chance.
static MARKER: u8 = 0;

/// The layout its own functions show, read from the object holding `real`.
fn prove_layout(real: usize) -> Option<Layout> {
    let functions = loader::with_object_at(real, |object| {
        let find = |name: &[u8]| object.lookup(name).map(|symbol| symbol.address);
        Some([
            find(b"leveldb_options_create")?,
            find(b"leveldb_options_set_filter_policy")?,
            find(b"leveldb_options_destroy")?,
            find(b"_ZN7leveldb7OptionsC1Ev")?,
        ])
    })??;
    // SAFETY: the functions of LevelDB's C API (include/leveldb/c.h) and of its C++
    // `Options::Options()` (a complete-object constructor, `this` its argument) of
    // these names, defined in that LevelDB itself, have these signatures.
    let (create, set, destroy, construct) = unsafe {
        (
            std::mem::transmute::<usize, Create>(functions[0]),
            std::mem::transmute::<usize, SetFilterPolicy>(functions[1]),
            std::mem::transmute::<usize, Destroy>(functions[2]),
            std::mem::transmute::<usize, Construct>(functions[3]),
        )
    };
    let policy_at = filter_policy_offset(create, set, destroy)?;
    let size = [0xaa_u8, 0x55].into_iter().map(|pattern| {
        let mut scratch = vec![usize::from_ne_bytes([pattern; WORD]); SCRATCH_WORDS];
        // SAFETY: the constructor writes one `Options`, smaller than the scratch.
        unsafe { construct(scratch.as_mut_ptr().cast()) };
        let pattern = usize::from_ne_bytes([pattern; WORD]);
        scratch
            .iter()
            .rposition(|&word| word != pattern)
            .map_or(0, |last| (last + 1) * WORD)
    });
    let size = size.max()?;
    (policy_at < size && size < SCRATCH_WORDS * WORD).then_some(Layout { policy_at, size })
}

/// The offset of `filter_policy`, as the C API's setter shows it.
fn filter_policy_offset(create: Create, set: SetFilterPolicy, destroy: Destroy) -> Option<usize> {
    let marker = ptr::addr_of!(MARKER).cast_mut().cast::<c_void>();
    let mut scratch = vec![0usize; SCRATCH_WORDS];
    // SAFETY: the setter stores one pointer into its options object; the scratch is
    // larger than any known layout's options and zeroed.
    unsafe { set(scratch.as_mut_ptr().cast(), marker) };
    let mut written = scratch.iter().enumerate().filter(|(_, &word)| word != 0);
    let (index, &word) = written.next()?;
    if written.next().is_some() || word != marker as usize {
        return None;
    }
    let offset = index * WORD;
    // SAFETY: LevelDB's own options object, in which its setter just proved
    // `offset` to be the filter policy's (a pointer, aligned as its object).
    unsafe {
        let options = create();
        if options.is_null() {
            return None;
        }
        let field = options.cast::<u8>().add(offset).cast::<usize>();
        let default = field.read_volatile();
        set(options, marker);
        let set_to_marker = field.read_volatile();
        set(options, ptr::null_mut());
        let cleared = field.read_volatile();
        destroy(options);
        (default == 0 && set_to_marker == marker as usize && cleared == 0).then_some(offset)
    }
}

/// Says once per process that a LevelDB does not show its options' layout, so its
/// databases run as stock.
fn say_once_unproven(real: usize) {
    static SAID: AtomicBool = AtomicBool::new(false);
    if SAID.swap(true, Ordering::Relaxed) {
        return;
    }
    let name = loader::with_object_at(real, |object| match object.is_program() {
        true => "the program".to_string(),
        false => object.name().to_string_lossy().into_owned(),
    });
    loader::say(&format!(
        "leveldb-bloom: {}: the LevelDB in {} does not show where its options keep the \
         filter policy (it has no C API): the databases it opens without a policy of their \
         own stay without one\n",
        variable::VARIABLE.to_string_lossy(),
        name.unwrap_or_else(|| "an unknown object".into())
    ));
}
