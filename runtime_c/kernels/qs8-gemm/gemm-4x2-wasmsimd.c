/* qs8-gemm for WebAssembly SIMD128: tiles of 4 rows x 2 columns, 16 bytes of k a step, each half
 * sign-extended to 16 bits and multiplied pairwise into 32-bit lanes (i32x4.dot_i16x8_s): exact, no
 * saturation. Edges as in gemm-4x2-avx2.c. */
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include "tile.h"

#define MR 4
#define NR 2

static inline int32_t sum_lanes(v128_t v) {
    v = wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 2, 3, 0, 1));
    v = wasm_i32x4_add(v, wasm_i32x4_shuffle(v, v, 1, 0, 3, 2));
    return wasm_i32x4_extract_lane(v, 0);
}

static inline v128_t dot16(v128_t x, v128_t b) {  /* 16 bytes times 16 bytes, as 4 lanes of pair sums */
    return wasm_i32x4_add(wasm_i32x4_dot_i16x8(wasm_i16x8_extend_low_i8x16(x), wasm_i16x8_extend_low_i8x16(b)),
                          wasm_i32x4_dot_i16x8(wasm_i16x8_extend_high_i8x16(x), wasm_i16x8_extend_high_i8x16(b)));
}

void mlcc_qs8_gemm__wasmsimd(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                             const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                             const struct mlcc_qs8_requant *rq) {
    const size_t k16 = k & ~(size_t)15;
    const v128_t flip = wasm_i8x16_splat((int8_t)a_flip);
    for (size_t i = 0; i < m; i += MR) {
        const size_t mr = MLCC_MIN(MR, m - i);
        const uint8_t *ar[MR];
        for (size_t r = 0; r < MR; ++r) ar[r] = a + (i + (r < mr ? r : 0)) * lda;
        for (size_t j = 0; j < n; j += NR) {
            const size_t nr = MLCC_MIN(NR, n - j);
            const int8_t *w0 = w + j * ldw, *w1 = w + (j + (nr > 1 ? 1 : 0)) * ldw;
            v128_t acc[MR][NR];
            for (size_t r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = wasm_i32x4_splat(0);
            for (size_t p = 0; p < k16; p += 16) {
                const v128_t b0 = wasm_v128_load(w0 + p), b1 = wasm_v128_load(w1 + p);
                for (size_t r = 0; r < MR; ++r) {
                    const v128_t x = wasm_v128_xor(wasm_v128_load(ar[r] + p), flip);
                    acc[r][0] = wasm_i32x4_add(acc[r][0], dot16(x, b0));
                    acc[r][1] = wasm_i32x4_add(acc[r][1], dot16(x, b1));
                }
            }
            for (size_t r = 0; r < mr; ++r) {
                for (size_t q = 0; q < nr; ++q) {
                    c[(i + r) * c_rs + (j + q) * c_cs] =
                        mlcc_qs8_gemm_finish(sum_lanes(acc[r][q]), ar[r], a_flip, q ? w1 : w0, k16, k, j + q, rq);
                }
            }
        }
    }
}
#endif
