/* qs8 requantization (mlcc/kernels/qs8-gemm.h's mlcc_qs8_requantize) of 4 lanes with their own multipliers and
 * shifts in WebAssembly SIMD128, bit for bit, for the channels-last int8 kernels (qs8-packed, qs8-dwconv).
 * SIMD128 has no per-lane shift counts, so a right shift by s (31..62) is a uniform shift and a multiply:
 * v = acc * multiplier + 2^(s-1) + 2^62 is positive and below 2^63, so u = v >> 31 fits 32 bits and
 * floor(v / 2^s) = floor(u * 2^(62-s) / 2^31), both products exact in 64 bits (i64x2.extmul); the 2^62 added
 * comes back out as 2^(62-s). A shift below 31 (a real multiplier of 1/2 or more) is brought to 31 first
 * (mlcc_qs8_scale_up4_wasm): the accumulator clamped to +-bound, past which the result saturates anyway (it is
 * monotonic in acc and |result| reaches 1024 there, beyond any clamp range), then multiplied by 2^(31-s),
 * which fits 32 bits below the bound: acc * m / 2^s = acc * 2^(31-s) * m / 2^31 exactly. */
#ifndef MLCC_QS8_REQUANT_WASM_H
#define MLCC_QS8_REQUANT_WASM_H
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include "mlcc/runtime.h"

/* A lane's rounding term 2^(shift-1) + 2^62 and factor 2^(62-shift), laid out once per channel */
static inline void mlcc_qs8_wasm_shift_terms(int32_t shift, uint64_t *round, uint32_t *factor) {
    *round = ((uint64_t)1 << (shift - 1)) + ((uint64_t)1 << 62);
    *factor = (uint32_t)1 << (62 - shift);
}

/* A lane's terms for any shift 1..62: the bounds and scale of mlcc_qs8_scale_up4_wasm (no-ops at 31 and above), and
 * the rounding term and factor of the shift it brings the lane to */
static inline void mlcc_qs8_wasm_lane_terms(int32_t multiplier, int32_t shift, uint64_t *round, uint32_t *factor,
                                            int32_t *lower, int32_t *upper, int32_t *scale) {
    if (shift >= 31) {
        *lower = INT32_MIN;
        *upper = INT32_MAX;
        *scale = 1;
    } else {  /* bound = ceil(2^(s+10) / m) <= 2^(s-20) + 1, so bound * 2^(31-s) <= 2^11 + 2^30 */
        const uint64_t m = (uint64_t)multiplier, bound = m ? (((uint64_t)1 << (shift + 10)) + m - 1) / m : 0;
        *upper = (int32_t)bound;
        *lower = -(int32_t)bound;
        *scale = (int32_t)1 << (31 - shift);
        shift = 31;
    }
    mlcc_qs8_wasm_shift_terms(shift, round, factor);
}

/* 4 accumulators with shifts below 31 brought to 31 (lanes at 31 or above unchanged) */
static inline v128_t mlcc_qs8_scale_up4_wasm(v128_t acc, const int32_t *lower, const int32_t *upper, const int32_t *scale) {
    return wasm_i32x4_mul(wasm_i32x4_min(wasm_i32x4_max(acc, wasm_v128_load(lower)), wasm_v128_load(upper)), wasm_v128_load(scale));
}

/* 4 accumulators (bias included) to y_zero + their requantized values, clamped to [low, high] = [y_min - y_zero,
 * y_max - y_zero] before y_zero is added (no 32-bit overflow on the way) */
static inline v128_t mlcc_qs8_requant4_wasm(v128_t acc, const int32_t *multiplier, const uint64_t *round, const uint32_t *factor,
                                            v128_t low, v128_t high, v128_t zero) {
    const v128_t mult = wasm_v128_load(multiplier), f = wasm_v128_load(factor);
    v128_t lo = wasm_i64x2_add(wasm_i64x2_extmul_low_i32x4(acc, mult), wasm_v128_load(round));
    v128_t hi = wasm_i64x2_add(wasm_i64x2_extmul_high_i32x4(acc, mult), wasm_v128_load(round + 2));
    const v128_t u = wasm_i32x4_shuffle(wasm_u64x2_shr(lo, 31), wasm_u64x2_shr(hi, 31), 0, 2, 4, 6);
    lo = wasm_u64x2_shr(wasm_u64x2_extmul_low_u32x4(u, f), 31);
    hi = wasm_u64x2_shr(wasm_u64x2_extmul_high_u32x4(u, f), 31);
    const v128_t v = wasm_i32x4_sub(wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6), f);
    return wasm_i32x4_add(wasm_i32x4_min(wasm_i32x4_max(v, low), high), zero);
}

/* 16 clamped values (4 vectors of 4) as bytes, uint8 or int8 as the clamp range says: either narrowing keeps them */
static inline v128_t mlcc_qs8_narrow16_wasm(v128_t v0, v128_t v1, v128_t v2, v128_t v3, bool signed_out) {
    const v128_t w0 = wasm_i16x8_narrow_i32x4(v0, v1), w1 = wasm_i16x8_narrow_i32x4(v2, v3);
    return signed_out ? wasm_i8x16_narrow_i16x8(w0, w1) : wasm_u8x16_narrow_i16x8(w0, w1);
}

#endif /* __wasm_simd128__ */
#endif /* MLCC_QS8_REQUANT_WASM_H */
