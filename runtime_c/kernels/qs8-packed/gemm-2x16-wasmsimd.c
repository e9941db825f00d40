/* qs8-packed GEMM for WebAssembly SIMD128 (see qs8-packed.h): tiles of 2 rows x one 16-column panel. Each
 * 16 bytes of a panel's quad (4 columns x 4 bytes of k) are sign-extended to 16 bits in two halves, and
 * i32x4.dot_i16x8_s multiplies a half by the row's quad (its 4 bytes twice) and sums pairs of exact 16-bit
 * products into 32 bits: no saturation. Each column's two pair sums are added at the end; requantization is
 * vectorised with each lane's multiplier and shift (requant-wasm.h). A shift below 31 (a real multiplier of 1
 * or more) takes the reference's code. */
#if defined(__wasm_simd128__)
#include "requant-wasm.h"

#define MR 2

/* `mr` rows (a constant where it is inlined: 2, then 1 for the last odd row) times one panel */
static inline __attribute__((always_inline)) void tile(size_t mr, const void *operand, size_t i, const void *state, uint8_t *c,
                                                       size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_packed_rows *rows = operand;
    const struct mlcc_qs8_panel_rq *p = state;
    const uint8_t *a = rows->a + i * rows->lda;
    const uint8_t a_flip = rows->a_flip;
    const size_t lda = rows->lda, k = rows->k, nr = p->nr;
    const int8_t *weights = p->weights;
    const size_t k4 = k / 4, quads = (k + 3) / 4;
    const v128_t flip = wasm_i8x16_splat((int8_t)a_flip);
    v128_t acc[MR][8];
    for (size_t r = 0; r < mr; ++r)
        for (size_t t = 0; t < 8; ++t) acc[r][t] = wasm_i32x4_splat(0);
    for (size_t q = 0; q < quads; ++q) {
        v128_t x[MR];
        for (size_t r = 0; r < mr; ++r) {
            const v128_t bytes = q < k4 ? wasm_v128_xor(wasm_v128_load32_splat(a + r * lda + 4 * q), flip)
                                        : wasm_i32x4_splat((int32_t)mlcc_qs8_row_quad(a + r * lda, q, k, a_flip * 0x01010101u));
            x[r] = wasm_i16x8_extend_low_i8x16(bytes);
        }
        const int8_t *wq = weights + q * 64;
        for (size_t b = 0; b < 4; ++b) {
            const v128_t ws = wasm_v128_load(wq + 16 * b);
            const v128_t w_lo = wasm_i16x8_extend_low_i8x16(ws), w_hi = wasm_i16x8_extend_high_i8x16(ws);
            for (size_t r = 0; r < mr; ++r) {
                acc[r][2 * b] = wasm_i32x4_add(acc[r][2 * b], wasm_i32x4_dot_i16x8(w_lo, x[r]));
                acc[r][2 * b + 1] = wasm_i32x4_add(acc[r][2 * b + 1], wasm_i32x4_dot_i16x8(w_hi, x[r]));
            }
        }
    }
    const v128_t low = wasm_i32x4_splat(rq->y_min - rq->y_zero), high = wasm_i32x4_splat(rq->y_max - rq->y_zero);
    const v128_t zero = wasm_i32x4_splat(rq->y_zero);
    for (size_t r = 0; r < mr; ++r) {
        v128_t v[4];
        for (size_t b = 0; b < 4; ++b) {  /* lanes (c0, c0, c1, c1) and (c2, c2, c3, c3): pair sums */
            const v128_t s = wasm_i32x4_add(wasm_i32x4_shuffle(acc[r][2 * b], acc[r][2 * b + 1], 0, 2, 4, 6),
                                            wasm_i32x4_shuffle(acc[r][2 * b], acc[r][2 * b + 1], 1, 3, 5, 7));
            v[b] = mlcc_qs8_panel_requant4(s, p, b, low, high, zero);
        }
        mlcc_qs8_store16_wasm(v[0], v[1], v[2], v[3], rq->y_min < 0, c + r * ldc, nr);
    }
}

void mlcc_qs8_packed_gemm__wasmsimd(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                    const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_packed_rows rows = {a, lda, k, a_flip};
    struct mlcc_qs8_panel_rq p;
    if (!mlcc_qs8_packed_walk(MR, true, m, n, k, &rows, packed, c, ldc, rq, &p, mlcc_qs8_panel_rq_load, tile)) {
        mlcc_qs8_packed_gemm__reference(m, n, k, a, lda, a_flip, packed, c, ldc, rq);
    }
}
#endif
