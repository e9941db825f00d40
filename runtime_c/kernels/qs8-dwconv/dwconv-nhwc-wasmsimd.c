/* qs8-dwconv for WASM SIMD128 (see qs8-dwconv.h): 16 channels a step, each tap's products by
 * i16x8.extmul of the bytes (exact in 16 bits), widened and added in 32 bits. SIMD128 shifts every lane by
 * one count, and each channel has its own: requantization is scalar, once per output value (the taps' work
 * is the vector part). Channels past a multiple of 16 and more than MAX_TAPS taps take the reference's code. */
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include "mlcc/kernels/qs8-dwconv.h"

#define MAX_TAPS 64

void mlcc_qs8_dwconv_nhwc__wasmsimd(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                    uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                    const struct mlcc_qs8_requant *rq) {
    const size_t channels = g->channels, taps = g->kernel_h * g->kernel_w, full = channels & ~(size_t)15;
    if (taps > MAX_TAPS) {
        mlcc_qs8_dwconv_nhwc__reference(g, x, x_zero, a_flip, w, y, rq);
        return;
    }
    const int32_t zero = (int32_t)(int8_t)(x_zero ^ a_flip);
    const v128_t flip = wasm_i8x16_splat((int8_t)a_flip), zeros = wasm_i8x16_splat((int8_t)zero);
    const uint8_t *source[MAX_TAPS];
    int32_t acc[16];
    for (size_t oh = 0; oh < g->out_h; ++oh) {
        for (size_t ow = 0; ow < g->out_w; ++ow) {
            for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
                for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) source[t] = mlcc_qs8_dwconv_source(g, x, oh, ow, kh, kw);
            }
            uint8_t *yp = y + (oh * g->out_w + ow) * channels;
            for (size_t c = 0; c < full; c += 16) {
                v128_t a0 = wasm_v128_load(rq->bias + c), a1 = wasm_v128_load(rq->bias + c + 4);
                v128_t a2 = wasm_v128_load(rq->bias + c + 8), a3 = wasm_v128_load(rq->bias + c + 12);
                for (size_t t = 0; t < taps; ++t) {
                    const v128_t xs = source[t] == NULL ? zeros : wasm_v128_xor(wasm_v128_load(source[t] + c), flip);
                    const v128_t ws = wasm_v128_load(w + t * channels + c);
                    const v128_t lo = wasm_i16x8_extmul_low_i8x16(xs, ws), hi = wasm_i16x8_extmul_high_i8x16(xs, ws);
                    a0 = wasm_i32x4_add(a0, wasm_i32x4_extend_low_i16x8(lo));
                    a1 = wasm_i32x4_add(a1, wasm_i32x4_extend_high_i16x8(lo));
                    a2 = wasm_i32x4_add(a2, wasm_i32x4_extend_low_i16x8(hi));
                    a3 = wasm_i32x4_add(a3, wasm_i32x4_extend_high_i16x8(hi));
                }
                wasm_v128_store(acc, a0);
                wasm_v128_store(acc + 4, a1);
                wasm_v128_store(acc + 8, a2);
                wasm_v128_store(acc + 12, a3);
                for (size_t q = 0; q < 16; ++q) yp[c + q] = mlcc_qs8_requantize(acc[q], rq->multiplier[c + q], rq->shift[c + q], rq);
            }
            for (size_t c = full; c < channels; ++c) {
                int32_t total = rq->bias[c];
                for (size_t t = 0; t < taps; ++t) {
                    total += (int32_t)w[t * channels + c] * (source[t] ? (int32_t)(int8_t)(source[t][c] ^ a_flip) : zero);
                }
                yp[c] = mlcc_qs8_requantize(total, rq->multiplier[c], rq->shift[c], rq);
            }
        }
    }
}
#endif
