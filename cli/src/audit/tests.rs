//! The audit's decisions on filters it has read: what its filters cost and let
//! through.

use super::*;

#[test]
fn bits_per_key_leave_out_the_k_byte_and_no_key_measures_nothing() {
    let filter = [0u8, 0, 0, 0, 0, 0, 0, 0, 6];
    assert_eq!(measure(&[(&filter, 4)]).0, 16.0);
    // Two filters: (64 + 64) bits over 4 + 12 keys.
    assert_eq!(measure(&[(&filter, 4), (&filter, 12)]).0, 8.0);
    assert_eq!(measure(&[(&filter, 0)]), (0.0, None));
    assert_eq!(measure(&[]), (0.0, None));
}

#[test]
fn a_clear_filter_lets_no_absent_key_through_and_a_full_one_every_one() {
    let clear = [0u8, 0, 0, 0, 0, 0, 0, 0, 6];
    let full = [0xffu8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 6];
    assert_eq!(measure(&[(&clear, 10)]).1, Some(0.0));
    assert_eq!(measure(&[(&full, 10)]).1, Some(100.0));
    // Asked in proportion to the keys each covers: a quarter of the samples full.
    let half = false_positives(&[(&full, 1), (&clear, 3)], 4);
    assert!((half - 0.25).abs() < 0.01, "{half}");
}
