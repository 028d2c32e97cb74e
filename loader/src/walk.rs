//! Finding loaded objects without a lock a forked child could find held.
//!
//! glibc's `dl_iterate_phdr` holds the list lock (`dl_load_write_lock`) that
//! `dlopen` and `dlclose` take while they add or remove an object; `fork` does not
//! reset it, so a child forked at that instant would wait on it forever. So:
//!
//! - the object holding an address is found with `_dl_find_object` (glibc ≥ 2.35:
//!   lock-free, async-signal-safe; looked up when the library starts), else with
//!   `dladdr1` (the loader lock, which `fork` resets in the child);
//! - all objects are walked with `dl_iterate_phdr` in a process that was not
//!   forked (the lock keeps `dlclose` from freeing an object under the walk), and
//!   in a forked child along the loader's list of link maps, with no lock: the
//!   child's only thread is the one walking, and an object is on that list only
//!   once the loader has mapped it whole (one whose `dlclose` the fork interrupted,
//!   unmapped but still listed, is left out: see [`mapped`]).
//!
//! No signal is blocked and no lock of ours is taken: a signal handler may walk too.

use std::ffi::{c_char, c_int, c_void};
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::object::Object;

/// `struct link_map`'s public part (`<link.h>`).
#[repr(C)]
struct LinkMap {
    l_addr: usize,
    l_name: *const c_char,
    l_ld: *const c_void,
    l_next: *const LinkMap,
    l_prev: *const LinkMap,
}

/// `struct dl_find_object`'s leading fields (`<dlfcn.h>`, glibc ≥ 2.35), with room
/// for the rest of any version's.
#[repr(C)]
struct FoundObject {
    flags: u64,
    map_start: *const c_void,
    map_end: *const c_void,
    link_map: *const LinkMap,
    rest: [u64; 16],
}

type FindObject = unsafe extern "C" fn(*const c_void, *mut FoundObject) -> c_int;

/// `_dl_find_object`, when this glibc has it (0 until [`start`]).
static FIND_OBJECT: AtomicUsize = AtomicUsize::new(0);
/// Set in a forked child (and its children).
static FORKED: AtomicBool = AtomicBool::new(false);

extern "C" {
    fn dladdr1(
        address: *const c_void,
        info: *mut libc::Dl_info,
        extra: *mut *mut c_void,
        flags: c_int,
    ) -> c_int;
}
/// `dladdr1`'s request for the link map.
const RTLD_DL_LINKMAP: c_int = 2;

/// Looks up `_dl_find_object` and registers the fork handler. Called once, from
/// the library's ELF constructor: `dlsym` takes the loader's lock, which the
/// loading thread already holds then.
pub fn start() {
    // SAFETY: a NUL-terminated name; RTLD_DEFAULT searches the global scope.
    let find = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"_dl_find_object".as_ptr()) };
    FIND_OBJECT.store(find as usize, Ordering::Relaxed);
    // SAFETY: an `extern "C"` function that lives as long as the library.
    unsafe { libc::pthread_atfork(None, None, Some(after_fork_in_child)) };
}

/// `fork()`'s child handler: from now on, walks go along the link maps.
extern "C" fn after_fork_in_child() {
    FORKED.store(true, Ordering::Relaxed);
}

/// The link map and mapping start of the object holding `address`, without a lock
/// a fork leaves held.
fn link_map_at(address: usize) -> Option<(*const LinkMap, usize)> {
    let find = FIND_OBJECT.load(Ordering::Relaxed);
    if find != 0 {
        // SAFETY: `_dl_find_object`, of the signature glibc declares.
        let find = unsafe { std::mem::transmute::<usize, FindObject>(find) };
        // SAFETY: plain data, which the call fills in.
        let mut found: FoundObject = unsafe { std::mem::zeroed() };
        // SAFETY: any address may be asked; `found` has room for the result.
        let failed = unsafe { find(address as *const c_void, &mut found) };
        return (failed == 0 && !found.link_map.is_null())
            .then_some((found.link_map, found.map_start as usize));
    }
    // SAFETY: plain data, which dladdr1 only writes.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let mut map: *mut c_void = std::ptr::null_mut();
    // SAFETY: any address may be asked; both outputs are writable.
    let found = unsafe {
        dladdr1(
            address as *const c_void,
            &mut info,
            &mut map,
            RTLD_DL_LINKMAP,
        )
    };
    (found != 0 && !map.is_null() && !info.dli_fbase.is_null())
        .then_some((map.cast_const().cast(), info.dli_fbase as usize))
}

