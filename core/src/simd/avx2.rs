//! The AVX2 level: 8 keys hashed at once.

use std::arch::x86_64::*;

use super::level::Avx2;
use crate::hash::MULTIPLIER;

const LANES: usize = 8;
type V = __m256i;

lane_hasher!("avx2", Avx2);

/// # Safety
/// Every key must be readable for `at + 16` bytes from its start.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn rows(keys: &[*const u8; LANES], at: usize) -> [V; 4] {
    // SAFETY: 16 readable bytes at `at` in every key, per the caller; unaligned
    // loads are allowed.
    let load = |i: usize| unsafe { _mm_loadu_si128(keys[i].add(at).cast()) };
    std::array::from_fn(|r| _mm256_set_m128i(load(r + 4), load(r)))
}

#[target_feature(enable = "avx2")]
#[inline]
fn transpose([r0, r1, r2, r3]: [V; 4]) -> [V; 4] {
    let (t0, t1) = (_mm256_unpacklo_epi32(r0, r1), _mm256_unpackhi_epi32(r0, r1));
    let (t2, t3) = (_mm256_unpacklo_epi32(r2, r3), _mm256_unpackhi_epi32(r2, r3));
    [
        _mm256_unpacklo_epi64(t0, t2),
        _mm256_unpackhi_epi64(t0, t2),
        _mm256_unpacklo_epi64(t1, t3),
        _mm256_unpackhi_epi64(t1, t3),
    ]
}

#[target_feature(enable = "avx2")]
#[inline]
fn multiply(h: V) -> V {
    _mm256_mullo_epi32(h, _mm256_set1_epi32(MULTIPLIER as i32))
}

#[target_feature(enable = "avx2")]
#[inline]
fn mix(h: V, word: V) -> V {
    let h = multiply(_mm256_add_epi32(h, word));
    _mm256_xor_si256(h, _mm256_srli_epi32::<16>(h))
}

#[target_feature(enable = "avx2")]
#[inline]
fn mix_tail(h: V, tail: V) -> V {
    let h = multiply(_mm256_add_epi32(h, tail));
    _mm256_xor_si256(h, _mm256_srli_epi32::<24>(h))
}

#[target_feature(enable = "avx2")]
#[inline]
fn splat(x: u32) -> V {
    _mm256_set1_epi32(x as i32)
}

#[target_feature(enable = "avx2")]
#[inline]
fn shift_right(v: V, bits: i32) -> V {
    _mm256_srl_epi32(v, _mm_cvtsi32_si128(bits))
}

#[target_feature(enable = "avx2")]
#[inline]
fn to_vector(lanes: [u32; LANES]) -> V {
    // SAFETY: reads the 32 bytes of the array; unaligned loads are allowed.
    unsafe { _mm256_loadu_si256(lanes.as_ptr().cast()) }
}

#[target_feature(enable = "avx2")]
#[inline]
fn store(out: &mut [u32], v: V) {
    assert!(out.len() >= LANES);
    // SAFETY: writes 32 bytes into `out`, which has room for them; unaligned
    // stores are allowed.
    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) };
}
