//! The objects loaded in the process, read as the dynamic loader mapped them.
//!
//! They are found by walking their program headers with `dl_iterate_phdr`, which
//! takes only the lock guarding the list of loaded objects (glibc's
//! `dl_load_write_lock`, held while an object joins or leaves the list), never the
//! loader lock `dlopen` holds while it runs constructors, so a thread making a
//! policy while another is inside `dlopen` goes on (glibc does not reset that lock
//! in a forked child: see [`WALKS`]). Every byte is read through [`Object::bytes`], inside one of the
//! object's readable `PT_LOAD` segments, so a crafted dynamic section (sizes beyond
//! the mapping, addresses anywhere) is never followed outside what the object maps.

use std::ffi::{c_int, c_void, CStr};
use std::mem::MaybeUninit;

#[cfg(target_pointer_width = "32")]
use libc::Elf32_Phdr as ProgramHeader;
#[cfg(target_pointer_width = "64")]
use libc::Elf64_Phdr as ProgramHeader;
use std::ops::ControlFlow;

use super::super::fork_lock::ForkLock;
use super::memo::Memo;

/// One loaded object, valid while `dl_iterate_phdr` reports it.
pub(super) struct Object<'a> {
    info: &'a libc::dl_phdr_info,
}

/// Which object it is, for as long as no object leaves the process: its program
/// headers' address (inside its own mapping, so no two loaded objects share one)
/// and glibc's count of objects removed so far.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct ObjectId {
    pub(super) headers: usize,
    pub(super) removals: u64,
}

/// What is remembered about the loaded objects, guarded by the walks' lock.
pub(super) struct Notes {
    /// Per object ([`ObjectId`]): its evidence of a string ABI.
    pub(super) objects: Memo<64>,
    /// Per generation of the list: what a survey of all objects found.
    pub(super) survey: Memo<1>,
}

/// Held around every walk. glibc's fork resets the loader lock in the child but not
/// the list's lock `dl_iterate_phdr` holds, so a child forked during a walk would
/// find that lock held for good; the fork handlers (`fork`) take this lock before a
/// fork, waiting for the walk in flight.
static WALKS: ForkLock<Notes> = ForkLock::new(Notes {
    objects: Memo::new(),
    survey: Memo::new(),
});

/// The fork's prepare handler: waits for the walk in flight, if any, and keeps
/// others from starting until [`release_walks_after_fork`].
pub(crate) fn acquire_walks_for_fork() {
    WALKS.acquire();
}

/// The fork's parent and child handler.
pub(crate) fn release_walks_after_fork() {
    WALKS.release();
}

/// Calls `visit` with each loaded object of this library's namespace, in the
/// loader's order (the program first), and the notes, until it breaks. Signals are
/// blocked meanwhile, so that a signal handler making a policy never waits for a
/// walk its own thread left.
pub(super) fn each_object(mut visit: impl FnMut(&Object, &mut Notes) -> ControlFlow<()>) {
    let _blocked = SignalsBlocked::now();
    let mut notes = WALKS.lock();
    let mut visit = |object: &Object| visit(object, &mut notes);
    type Visit<'v> = &'v mut dyn FnMut(&Object) -> ControlFlow<()>;
    let mut visit: Visit = &mut visit;

    /// # Safety
    /// Called by `dl_iterate_phdr` with a loaded object's `info` and the `data` it
    /// was given: a `Visit`.
    unsafe extern "C" fn callback(
        info: *mut libc::dl_phdr_info,
        _size: libc::size_t,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: `data` is `visit` below, alive for the whole walk, and glibc hands
        // each object's valid `dl_phdr_info`.
        let (visit, info) = unsafe { (&mut *data.cast::<Visit>(), &*info) };
        visit(&Object { info }).is_break().into()
    }
    // SAFETY: the callback only reads what glibc hands it and `visit`, which outlives
    // the call. No panic can cross it: the visitors index only checked slices.
    unsafe { libc::dl_iterate_phdr(Some(callback), (&raw mut visit).cast()) };
}

/// All signals blocked on this thread until dropped, then the mask restored.
struct SignalsBlocked(libc::sigset_t);

