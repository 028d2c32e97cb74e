//! A mutex that no fork can catch held: `fork()` copies only the calling thread, so
//! a child forked while another thread held a lock would find it locked for good.
//! The fork handlers (`fork`) take every [`ForkLock`] before a fork and release it
//! in both processes after, so a child finds each one free and what it guards
//! whole.
//!
//! A POSIX mutex rather than `std::sync::Mutex`, so that valgrind's helgrind, which
//! the thread tests run, sees the lock, and the handlers can lock and unlock it
//! without a guard.

use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};

/// `T`, reached only with the lock held.
pub(crate) struct ForkLock<T> {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    data: UnsafeCell<T>,
}

// SAFETY: `data` is only reached through a `ForkLockGuard`, which holds the mutex.
unsafe impl<T: Send> Sync for ForkLock<T> {}

impl<T> ForkLock<T> {
    pub(crate) const fn new(data: T) -> Self {
        Self {
            mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
            data: UnsafeCell::new(data),
        }
    }

    /// Waits for the lock; it is released when the guard is dropped (also if the
    /// holder panics).
    pub(crate) fn lock(&'static self) -> ForkLockGuard<T> {
        self.acquire();
        ForkLockGuard(self)
    }

    /// Takes the mutex without a guard: for the fork handlers, which release it
    /// with [`release`](Self::release) on the same thread.
    pub(crate) fn acquire(&self) {
        // SAFETY: a statically initialised mutex, never moved or destroyed (every
        // ForkLock is a static).
        unsafe { libc::pthread_mutex_lock(self.mutex.get()) };
    }

    /// Releases the mutex this thread took with [`acquire`](Self::acquire).
    pub(crate) fn release(&self) {
        // SAFETY: as for `acquire`; the caller holds the mutex.
        unsafe { libc::pthread_mutex_unlock(self.mutex.get()) };
    }
}

/// The lock held: access to the data.
pub(crate) struct ForkLockGuard<T: 'static>(&'static ForkLock<T>);

impl<T> Deref for ForkLockGuard<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the mutex is held for the guard's life.
        unsafe { &*self.0.data.get() }
    }
}

impl<T> DerefMut for ForkLockGuard<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the mutex is held for the guard's life, and the guard is unique.
        unsafe { &mut *self.0.data.get() }
    }
}

impl<T> Drop for ForkLockGuard<T> {
    fn drop(&mut self) {
        self.0.release();
    }
}
