//! The AVX2 level: 8 keys hashed at once, probes located 4 at a time.

use std::arch::x86_64::*;

use super::level::Avx2;
use super::BLOCK;
use crate::hash::MULTIPLIER;
use crate::reduce::FastRemainder;

const LANES: usize = 8;
type V = __m256i;

lane_hasher!("avx2", Avx2);

/// # Safety
/// Every key must have at least `at + 16` bytes.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn rows(keys: &[&[u8]; LANES], at: usize) -> [V; 4] {
    // SAFETY: 16 readable bytes at `at` in every key, per the caller; unaligned
    // loads are allowed.
    let load = |i: usize| unsafe { _mm_loadu_si128(keys[i].as_ptr().add(at).cast()) };
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

#[target_feature(enable = "avx2")]
fn locate(bits: FastRemainder, hashes: &[u32], rows: &mut [[u32; BLOCK]]) -> bool {
    let mut lanes = [0u32; BLOCK];
    lanes[..hashes.len()].copy_from_slice(hashes);
    let reciprocal = bits.reciprocal();
    let low = _mm256_set1_epi64x(reciprocal as u32 as i64);
    let high = _mm256_set1_epi64x((reciprocal >> 32) as i64);
    let bytes = _mm256_set1_epi64x(bits.bytes() as i64);
    let last = _mm256_set1_epi64x(bits.bytes() as i64 - 1);
    let mut beyond = _mm256_setzero_si256();
    for quarter in 0..BLOCK / 4 {
        // SAFETY: reads 16 bytes of the array; unaligned loads are allowed.
        let mut h = unsafe { _mm_loadu_si128(lanes[4 * quarter..].as_ptr().cast()) };
        let delta = _mm_or_si128(_mm_srli_epi32::<17>(h), _mm_slli_epi32::<15>(h));
        for row in rows.iter_mut() {
            let h64 = _mm256_cvtepu32_epi64(h);
            // The low 64 bits of reciprocal × h, from 32-bit halves.
            let fraction = _mm256_add_epi64(
                _mm256_mul_epu32(h64, low),
                _mm256_slli_epi64::<32>(_mm256_mul_epu32(h64, high)),
            );
            let a = _mm256_mul_epu32(_mm256_srli_epi64::<32>(fraction), bytes);
            let b = _mm256_mul_epu32(fraction, bytes);
            let byte = _mm256_srli_epi64::<32>(_mm256_add_epi64(a, _mm256_srli_epi64::<32>(b)));
            let bit = _mm256_srli_epi64::<61>(_mm256_add_epi64(_mm256_slli_epi64::<32>(a), b));
            beyond = _mm256_or_si256(beyond, _mm256_cmpgt_epi64(byte, last));
            let position = _mm256_or_si256(_mm256_slli_epi64::<3>(byte), bit);
            store_4(&mut row[4 * quarter..4 * quarter + 4], position);
            h = _mm_add_epi32(h, delta);
        }
    }
    _mm256_testz_si256(beyond, beyond) == 1
}

/// Stores the low halves of 4 64-bit lanes.
#[target_feature(enable = "avx2")]
#[inline]
fn store_4(out: &mut [u32], v: V) {
    assert!(out.len() >= 4);
    let packed = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7));
    // SAFETY: writes 16 bytes into `out`, which has room for them.
    unsafe { _mm_storeu_si128(out.as_mut_ptr().cast(), _mm256_castsi256_si128(packed)) };
}