impl SignalsBlocked {
    fn now() -> Self {
        let mut all = MaybeUninit::<libc::sigset_t>::uninit();
        let mut previous = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: sigfillset initialises `all`; pthread_sigmask reads it and
        // initialises `previous`.
        unsafe {
            libc::sigfillset(all.as_mut_ptr());
            libc::pthread_sigmask(libc::SIG_BLOCK, all.as_ptr(), previous.as_mut_ptr());
            Self(previous.assume_init())
        }
    }
}

impl Drop for SignalsBlocked {
    fn drop(&mut self) {
        // SAFETY: the mask saved by `now`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.0, std::ptr::null_mut()) };
    }
}

/// `read` of the loaded object holding `address` (in one of its `PT_LOAD` segments),
/// if one does, and the notes.
pub(super) fn with_object_at<T>(
    address: usize,
    read: impl FnOnce(&Object, &mut Notes) -> T,
) -> Option<T> {
    let (mut read, mut result) = (Some(read), None);
    each_object(|object, notes| {
        if !object.holds(address) {
            return ControlFlow::Continue(());
        }
        result = read.take().map(|read| read(object, notes));
        ControlFlow::Break(())
    });
    result
}

impl Object<'_> {
    pub(super) fn id(&self) -> ObjectId {
        ObjectId {
            headers: self.info.dlpi_phdr as usize,
            removals: self.info.dlpi_subs,
        }
    }

    /// The difference between the object's addresses in memory and in its file.
    pub(super) fn load_offset(&self) -> usize {
        self.info.dlpi_addr as usize
    }

    /// Objects added to the process so far, and removed: they change together with
    /// the list of loaded objects.
    pub(super) fn generation(&self) -> (u64, u64) {
        (self.info.dlpi_adds, self.info.dlpi_subs)
    }

    /// The object's file name as the loader knows it ("" for the program).
    pub(super) fn name(&self) -> &CStr {
        if self.info.dlpi_name.is_null() {
            return c"";
        }
        // SAFETY: glibc's NUL-terminated name of a loaded object.
        unsafe { CStr::from_ptr(self.info.dlpi_name) }
    }

    fn headers(&self) -> &[ProgramHeader] {
        if self.info.dlpi_phdr.is_null() {
            return &[];
        }
        // SAFETY: the loader's program headers of a loaded object, `dlpi_phnum` of them.
        unsafe { std::slice::from_raw_parts(self.info.dlpi_phdr, self.info.dlpi_phnum.into()) }
    }

    /// Each `PT_LOAD` segment's address range in memory, and its flags (`PF_*`).
    fn segments(&self) -> impl Iterator<Item = (usize, usize, u32)> + '_ {
        self.headers()
            .iter()
            .filter(|header| header.p_type == PT_LOAD)
            .filter_map(|header| {
                // The load offset wraps for an object loaded below its link address.
                let start = (self.info.dlpi_addr as usize).wrapping_add(header.p_vaddr as usize);
                let end = start.checked_add(header.p_memsz as usize)?;
                Some((start, end, header.p_flags))
            })
    }

    /// The bytes of each segment mapped readable and not writable (code and
    /// read-only data).
    pub(super) fn read_only_segments(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.segments()
            .filter(|&(_, _, flags)| flags & PF_R != 0 && flags & PF_W == 0)
            .filter_map(|(start, _, _)| self.bytes(start))
    }

    /// Whether `address` lies in one of the object's segments.
    pub(super) fn holds(&self, address: usize) -> bool {
        self.segments()
            .any(|(start, end, _)| (start..end).contains(&address))
    }

    /// The bytes from `address` to the end of the readable segment holding it.
    pub(super) fn bytes(&self, address: usize) -> Option<&[u8]> {
        let (_, end, _) = self
            .segments()
            .find(|&(start, end, flags)| flags & PF_R != 0 && (start..end).contains(&address))?;
        // SAFETY: the loader mapped the whole segment readable, for as long as the
        // object is loaded, which it is while it is reported.
        Some(unsafe { std::slice::from_raw_parts(address as *const u8, end - address) })
    }

    /// The object's dynamic section's entries (tag, value), with each address
    /// relocated as glibc relocates it: in place, so already an address, only where
    /// the `PT_DYNAMIC` segment is writable and the object was moved from its link
    /// address (glibc's `dl_relocate_ld` and `elf_get_dynamic_info`, ≥ 2.35; before,
    /// a read-only one was written all the same and the object could not load);
    /// else the value plus the load offset. Empty without one.
    pub(super) fn dynamic(&self) -> impl Iterator<Item = (i64, usize)> + '_ {
        let header = self
            .headers()
            .iter()
            .find(|header| header.p_type == PT_DYNAMIC);
        let base = self.info.dlpi_addr as usize;
        let bytes = header
            .and_then(|header| self.bytes(base.wrapping_add(header.p_vaddr as usize)))
            .unwrap_or_default();
        let relocated = header.is_some_and(|header| header.p_flags & PF_W != 0)
            && base != 0
            && LOADER_RELOCATES_DYNAMIC;
        bytes
            .chunks_exact(2 * WORD)
            .map(|entry| (word(entry, 0) as i64, word(entry, WORD)))
            .take_while(|&(tag, _)| tag != DT_NULL)
            .map(move |(tag, value)| match relocated || !is_address(tag) {
                true => (tag, value),
                false => (tag, value.wrapping_add(base)),
            })
    }
}