/// `read` of the loaded object holding `address`, if one does.
pub fn with_object_at<T>(address: usize, read: impl FnOnce(&Object) -> T) -> Option<T> {
    if let Some((map, map_start)) = link_map_at(address) {
        // SAFETY: the loader's link map of an object holding `address`, loaded for
        // as long as the caller's code (or data) at `address` is in use.
        let object = unsafe { Object::from_map((*map).l_addr, (*map).l_name, map_start) };
        if object.holds(address) {
            return Some(read(&object));
        }
    }
    // No link map: a statically linked program, whose one object the walk reports.
    let mut read = Some(read);
    let mut result = None;
    each_object(|object| match object.holds(address) {
        true => {
            result = read.take().map(|read| read(object));
            ControlFlow::Break(())
        }
        false => ControlFlow::Continue(()),
    });
    result
}

/// Calls `visit` with each loaded object, in the loader's order (the program
/// first), until it breaks.
pub fn each_object(mut visit: impl FnMut(&Object) -> ControlFlow<()>) {
    if FORKED.load(Ordering::Relaxed) && each_link_map(&mut visit) {
        return;
    }
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
        visit(&Object::from_info(info)).is_break().into()
    }
    // SAFETY: the callback only reads what glibc hands it and `visit`, which outlives
    // the call. No panic can cross it: the visitors index only checked slices.
    unsafe { libc::dl_iterate_phdr(Some(callback), (&raw mut visit).cast()) };
}

/// Objects added to the process so far, and removed (glibc's counts): while both
/// stay, the loaded objects are the same. None in a forked child, which does not
/// read them (they come with `dl_iterate_phdr`, whose lock it must not take).
pub fn generation() -> Option<(u64, u64)> {
    if FORKED.load(Ordering::Relaxed) {
        return None;
    }
    /// # Safety
    /// Called by `dl_iterate_phdr` with the program's `info` and the `data` it was
    /// given: an `Option<(u64, u64)>`.
    unsafe extern "C" fn first(
        info: *mut libc::dl_phdr_info,
        _: libc::size_t,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: as the function's contract says.
        unsafe {
            *data.cast::<Option<(u64, u64)>>() = Some(((*info).dlpi_adds, (*info).dlpi_subs))
        };
        1
    }
    let mut counts: Option<(u64, u64)> = None;
    // SAFETY: the callback writes only `counts`, which outlives the call.
    unsafe { libc::dl_iterate_phdr(Some(first), (&raw mut counts).cast()) };
    counts
}

/// The walk along the link maps, from the first: false when this library's own
/// link map cannot be found (then nothing was visited).
fn each_link_map(visit: &mut impl FnMut(&Object) -> ControlFlow<()>) -> bool {
    let Some((mut map, _)) = link_map_at(start as *const () as usize) else {
        return false;
    };
    // SAFETY: link maps of loaded objects (both loops), in a child whose only
    // thread is this one (see the module's comment), so none is freed meanwhile.
    unsafe {
        while !(*map).l_prev.is_null() {
            map = (*map).l_prev;
        }
        while !map.is_null() {
            let map_start = match (*map).l_ld.is_null() {
                true => None,
                false => link_map_at((*map).l_ld as usize)
                    .map(|(_, start)| start)
                    .filter(|&start| mapped(start) && mapped((*map).l_ld as usize)),
            };
            if let Some(map_start) = map_start {
                let object = Object::from_map((*map).l_addr, (*map).l_name, map_start);
                if visit(&object).is_break() {
                    break;
                }
            }
            map = (*map).l_next;
        }
    }
    true
}

/// Whether the page holding `address` is mapped. In a forked child, an object
/// whose `dlclose` the fork interrupted may be on the list with its pages already
/// unmapped (glibc unmaps before it unlinks): such an object is not read.
fn mapped(address: usize) -> bool {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(1) as usize;
    let mut resident = 0u8;
    // SAFETY: one page from a page boundary, one byte of result; mincore only reads
    // the kernel's page tables, and fails with ENOMEM where nothing is mapped.
    unsafe { libc::mincore((address / page * page) as *mut c_void, 1, &mut resident) == 0 }
}

#[cfg(test)]
mod tests {
    use std::ops::ControlFlow;

    use super::{each_link_map, each_object, start, with_object_at};

    #[test]
    fn the_link_maps_list_what_the_loader_lists() {
        start();
        let mut walked = Vec::new();
        each_object(|object| {
            walked.push((object.id(), object.name().to_owned()));
            ControlFlow::Continue(())
        });
        let mut along_maps = Vec::new();
        assert!(each_link_map(&mut |object| {
            along_maps.push((object.id(), object.name().to_owned()));
            ControlFlow::Continue(())
        }));
        assert!(walked.len() > 2, "{walked:?}");
        assert_eq!(walked, along_maps);
    }

    #[test]
    fn an_address_names_its_object() {
        start();
        let program = with_object_at(an_address_names_its_object as *const () as usize, |o| {
            o.is_program()
        });
        assert_eq!(program, Some(true));
        let libc = with_object_at(libc::malloc as *const () as usize, |o| {
            o.lookup(b"malloc").map(|symbol| symbol.address)
        });
        assert_eq!(libc.flatten(), Some(libc::malloc as *const () as usize));
        assert_eq!(with_object_at(8, |_| ()), None);
    }
}
