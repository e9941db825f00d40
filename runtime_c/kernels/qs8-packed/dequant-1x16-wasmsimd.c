/* qs8-packed's dequantizing forms for WebAssembly SIMD128 (see qs8-packed.h): tiles of 1 row x one 16-column
 * panel. Each panel's weights are widened to 16 bits once for all rows, into dq->work, per pair of k as
 * (c0 k0, c0 k1, c1 k0, c1 k1, ...) 4 columns a vector; a row's pair of values, widened as they are
 * (zero-extended uint8, sign-extended int8), is splatted and i32x4.dot_i16x8_s sums the two exact 16-bit
 * products of each column into its 32-bit lane (no saturation, no horizontal sums at the end). Widening the
 * weights per tile instead cost 1.6x the time in wasmtime (a 128 x 384 x 384 product). The accumulators start
 * at -a_zero * sums, so they hold sum (a - a_zero) * w exactly; then stored as int32, or converted to float,
 * multiplied by the scale and offset one rounding each, as the reference's scalar statements: bit-identical.
 * Without dq->work the reference runs.
 * One row: wasmtime (Cranelift) keeps its 4 accumulators, 8 weight vectors and 2 splats in registers; tiles of
 * 2 rows, whose weight loads are shared, spilled 6 of their 8 accumulators to the stack every step and ran
 * 0.87x as fast (a 128 x 1536 x 384 product, alternating in one module). */
#if defined(__wasm_simd128__)
#include <string.h>
#include <wasm_simd128.h>

#include "walk.h"

#define MR 1

/* p opaque to the optimiser: LLVM then keeps the loads at p + constant as p with the constant in their offset
 * immediate (which Cranelift folds into the x86 address), instead of strength-reducing each into a pointer of
 * its own advanced by its own add every step */
#define OPAQUE(p) __asm__("" : "+r"(p))

struct panel {
    const int16_t *wide;
    v128_t start[4], scale[4], offset[4];
    size_t nr;
    bool floats, scaled, offset_added;
};

/* The panel's quads widened into `wide`: per quad, pair (k0, k1) then pair (k2, k3), each 16 columns x 2 */
static void widen_panel(const int8_t *quads, size_t k, int16_t *wide) {
    for (size_t q = 0; q < (k + 3) / 4; ++q) {
        for (size_t b = 0; b < 4; ++b) {
            const v128_t ws = wasm_i8x16_shuffle(wasm_v128_load(quads + q * 64 + 16 * b), wasm_i32x4_splat(0),
                                                 0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15);
            wasm_v128_store(wide + q * 64 + 8 * b, wasm_i16x8_extend_low_i8x16(ws));
            wasm_v128_store(wide + q * 64 + 32 + 8 * b, wasm_i16x8_extend_high_i8x16(ws));
        }
    }
}

/* a mlcc_qs8_packed_dequant_panel_fn: the panel widened, the start, scales and offsets as vectors */
static inline void panel_of(void *state, const int8_t *base, size_t j, size_t nr, size_t k,
                            const struct mlcc_qs8_dequant *dq, uint8_t a_flip, bool floats) {
    (void)a_flip;
    struct panel *pn = state;
    widen_panel(base + 64, k, dq->work);
    pn->wide = dq->work;
    pn->nr = nr;
    pn->floats = floats;
    pn->scaled = dq->scale != NULL;
    pn->offset_added = dq->offset != NULL;
    float scale[16], offset[16];
    mlcc_qs8_dequant_columns(dq, j, nr, scale, offset);
    const v128_t zero_point = wasm_i32x4_splat(-dq->a_zero);
    for (size_t b = 0; b < 4; ++b) {
        pn->start[b] = wasm_i32x4_mul(wasm_v128_load(base + 16 * b), zero_point);
        pn->scale[b] = wasm_v128_load(scale + 4 * b);
        pn->offset[b] = wasm_v128_load(offset + 4 * b);
    }
}