/// Whether glibc relocates a writable dynamic section in place on this CPU (all but
/// those defining `DL_RO_DYN_SECTION`, whose `dl_relocate_ld` never does).
const LOADER_RELOCATES_DYNAMIC: bool = !cfg!(any(
    target_arch = "mips",
    target_arch = "mips64",
    target_arch = "riscv32",
    target_arch = "riscv64"
));

/// Whether glibc relocates entries of `tag` (`elf_get_dynamic_info`'s list, of the
/// tags read here; the others are sizes and flags). `DT_REL` and `DT_RELA` only
/// where the CPU has such relocations (`ELF_MACHINE_NO_REL`, `ELF_MACHINE_NO_RELA`).
fn is_address(tag: i64) -> bool {
    const REL_CPU: bool = cfg!(any(target_arch = "x86", target_arch = "arm"));
    [DT_HASH, DT_STRTAB, DT_SYMTAB, DT_GNU_HASH, DT_JMPREL].contains(&tag)
        || tag == DT_REL && REL_CPU
        || tag == DT_RELA && !REL_CPU
}

// ELF's numbers (<elf.h>).
const PT_LOAD: u32 = 1;
const PT_DYNAMIC: u32 = 2;
const PF_W: u32 = 2;
const PF_R: u32 = 4;
const DT_NULL: i64 = 0;
pub(super) const DT_HASH: i64 = 4;
pub(super) const DT_STRTAB: i64 = 5;
pub(super) const DT_SYMTAB: i64 = 6;
pub(super) const DT_STRSZ: i64 = 10;
pub(super) const DT_PLTRELSZ: i64 = 2;
pub(super) const DT_RELA: i64 = 7;
pub(super) const DT_RELASZ: i64 = 8;
pub(super) const DT_SYMBOLIC: i64 = 16;
pub(super) const DT_REL: i64 = 17;
pub(super) const DT_RELSZ: i64 = 18;
pub(super) const DT_PLTREL: i64 = 20;
pub(super) const DT_JMPREL: i64 = 23;
pub(super) const DT_FLAGS: i64 = 30;
pub(super) const DF_SYMBOLIC: usize = 0x2;
pub(super) const DT_GNU_HASH: i64 = 0x6fff_fef5;

/// The size of an address in the object's tables.
pub(super) const WORD: usize = std::mem::size_of::<usize>();

/// The native word at `offset` of `bytes`, which holds it.
pub(super) fn word(bytes: &[u8], offset: usize) -> usize {
    let mut value = [0; WORD];
    value.copy_from_slice(&bytes[offset..offset + WORD]);
    usize::from_ne_bytes(value)
}

/// The native 32-bit word at `offset` of `bytes`, if it holds one.
pub(super) fn word32(bytes: &[u8], offset: usize) -> Option<u32> {
    let bytes = bytes.get(offset..offset.checked_add(4)?)?;
    Some(u32::from_ne_bytes(bytes.try_into().ok()?))
}
