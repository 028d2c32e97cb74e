//! Where a LevelDB's `Options` keeps `filter_policy`, as that LevelDB's own C API
//! shows it: never assumed. Its layout differs between versions and forks (1.18 has
//! no `max_file_size`, upstream after 1.23 adds `zstd_compression_level`, Mojang's
//! fork holds 256 compressor pointers), and `leveldb_options_t` is `struct { Options
//! rep; }`, so `leveldb_options_set_filter_policy` writes the field at its offset in
//! `Options`. A LevelDB without its C API (built into Node's `classic-level`) shows
//! nothing: `None`.

use std::ffi::c_void;
use std::mem::size_of;
use std::ptr;

use super::real::in_object_of;

/// Room for the scratch options: 8 KiB, past every known layout's filter policy
/// (Mojang's compressor arrays put it beyond 2 KiB).
const SCRATCH_WORDS: usize = 1024;

/// Only its address is used: a value no options field holds by chance.
static MARKER: u8 = 0;

type Create = unsafe extern "C" fn() -> *mut c_void;
type SetFilterPolicy = unsafe extern "C" fn(*mut c_void, *mut c_void);
type Destroy = unsafe extern "C" fn(*mut c_void);

/// The offset of `filter_policy` in the `Options` of the LevelDB that `real` (one of
/// its functions) lies in, when its C API shows it: its setter writes exactly one
/// pointer-aligned word of a zeroed scratch object, and on an object it made itself
/// that word is NULL, then what was set, then NULL again.
pub(super) fn filter_policy_offset(real: *const c_void) -> Option<usize> {
    let create = in_object_of(real, c"leveldb_options_create")?;
    let set = in_object_of(real, c"leveldb_options_set_filter_policy")?;
    let destroy = in_object_of(real, c"leveldb_options_destroy")?;
    // SAFETY: the functions of LevelDB's C API (include/leveldb/c.h) of these names,
    // defined in that LevelDB itself, have these signatures.
    let (create, set, destroy) = unsafe {
        (
            std::mem::transmute::<*const c_void, Create>(create),
            std::mem::transmute::<*const c_void, SetFilterPolicy>(set),
            std::mem::transmute::<*const c_void, Destroy>(destroy),
        )
    };
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
    let offset = index * size_of::<usize>();

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
