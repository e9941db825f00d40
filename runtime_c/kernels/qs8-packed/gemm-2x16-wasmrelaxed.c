/* qs8-packed GEMM for WebAssembly relaxed SIMD (see qs8-packed.h): tiles of 2 rows x one 16-column panel, one
 * i32x4.relaxed_dot_i8x16_i7x16_add_s per 4 columns x 4 bytes of k: the panel's 16 bytes as they are packed
 * times the row's quad broadcast, each lane summing its column's 4 products. The instruction is defined the
 * same on every engine only for a second operand of 7-bit bytes (0..127), so the activation x = a ^ a_flip is
 * split as (x & 0x7F) - 128 * (x >> 7, logical) and two dot products are kept (as qs8-gemm's
 * gemm-4x2-wasmrelaxed.c): each pair sum is at most 2 * 128 * 127 in magnitude, so the result is exact.
 * Requantization as the SIMD128 form (requant-wasm.h), every shift in vectors. */
#if defined(__wasm_simd128__) && defined(__wasm_relaxed_simd__)
#include "requant-wasm.h"

#define MR 2

static inline __attribute__((always_inline)) void tile(size_t mr, const void *operand, size_t i, const void *state, uint8_t *c,
                                                       size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_packed_rows *rows = operand;
    const struct mlcc_qs8_panel_rq *p = state;
    const uint8_t *a = rows->a + i * rows->lda;
    const uint8_t a_flip = rows->a_flip;
    const size_t lda = rows->lda, k = rows->k, nr = p->nr;
    const int8_t *weights = p->weights;
    const size_t k4 = k / 4, quads = (k + 3) / 4;
    const v128_t flip = wasm_i8x16_splat((int8_t)a_flip), low7 = wasm_i8x16_splat(0x7F);
    v128_t low[MR][4], top[MR][4];
    for (size_t r = 0; r < mr; ++r)
        for (size_t b = 0; b < 4; ++b) low[r][b] = top[r][b] = wasm_i32x4_splat(0);
    for (size_t q = 0; q < quads; ++q) {
        v128_t x_low[MR], x_top[MR];
        for (size_t r = 0; r < mr; ++r) {
            const v128_t x = q < k4 ? wasm_v128_xor(wasm_v128_load32_splat(a + r * lda + 4 * q), flip)
                                    : wasm_i32x4_splat((int32_t)mlcc_qs8_row_quad(a + r * lda, q, k, a_flip * 0x01010101u));
            x_low[r] = wasm_v128_and(x, low7);
            x_top[r] = wasm_u8x16_shr(x, 7);
        }
        const int8_t *wq = weights + q * 64;
        for (size_t b = 0; b < 4; ++b) {
            const v128_t ws = wasm_v128_load(wq + 16 * b);
            for (size_t r = 0; r < mr; ++r) {
                low[r][b] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(ws, x_low[r], low[r][b]);
                top[r][b] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(ws, x_top[r], top[r][b]);
            }
        }
    }
    const v128_t lo = wasm_i32x4_splat(rq->y_min - rq->y_zero), hi = wasm_i32x4_splat(rq->y_max - rq->y_zero);
    const v128_t zero = wasm_i32x4_splat(rq->y_zero);
    for (size_t r = 0; r < mr; ++r) {
        v128_t v[4];
        for (size_t b = 0; b < 4; ++b) {  /* modulo 2^32: the parts may pass 2^31 where the whole does not */
            v[b] = mlcc_qs8_panel_requant4(wasm_i32x4_sub(low[r][b], wasm_i32x4_shl(top[r][b], 7)), p, b, lo, hi, zero);
        }
        mlcc_qs8_store16_wasm(v[0], v[1], v[2], v[3], rq->y_min < 0, c + r * ldc, nr);
    }
}

void mlcc_qs8_packed_gemm__wasmrelaxed(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                       const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_packed_rows rows = {a, lda, k, a_flip};
    struct mlcc_qs8_panel_rq p;
    mlcc_qs8_packed_walk(MR, false, m, n, k, &rows, packed, c, ldc, rq, &p, mlcc_qs8_panel_rq_load, tile);
}
#endif