/* One quad of k: each row's 4 bytes at quad (rows lda apart) widened to 16 bits, times the panel's widened quad
 * w, added into acc. eight: read 8 bytes widened in one load (v128.load8x8; the quad and the next, in the row) */
static inline __attribute__((always_inline)) void step(size_t mr, const uint8_t *quad, size_t lda, uint8_t a_flip,
                                                       bool eight, const int16_t *w, v128_t acc[MR][4]) {
    v128_t x01[MR], x23[MR];
    for (size_t r = 0; r < mr; ++r) {
        v128_t x;
        if (eight) {
            x = a_flip ? wasm_u16x8_load8x8(quad + r * lda) : wasm_i16x8_load8x8(quad + r * lda);
        } else {
            const v128_t bytes = wasm_v128_load32_splat(quad + r * lda);
            x = a_flip ? wasm_u16x8_extend_low_u8x16(bytes) : wasm_i16x8_extend_low_i8x16(bytes);
        }
        x01[r] = wasm_i32x4_shuffle(x, x, 0, 0, 0, 0);
        x23[r] = wasm_i32x4_shuffle(x, x, 1, 1, 1, 1);
    }
    for (size_t b = 0; b < 4; ++b) {
        const v128_t w01 = wasm_v128_load(w + 8 * b), w23 = wasm_v128_load(w + 32 + 8 * b);
        for (size_t r = 0; r < mr; ++r) {
            acc[r][b] = wasm_i32x4_add(acc[r][b], wasm_i32x4_dot_i16x8(w01, x01[r]));
            acc[r][b] = wasm_i32x4_add(acc[r][b], wasm_i32x4_dot_i16x8(w23, x23[r]));
        }
    }
}

/* a mlcc_qs8_packed_dequant_tile_fn: a_flip 0x80, uint8 rows zero-extended; 0, int8 rows sign-extended */
static inline __attribute__((always_inline)) void tile(size_t mr, const uint8_t *a, size_t lda, size_t k,
                                                       uint8_t a_flip, const void *state, uint32_t *c, size_t ldc) {
    const struct panel *pn = state;
    const size_t k4 = k / 4;
    v128_t acc[MR][4];
    for (size_t r = 0; r < mr; ++r)
        for (size_t b = 0; b < 4; ++b) acc[r][b] = pn->start[b];
    size_t q = 0;
    for (; q + 1 < k4; ++q) {
        const int16_t *w = pn->wide + 64 * q;
        const uint8_t *quad = a + 4 * q;
        OPAQUE(w);
        OPAQUE(quad);
        step(mr, quad, lda, a_flip, true, w, acc);
    }
    for (; q < k4; ++q) step(mr, a + 4 * q, lda, a_flip, false, pn->wide + 64 * q, acc);
    if (4 * k4 < k) {  /* the last quad, zero past k */
        uint32_t rows[MR];
        for (size_t r = 0; r < mr; ++r) rows[r] = mlcc_qs8_row_quad(a + r * lda, k4, k, 0);
        step(mr, (const uint8_t *)rows, 4, a_flip, false, pn->wide + 64 * k4, acc);
    }
    for (size_t r = 0; r < mr; ++r) {
        uint32_t out[16];
        for (size_t b = 0; b < 4; ++b) {
            v128_t v = acc[r][b];
            if (pn->floats) {
                v = wasm_f32x4_convert_i32x4(v);
                if (pn->scaled) v = wasm_f32x4_mul(v, pn->scale[b]);
                if (pn->offset_added) v = wasm_f32x4_add(v, pn->offset[b]);
            }
            wasm_v128_store(pn->nr == 16 ? c + r * ldc + 4 * b : out + 4 * b, v);
        }
        if (pn->nr < 16) memcpy(c + r * ldc, out, 4 * pn->nr);
    }
}

MLCC_QS8_PACKED_DEQUANT_FORMS(wasmsimd, MR, struct panel, panel_of, tile, true)
#endif
