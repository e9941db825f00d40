/* qs8-gemm channel-major kernel for WebAssembly SIMD128 (see qs8-gemm.h and gemm-nchw-4x16-avx2.c): tiles
 * of 4 output channels x 16 pixels. Rows k and k + 1 are interleaved byte by byte, sign-extended to 16 bits
 * and multiplied by the channel's weight pair with i32x4.dot_i16x8_s: exact, no saturation. The tile's
 * accumulators are requantized as runs (mlcc_qs8_requantize_run); pixels past a multiple of 16 and k over
 * 2 * MAX_PAIRS take the reference's code. */
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include "tile.h"

#define MR 4
#define MAX_PAIRS 1152

void mlcc_qs8_gemm_nchw__wasmsimd(size_t n, size_t pixels, size_t k, const int8_t *w, size_t ldw,
                                  const uint8_t *x, size_t x_stride, uint8_t x_flip,
                                  uint8_t *y, size_t y_stride, const struct mlcc_qs8_requant *rq) {
    const size_t pairs = (k + 1) / 2, full = pixels & ~(size_t)15;
    if (pairs > MAX_PAIRS || full == 0) {
        mlcc_qs8_gemm_nchw__reference(n, pixels, k, w, ldw, x, x_stride, x_flip, y, y_stride, rq);
        return;
    }
    int32_t table[MR * MAX_PAIRS];
    int32_t lanes[16];
    const v128_t flip = wasm_i8x16_splat((int8_t)x_flip);
    for (size_t j = 0; j < n; j += MR) {
        const size_t mr = MLCC_MIN(MR, n - j);
        mlcc_qs8_gemm_nchw_pack_pairs(table, w, ldw, j, mr, MR, pairs, k);
        for (size_t p = 0; p < full; p += 16) {
            v128_t acc[MR][4];
            for (size_t r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = wasm_i32x4_splat(0);
            for (size_t i = 0; i < pairs; ++i) {
                const uint8_t *row = x + 2 * i * x_stride + p;
                const uint8_t *next = 2 * i + 1 < k ? row + x_stride : row;
                const v128_t v0 = wasm_v128_xor(wasm_v128_load(row), flip);
                const v128_t v1 = wasm_v128_xor(wasm_v128_load(next), flip);
                const v128_t lo = wasm_i8x16_shuffle(v0, v1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
                const v128_t hi = wasm_i8x16_shuffle(v0, v1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
                const v128_t q[4] = {wasm_i16x8_extend_low_i8x16(lo), wasm_i16x8_extend_high_i8x16(lo),
                                     wasm_i16x8_extend_low_i8x16(hi), wasm_i16x8_extend_high_i8x16(hi)};
                for (size_t r = 0; r < MR; ++r) {
                    const v128_t pair = wasm_i32x4_splat(table[r * pairs + i]);
                    for (size_t t = 0; t < 4; ++t) acc[r][t] = wasm_i32x4_add(acc[r][t], wasm_i32x4_dot_i16x8(q[t], pair));
                }
            }
            for (size_t r = 0; r < mr; ++r) {
                const size_t c = j + r;
                const v128_t bias = wasm_i32x4_splat(rq->bias[c]);
                for (size_t t = 0; t < 4; ++t) wasm_v128_store(lanes + 4 * t, wasm_i32x4_add(acc[r][t], bias));
                mlcc_qs8_requantize_run(lanes, 16, rq->multiplier[c], rq->shift[c], rq, y + c * y_stride + p);
            }
        }
        mlcc_qs8_gemm_nchw_tail(j, mr, full, pixels, k, w, ldw, x, x_stride, x_flip, y, y_stride, rq);
    }
}
#endif
