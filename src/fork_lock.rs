//! A mutex that no fork can catch held: `fork()` copies only the calling thread, so
//! a child forked while another thread held a lock would find it locked for good.
//! The fork handlers (`fork`) take every [`ForkLock`] before a fork and release it
//! in both processes after, so a child finds each one free and what it guards
//! whole.
//!
//! A POSIX mutex rather than `std::sync::Mutex`, so that valgrind's helgrind, which
//! the thread tests run, sees the lock, and the handlers can lock and unlock it
//! without a guard.
//!
//! Another library's fork handlers may call this one while ours hold the locks:
//! prepare handlers run in the reverse order of their registration, so one
//! registered before ours runs after ours took the lock, and child and parent
//! handlers registered before ours run before ours release it. The thread that holds
//! a lock for a fork may therefore take it again: what it guards is whole (the
//! prepare handler waited for the holder in flight), and no other thread can reach
//! it until the fork is done.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};

/// `T`, reached only with the lock held.
pub(crate) struct ForkLock<T> {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    /// The thread (`pthread_self`) holding the lock for a fork, else [`NO_THREAD`].
    fork_holder: AtomicUsize,
    data: UnsafeCell<T>,
}

/// No thread: `pthread_self()` is never 0.
const NO_THREAD: usize = 0;

/// This thread's id as a number (in a forked child, the id of the thread that forked).
fn this_thread() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as usize }
}

// SAFETY: `data` is only reached through a `ForkLockGuard`, which holds the mutex.
unsafe impl<T: Send> Sync for ForkLock<T> {}

impl<T> ForkLock<T> {
    pub(crate) const fn new(data: T) -> Self {
        Self {
            mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
            fork_holder: AtomicUsize::new(NO_THREAD),
            data: UnsafeCell::new(data),
        }
    }

    /// Waits for the lock; it is released when the guard is dropped (also if the
    /// holder panics). Inside a fork handler of the thread that holds the lock for
    /// the fork, returns at once with a guard that leaves the lock to
    /// [`release`](Self::release).
    pub(crate) fn lock(&'static self) -> ForkLockGuard<T> {
        // Only this thread ever stores its own id, so a stale read cannot be it.
        if self.fork_holder.load(Ordering::Relaxed) == this_thread() {
            return ForkLockGuard {
                lock: self,
                releases: false,
            };
        }
        self.lock_mutex();
        ForkLockGuard {
            lock: self,
            releases: true,
        }
    }

    /// Takes the lock without a guard, for a fork: the prepare handler; the parent
    /// and child handlers release it with [`release`](Self::release) on the same
    /// thread.
    pub(crate) fn acquire(&self) {
        self.lock_mutex();
        self.fork_holder.store(this_thread(), Ordering::Relaxed);
    }

    /// Releases the lock this thread took with [`acquire`](Self::acquire).
    pub(crate) fn release(&self) {
        self.fork_holder.store(NO_THREAD, Ordering::Relaxed);
        self.unlock_mutex();
    }

    fn lock_mutex(&self) {
        // SAFETY: a statically initialised mutex, never moved or destroyed (every
        // ForkLock is a static).
        unsafe { libc::pthread_mutex_lock(self.mutex.get()) };
    }

    fn unlock_mutex(&self) {
        // SAFETY: as for `lock_mutex`; the caller holds the mutex.
        unsafe { libc::pthread_mutex_unlock(self.mutex.get()) };
    }
}

/// The lock held: access to the data.
pub(crate) struct ForkLockGuard<T: 'static> {
    lock: &'static ForkLock<T>,
    /// False when taken again by the thread holding the lock for a fork.
    releases: bool,
}

impl<T> Deref for ForkLockGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the mutex is held for the guard's life (by this thread, maybe for a
        // fork, and then no other guard of it is alive: see `lock`).
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for ForkLockGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as for `deref`, and the guard is unique.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for ForkLockGuard<T> {
    fn drop(&mut self) {
        if self.releases {
            self.lock.unlock_mutex();
        }
    }
}
