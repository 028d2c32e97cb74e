//! The AVX-512 level: 16 keys hashed at once, probes located 8 at a time.

use std::arch::x86_64::*;

use super::level::Avx512;
use super::BLOCK;
use crate::hash::MULTIPLIER;
use crate::reduce::FastRemainder;

const LANES: usize = 16;
type V = __m512i;

lane_hasher!("avx512f,avx512dq", Avx512);

/// # Safety
/// Every key must have at least `at + 16` bytes.
#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
unsafe fn rows(keys: &[&[u8]; LANES], at: usize) -> [V; 4] {
    // SAFETY: 16 readable bytes at `at` in every key, per the caller; unaligned
    // loads are allowed.
    let load = |i: usize| unsafe { _mm_loadu_si128(keys[i].as_ptr().add(at).cast()) };
    std::array::from_fn(|r| {
        let v = _mm512_castsi128_si512(load(r));
        let v = _mm512_inserti32x4::<1>(v, load(r + 4));
        let v = _mm512_inserti32x4::<2>(v, load(r + 8));
        _mm512_inserti32x4::<3>(v, load(r + 12))
    })
}

#[target_feature(enable = "avx512f,avx512dq")]
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

#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
fn multiply(h: V) -> V {
    _mm512_mullo_epi32(h, _mm512_set1_epi32(MULTIPLIER as i32))
}

#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
fn mix(h: V, word: V) -> V {
    let h = multiply(_mm512_add_epi32(h, word));
    _mm512_xor_si512(h, _mm512_srli_epi32::<16>(h))
}

#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
fn mix_tail(h: V, tail: V) -> V {
    let h = multiply(_mm512_add_epi32(h, tail));
    _mm512_xor_si512(h, _mm512_srli_epi32::<24>(h))
}

#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
fn splat(x: u32) -> V {
    _mm512_set1_epi32(x as i32)
}

#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
fn shift_right(v: V, bits: i32) -> V {
    _mm512_srl_epi32(v, _mm_cvtsi32_si128(bits))
}

#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
fn to_vector(lanes: [u32; LANES]) -> V {
    // SAFETY: reads the 64 bytes of the array; unaligned loads are allowed.
    unsafe { _mm512_loadu_si512(lanes.as_ptr().cast()) }
}

#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
fn store(out: &mut [u32], v: V) {
    assert!(out.len() >= LANES);
    // SAFETY: writes 64 bytes into `out`, which has room for them; unaligned
    // stores are allowed.
    unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), v) };
}

#[target_feature(enable = "avx512f,avx512dq")]
fn locate(bits: FastRemainder, hashes: &[u32], rows: &mut [[u32; BLOCK]]) -> bool {
    const { assert!(BLOCK == LANES) };
    let mut lanes = [0u32; BLOCK];
    lanes[..hashes.len()].copy_from_slice(hashes);
    let mut h = to_vector(lanes);
    let delta = _mm512_ror_epi32::<17>(h);
    let reciprocal = _mm512_set1_epi64(bits.reciprocal() as i64);
    let bytes = _mm512_set1_epi64(bits.bytes() as i64);
    let mut beyond: __mmask8 = 0;
    for row in rows.iter_mut() {
        let low = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(h));
        let high = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64::<1>(h));
        let (low_byte, low_position) = locate_8(low, reciprocal, bytes);
        let (high_byte, high_position) = locate_8(high, reciprocal, bytes);
        beyond |= _mm512_cmpge_epu64_mask(low_byte, bytes);
        beyond |= _mm512_cmpge_epu64_mask(high_byte, bytes);
        store(row, join(low_position, high_position));
        h = _mm512_add_epi32(h, delta);
    }
    beyond == 0
}

/// What `FastRemainder::locate` computes, for 8 hashes in 64-bit lanes:
/// fraction × bytes = a·2^32 + b, with a = (fraction >> 32) × bytes and b =
/// (fraction mod 2^32) × bytes; its high word is the byte, and the top three bits
/// of its low word the bit. Returns the byte and the position, 8 × byte + bit.
#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
fn locate_8(h: V, reciprocal: V, bytes: V) -> (V, V) {
    let fraction = _mm512_mullo_epi64(h, reciprocal);
    let a = _mm512_mul_epu32(_mm512_srli_epi64::<32>(fraction), bytes);
    let b = _mm512_mul_epu32(fraction, bytes);
    let byte = _mm512_srli_epi64::<32>(_mm512_add_epi64(a, _mm512_srli_epi64::<32>(b)));
    let bit = _mm512_srli_epi64::<61>(_mm512_add_epi64(_mm512_slli_epi64::<32>(a), b));
    (byte, _mm512_or_si512(_mm512_slli_epi64::<3>(byte), bit))
}

/// The low halves of the 64-bit lanes of `low` then `high`, as 16 32-bit lanes.
#[target_feature(enable = "avx512f,avx512dq")]
#[inline]
fn join(low: V, high: V) -> V {
    _mm512_inserti64x4::<1>(
        _mm512_castsi256_si512(_mm512_cvtepi64_epi32(low)),
        _mm512_cvtepi64_epi32(high),
    )
}
