/* qs8-gemm for WebAssembly relaxed SIMD: tiles of 4 rows x 2 columns, 16 bytes of k a step, through
 * i32x4.relaxed_dot_i8x16_i7x16_add_s. That instruction is only defined (the same bits on every engine, no
 * saturating 16-bit pair sum) when its second operand's bytes are 7-bit, 0..127. So each activation byte
 * x = a ^ a_flip (int8) is split as x = (x & 0x7F) - 128 * (x >> 7, logical): both parts are 0..127, the
 * weights (any int8) are the first operand, and w.x = dot(w, low) - 128 * dot(w, top). Each dot's pair sums
 * are at most 2 * 128 * 127 = 32512 in magnitude, inside 16 bits, so the result is exact on every engine
 * (wasmtime lowers it to pmaddubsw + pmaddwd, or vpdpbusd; V8 on Arm to sdot). Edges as in
 * gemm-4x2-avx2.c; k past a multiple of 16 is finished in scalar code. */
#if defined(__wasm_simd128__) && defined(__wasm_relaxed_simd__)
#include <wasm_simd128.h>

#include "tile.h"

#define MR 4
#define NR 2

static inline int32_t sum_lanes(v128_t v) {
    v = wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_i32x4_extract_lane(v, 0);
}

void mlcc_qs8_gemm__wasmrelaxed(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                                const struct mlcc_qs8_requant *rq) {
    const size_t k16 = k & ~(size_t)15;
    const v128_t flip = wasm_i8x16_splat((int8_t)a_flip), low7 = wasm_i8x16_splat(0x7F);
    for (size_t i = 0; i < m; i += MR) {
        const size_t mr = MLCC_MIN(MR, m - i);
        const uint8_t *ar[MR];
        for (size_t r = 0; r < MR; ++r) ar[r] = a + (i + (r < mr ? r : 0)) * lda;
        for (size_t j = 0; j < n; j += NR) {
            const size_t nr = MLCC_MIN(NR, n - j);
            const int8_t *wc[NR] = {w + j * ldw, w + (j + (nr > 1 ? 1 : 0)) * ldw};
            v128_t low[MR][NR], top[MR][NR];
            for (size_t r = 0; r < MR; ++r)
                for (size_t q = 0; q < NR; ++q) low[r][q] = top[r][q] = wasm_i32x4_splat(0);
            for (size_t p = 0; p < k16; p += 16) {
                const v128_t b[NR] = {wasm_v128_load(wc[0] + p), wasm_v128_load(wc[1] + p)};
                for (size_t r = 0; r < MR; ++r) {
                    const v128_t x = wasm_v128_xor(wasm_v128_load(ar[r] + p), flip);
                    const v128_t x_low = wasm_v128_and(x, low7), x_top = wasm_u8x16_shr(x, 7);
                    for (size_t q = 0; q < NR; ++q) {
                        low[r][q] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(b[q], x_low, low[r][q]);
                        top[r][q] = wasm_i32x4_relaxed_dot_i8x16_i7x16_add(b[q], x_top, top[r][q]);
                    }
                }
            }
            for (size_t r = 0; r < mr; ++r) {
                for (size_t q = 0; q < nr; ++q) {
                    /* unsigned: the parts may pass 2^31 where the whole does not */
                    const uint32_t sum = (uint32_t)sum_lanes(low[r][q]) - ((uint32_t)sum_lanes(top[r][q]) << 7);
                    c[(i + r) * c_rs + (j + q) * c_cs] = mlcc_qs8_gemm_finish((int32_t)sum, ar[r], a_flip, wc[q], k16, k, j + q, rq);
                }
            }
        }
    }
}
#endif
