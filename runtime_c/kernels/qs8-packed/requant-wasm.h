/* The WebAssembly qs8-packed kernels' per-panel parameters and requantization, 4 columns at a time, bit for bit
 * as mlcc_qs8_requantize. SIMD128 has no per-lane shift counts, so the column's right shift by s (31..62) is
 * done as a uniform shift and a multiply: v = acc * multiplier + 2^(s-1) + 2^62 is positive and below 2^63, so
 * u = v >> 31 fits 32 bits and floor(v / 2^s) = floor(u * 2^(62-s) / 2^31), both products exact in 64 bits
 * (i64x2.extmul); the 2^62 added comes back out as 2^(62-s). */
#ifndef MLCC_QS8_PACKED_REQUANT_WASM_H
#define MLCC_QS8_PACKED_REQUANT_WASM_H

#include <wasm_simd128.h>

#include "mlcc/kernels/qs8-packed.h"

/* One panel's 16 columns: past n, a zero bias and a neutral multiplier (their bytes are not stored) */
struct mlcc_qs8_panel_rq {
    int32_t bias[16], multiplier[16];
    uint32_t factor[16];  /* 2^(62 - shift) */
    uint64_t round[16];   /* 2^(shift - 1) + 2^62 */
};

static inline void mlcc_qs8_panel_rq_load(struct mlcc_qs8_panel_rq *p, const struct mlcc_qs8_requant *rq, size_t j, size_t nr) {
    for (size_t q = 0; q < 16; ++q) {
        const int32_t shift = q < nr ? rq->shift[j + q] : 31;
        p->bias[q] = q < nr ? rq->bias[j + q] : 0;
        p->multiplier[q] = q < nr ? rq->multiplier[j + q] : 1 << 30;
        p->factor[q] = (uint32_t)1 << (62 - shift);
        p->round[q] = ((uint64_t)1 << (shift - 1)) + ((uint64_t)1 << 62);
    }
}

/* Columns 4b .. 4b + 3 of one row: their accumulators (bias not yet added) to values clamped to
 * [low, high] = [y_min - y_zero, y_max - y_zero], then y_zero added (no 32-bit overflow on the way) */
static inline v128_t mlcc_qs8_requant4_wasm(v128_t acc, const struct mlcc_qs8_panel_rq *p, size_t b, v128_t low, v128_t high,
                                            v128_t zero) {
    acc = wasm_i32x4_add(acc, wasm_v128_load(p->bias + 4 * b));
    const v128_t mult = wasm_v128_load(p->multiplier + 4 * b), factor = wasm_v128_load(p->factor + 4 * b);
    v128_t lo = wasm_i64x2_add(wasm_i64x2_extmul_low_i32x4(acc, mult), wasm_v128_load(p->round + 4 * b));
    v128_t hi = wasm_i64x2_add(wasm_i64x2_extmul_high_i32x4(acc, mult), wasm_v128_load(p->round + 4 * b + 2));
    const v128_t u = wasm_i32x4_shuffle(wasm_u64x2_shr(lo, 31), wasm_u64x2_shr(hi, 31), 0, 2, 4, 6);
    lo = wasm_u64x2_shr(wasm_u64x2_extmul_low_u32x4(u, factor), 31);
    hi = wasm_u64x2_shr(wasm_u64x2_extmul_high_u32x4(u, factor), 31);
    const v128_t v = wasm_i32x4_sub(wasm_i32x4_shuffle(lo, hi, 0, 2, 4, 6), factor);
    return wasm_i32x4_add(wasm_i32x4_min(wasm_i32x4_max(v, low), high), zero);
}

/* 16 clamped values (4 vectors of 4) stored as bytes: nr of them at c */
static inline void mlcc_qs8_store16_wasm(v128_t v0, v128_t v1, v128_t v2, v128_t v3, bool signed_out, uint8_t *c, size_t nr) {
    const v128_t w0 = wasm_i16x8_narrow_i32x4(v0, v1), w1 = wasm_i16x8_narrow_i32x4(v2, v3);
    const v128_t bytes = signed_out ? wasm_i8x16_narrow_i16x8(w0, w1) : wasm_u8x16_narrow_i16x8(w0, w1);
    if (nr == 16) {
        wasm_v128_store(c, bytes);
    } else {
        uint8_t lanes[16];
        wasm_v128_store(lanes, bytes);
        for (size_t q = 0; q < nr; ++q) c[q] = lanes[q];
    }
}

/* A row's bytes 4q .. 4q + 3 ^ flip, zero past k (where the panel is zero too) */
static inline uint32_t mlcc_qs8_row_quad(const uint8_t *row, size_t q, size_t k, uint32_t flip) {
    uint32_t bytes = 0;
    for (size_t p = 4 * q; p < k && p < 4 * q + 4; ++p) bytes |= (uint32_t)row[p] << (8 * (p - 4 * q));
    return bytes ^ flip;
}

#endif /* MLCC_QS8_PACKED_REQUANT_WASM_H */
