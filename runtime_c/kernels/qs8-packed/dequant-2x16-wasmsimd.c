/* qs8-packed's dequantizing forms for WebAssembly SIMD128 (see qs8-packed.h): tiles of 2 rows x one 16-column
 * panel as gemm-2x16-wasmsimd.c's. A row's 4 values of k are widened to 16 bits as they are (zero-extended
 * uint8, sign-extended int8), each 16 bytes of the panel's quad sign-extended in two halves, and
 * i32x4.dot_i16x8_s sums pairs of exact 16-bit products into 32 bits (no saturation); each column's two pair
 * sums are added at the end. The accumulators start at -a_zero * sums, so they hold sum (a - a_zero) * w
 * exactly; then stored as int32, or converted to float, multiplied by the scale and offset one rounding each,
 * as the reference's scalar statements: bit-identical. */
#if defined(__wasm_simd128__)
#include <string.h>
#include <wasm_simd128.h>

#include "walk.h"

#define MR 2

struct panel {
    const int8_t *weights;
    v128_t start[4], scale[4], offset[4];
    size_t nr;
    bool floats, scaled, offset_added;
};

/* a mlcc_qs8_packed_dequant_panel_fn */
static inline void panel_of(void *state, const int8_t *base, size_t j, size_t nr, const struct mlcc_qs8_dequant *dq,
                            uint8_t a_flip) {
    (void)a_flip;
    struct panel *pn = state;
    pn->nr = nr;
    pn->weights = base + 64;
    pn->scaled = dq->scale != NULL;
    pn->offset_added = dq->offset != NULL;
    float scale[16] = {0.0f}, offset[16] = {0.0f};
    for (size_t q = 0; q < nr; ++q) {
        if (dq->scale) scale[q] = dq->scale[(j + q) * dq->scale_step];
        if (dq->offset) offset[q] = dq->offset[j + q];
    }
    const v128_t zero_point = wasm_i32x4_splat(-dq->a_zero);
    for (size_t b = 0; b < 4; ++b) {
        pn->start[b] = wasm_i32x4_mul(wasm_v128_load(base + 16 * b), zero_point);
        pn->scale[b] = wasm_v128_load(scale + 4 * b);
        pn->offset[b] = wasm_v128_load(offset + 4 * b);
    }
}

static inline __attribute__((always_inline)) void tile_rows(size_t mr, const uint8_t *a, size_t lda, size_t k,
                                                            bool uint8_rows, const struct panel *pn, uint32_t *c,
                                                            size_t ldc) {
    const size_t k4 = k / 4, quads = (k + 3) / 4;
    v128_t acc[MR][8];
    for (size_t r = 0; r < mr; ++r)
        for (size_t t = 0; t < 8; ++t) acc[r][t] = wasm_i32x4_splat(0);
    for (size_t q = 0; q < quads; ++q) {
        v128_t x[MR];
        for (size_t r = 0; r < mr; ++r) {
            const v128_t bytes = q < k4 ? wasm_v128_load32_splat(a + r * lda + 4 * q)
                                        : wasm_i32x4_splat((int32_t)mlcc_qs8_row_quad(a + r * lda, q, k, 0));
            x[r] = uint8_rows ? wasm_u16x8_extend_low_u8x16(bytes) : wasm_i16x8_extend_low_i8x16(bytes);
        }
        const int8_t *wq = pn->weights + q * 64;
        for (size_t b = 0; b < 4; ++b) {
            const v128_t ws = wasm_v128_load(wq + 16 * b);
            const v128_t w_lo = wasm_i16x8_extend_low_i8x16(ws), w_hi = wasm_i16x8_extend_high_i8x16(ws);
            for (size_t r = 0; r < mr; ++r) {
                acc[r][2 * b] = wasm_i32x4_add(acc[r][2 * b], wasm_i32x4_dot_i16x8(w_lo, x[r]));
                acc[r][2 * b + 1] = wasm_i32x4_add(acc[r][2 * b + 1], wasm_i32x4_dot_i16x8(w_hi, x[r]));
            }
        }
    }
    for (size_t r = 0; r < mr; ++r) {
        uint32_t out[16];
        for (size_t b = 0; b < 4; ++b) {  /* lanes (c0, c0, c1, c1) and (c2, c2, c3, c3): pair sums */
            const v128_t s = wasm_i32x4_add(wasm_i32x4_shuffle(acc[r][2 * b], acc[r][2 * b + 1], 0, 2, 4, 6),
                                            wasm_i32x4_shuffle(acc[r][2 * b], acc[r][2 * b + 1], 1, 3, 5, 7));
            v128_t v = wasm_i32x4_add(s, pn->start[b]);
            if (pn->floats) {
                v = wasm_f32x4_convert_i32x4(v);
                if (pn->scaled) v = wasm_f32x4_mul(v, pn->scale[b]);
                if (pn->offset_added) v = wasm_f32x4_add(v, pn->offset[b]);
            }
            if (pn->nr == 16) {
                wasm_v128_store(c + r * ldc + 4 * b, v);
            } else {
                wasm_v128_store(out + 4 * b, v);
            }
        }
        if (pn->nr < 16) memcpy(c + r * ldc, out, 4 * pn->nr);
    }
}

/* a mlcc_qs8_packed_dequant_tile_fn */
static inline __attribute__((always_inline)) void tile(size_t mr, const struct mlcc_qs8_packed_rows *rows, size_t i,
                                                       const void *state, void *c, size_t ldc) {
    const uint8_t *a = rows->a + i * rows->lda;
    if (rows->a_flip) {
        tile_rows(mr, a, rows->lda, rows->k, true, state, c, ldc);
    } else {
        tile_rows(mr, a, rows->lda, rows->k, false, state, c, ldc);
    }
}

void mlcc_qs8_packed_gemm_f32__wasmsimd(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                        const int8_t *packed, float *c, size_t ldc, const struct mlcc_qs8_dequant *dq) {
    const struct mlcc_qs8_packed_rows rows = {a, lda, k, a_flip};
    struct panel pn = {.floats = true};
    mlcc_qs8_packed_dequant_walk(MR, m, n, &rows, packed, c, ldc, dq, &pn, panel_of, tile);
}

void mlcc_qs8_packed_gemm_s32__wasmsimd(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                        const int8_t *packed, int32_t *c, size_t ldc, const struct mlcc_qs8_dequant *dq) {
    const struct mlcc_qs8_packed_rows rows = {a, lda, k, a_flip};
    struct panel pn = {.floats = false};
    mlcc_qs8_packed_dequant_walk(MR, m, n, &rows, packed, c, ldc, dq, &pn, panel_of, tile);
}
#endif
