//! The registry's properties, each observed on a registry of the test's own.

use std::sync::atomic::{AtomicBool, Ordering};

use super::table::FREE;
use super::*;

/// A registry of the test's own, never shared (its tables are kept for good, as
/// the process's are).
fn registry() -> &'static Registry {
    Box::leak(Box::new(Registry::new()))
}

#[test]
fn register_lookup_unregister() {
    let registry = registry();
    let mut a = PolicyState::new(BloomFilterPolicy::new(10)).unwrap();
    let mut b = PolicyState::new(BloomFilterPolicy::new(20)).unwrap();
    let (pa, pb): (*mut PolicyState, *mut PolicyState) = (&mut *a, &mut *b);
    assert!(!registry.ever_registered());
    assert!(registry.register(pa as usize, pa));
    assert!(registry.register(0x1000, pb));
    assert!(!registry.register(0x1000, pb), "registered twice");
    assert!(!registry.register(FREE, pb), "0 is no handle");
    assert_eq!(registry.lookup(pa as usize), Some(pa));
    assert_eq!(registry.lookup(0x1000), Some(pb));
    assert_eq!(registry.lookup(0x2000), None);
    assert_eq!(registry.lookup(FREE), None);
    assert_eq!(registry.unregister(0x1000), Some(pb));
    assert_eq!(registry.unregister(0x1000), None);
    assert_eq!(registry.lookup(0x1000), None);
    assert_eq!(registry.lookup(pa as usize), Some(pa));
    assert_eq!(registry.unregister(pa as usize), Some(pa));
    assert!(registry.ever_registered());
}

/// The handle registered last is found without a search, and only while it is
/// registered; the others are found by searching.
#[test]
fn the_last_handle_is_found_while_registered() {
    let registry = registry();
    let [a, b] = [1usize, 2].map(|i| (i * 0x40) as *mut PolicyState);
    let (first, second) = (0xc0_0000_0010, 0xc0_0000_0020);
    assert_eq!(registry.lookup(first), None);
    assert!(registry.register(first, a));
    assert_eq!(registry.lookup(first), Some(a));
    assert!(registry.register(second, b));
    assert_eq!(registry.lookup(second), Some(b));
    assert_eq!(registry.lookup(first), Some(a));
    assert_eq!(registry.unregister(second), Some(b));
    assert_eq!(registry.lookup(second), None, "forgotten when unregistered");
    assert_eq!(registry.lookup(first), Some(a));
}

/// Growth, and back-shift deletion among colliding handles: every handle stays
/// findable while others come and go.
#[test]
fn grows_and_deletes_without_losing_entries() {
    let registry = registry();
    let policy = std::ptr::dangling_mut::<PolicyState>();
    // Handles far apart in memory but often sharing a home slot.
    let handles: Vec<usize> = (1..=5_000usize).map(|i| 0x10_0000 + (i << 20)).collect();
    for &h in &handles {
        assert!(registry.register(h, policy));
    }
    for (i, &h) in handles.iter().enumerate() {
        if i % 3 == 0 {
            assert_eq!(registry.unregister(h), Some(policy));
        }
    }
    for (i, &h) in handles.iter().enumerate() {
        assert_eq!(registry.lookup(h).is_some(), i % 3 != 0, "handle {i}");
    }
    for (i, &h) in handles.iter().enumerate() {
        if i % 3 != 0 {
            assert_eq!(registry.unregister(h), Some(policy));
        }
    }
    assert!(handles.iter().all(|&h| registry.lookup(h).is_none()));
}

/// Lookups take no lock: while a writer registers and unregisters thousands of
/// other handles (growing the table several times and shifting entries back),
/// readers always find the handles that stay and never one that was never
/// registered.
#[test]
fn lookups_during_writes_see_every_live_handle() {
    let registry = registry();
    let (kept, other) = (
        std::ptr::dangling_mut::<PolicyState>(),
        std::ptr::without_provenance_mut::<PolicyState>(0x40),
    );
    // Addresses, which threads may share, to compare lookups with.
    let kept_address = kept as usize;
    let stays: Vec<usize> = (1..=64usize).map(|i| 0x7000_0000 + (i << 12)).collect();
    for &h in &stays {
        assert!(registry.register(h, kept));
    }
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while !done.load(Ordering::Relaxed) {
                    for &h in &stays {
                        assert_eq!(registry.lookup(h).map(|p| p as usize), Some(kept_address));
                        assert_eq!(registry.lookup(h + 8), None);
                    }
                }
            });
        }
        for round in 0..20usize {
            let churn: Vec<usize> = (0..2_000usize)
                .map(|i| 0x9000_0000 + ((round * 2_000 + i) << 12))
                .collect();
            for &h in &churn {
                assert!(registry.register(h, other));
            }
            for &h in &churn {
                assert_eq!(registry.unregister(h), Some(other));
            }
        }
        done.store(true, Ordering::Relaxed);
    });
}
