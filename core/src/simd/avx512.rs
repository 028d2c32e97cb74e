//! The AVX-512 level: 16 keys hashed at once.

use std::arch::x86_64::*;

use super::level::Avx512;
use crate::hash::MULTIPLIER;

pub(super) const LANES: usize = 16;
pub(super) type V = __m512i;

lane_hasher!("avx512f", Avx512);

/// # Safety
/// Every key must be readable for `at + 16` bytes from its start.
#[target_feature(enable = "avx512f")]
#[inline]
unsafe fn rows(keys: &[*const u8; LANES], at: usize) -> [V; 4] {
    // SAFETY: 16 readable bytes at `at` in every key, per the caller; unaligned
    // loads are allowed.
    let load = |i: usize| unsafe { _mm_loadu_si128(keys[i].add(at).cast()) };
    std::array::from_fn(|r| {
        let v = _mm512_castsi128_si512(load(r));
        let v = _mm512_inserti32x4::<1>(v, load(r + 4));
        let v = _mm512_inserti32x4::<2>(v, load(r + 8));
        _mm512_inserti32x4::<3>(v, load(r + 12))
    })
}

#[target_feature(enable = "avx512f")]
#[inline]
fn transpose([r0, r1, r2, r3]: [V; 4]) -> [V; 4] {
    let (t0, t1) = (_mm512_unpacklo_epi32(r0, r1), _mm512_unpackhi_epi32(r0, r1));
    let (t2, t3) = (_mm512_unpacklo_epi32(r2, r3), _mm512_unpackhi_epi32(r2, r3));
    [
        _mm512_unpacklo_epi64(t0, t2),
        _mm512_unpackhi_epi64(t0, t2),
        _mm512_unpacklo_epi64(t1, t3),
        _mm512_unpackhi_epi64(t1, t3),
    ]
}

#[target_feature(enable = "avx512f")]
#[inline]
fn multiply(h: V) -> V {
    _mm512_mullo_epi32(h, _mm512_set1_epi32(MULTIPLIER as i32))
}

#[target_feature(enable = "avx512f")]
#[inline]
fn mix(h: V, word: V) -> V {
    let h = multiply(_mm512_add_epi32(h, word));
    _mm512_xor_si512(h, _mm512_srli_epi32::<16>(h))
}

#[target_feature(enable = "avx512f")]
#[inline]
fn mix_tail(h: V, tail: V) -> V {
    let h = multiply(_mm512_add_epi32(h, tail));
    _mm512_xor_si512(h, _mm512_srli_epi32::<24>(h))
}

#[target_feature(enable = "avx512f")]
#[inline]
pub(super) fn splat(x: u32) -> V {
    _mm512_set1_epi32(x as i32)
}

#[target_feature(enable = "avx512f")]
#[inline]
fn shift_right(v: V, bits: i32) -> V {
    _mm512_srl_epi32(v, _mm_cvtsi32_si128(bits))
}

#[target_feature(enable = "avx512f")]
#[inline]
pub(super) fn to_vector(lanes: [u32; LANES]) -> V {
    // SAFETY: reads the 64 bytes of the array; unaligned loads are allowed.
    unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) }
}

#[target_feature(enable = "avx512f")]
#[inline]
fn store(out: &mut [u32], v: V) {
    assert!(out.len() >= LANES);
    // SAFETY: writes 64 bytes into `out`, which has room for them; unaligned
    // stores are allowed.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), v) };
}
