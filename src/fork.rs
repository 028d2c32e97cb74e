//! Fork safety: a child forked at any instant from a multithreaded process can use
//! every function of the library. Process-wide state is either atomic and never
//! waited on (the SIMD level, warnings said once), or guarded by a
//! [`ForkLock`](super::fork_lock::ForkLock) that these handlers hold across every
//! `fork()`: the registry's writers' lock. The loaded objects are read without a
//! lock a fork could leave held ([`loader`], whose own handler it registers here).

use super::registry::REGISTRY;

/// `fork()`'s prepare handler: waits for the write in flight, if any, and keeps
/// others from starting until the fork is done.
extern "C" fn lock_for_fork() {
    REGISTRY.writers_lock().acquire();
}

/// `fork()`'s parent and child handler: in both processes, the thread that forked
/// is the one that locked in [`lock_for_fork`] (the child's only thread is its copy).
extern "C" fn unlock_after_fork() {
    REGISTRY.writers_lock().release();
}

/// Registers the fork handlers, and starts the reader of the loaded objects (it
/// looks up `_dl_find_object`, taking the loader's lock, which the thread running
/// this constructor holds). Runs as the library's ELF constructor: when
/// `libleveldb_bloom.so` is loaded, or before `main` in a program linked with the
/// static library. So no thread is inside the library yet, and no one-time
/// initialisation is left for a fork to interrupt.
extern "C" fn register_fork_handlers() {
    loader::start();
    // SAFETY: the handlers are `extern "C"` functions that live as long as the
    // library; glibc forgets them if the library is unloaded.
    let failed = unsafe {
        libc::pthread_atfork(
            Some(lock_for_fork),
            Some(unlock_after_fork),
            Some(unlock_after_fork),
        )
    };
    if failed != 0 {
        const MESSAGE: &[u8] = b"leveldb-bloom: pthread_atfork failed (out of memory): a \
            child forked while another thread creates or destroys a policy may hang\n";
        // SAFETY: writes a static buffer to stderr.
        unsafe { libc::write(libc::STDERR_FILENO, MESSAGE.as_ptr().cast(), MESSAGE.len()) };
    }
}

#[used]
#[link_section = ".init_array"]
static REGISTER_FORK_HANDLERS: extern "C" fn() = register_fork_handlers;
