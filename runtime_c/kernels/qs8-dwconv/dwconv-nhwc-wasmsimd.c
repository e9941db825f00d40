/* qs8-dwconv for WASM SIMD128 (see qs8-dwconv.h): 16 channels a step, two taps at once: i16x8.extmul gives each
 * tap's exact 16-bit products, and the two taps' are added in 16-bit lanes. Two products of 8-bit values lie in
 * -32512 .. 32768, one past int16, so the sums start at 32512 and are read as unsigned (0 .. 65280, exact) when
 * widened into the 32-bit accumulators, which take the 32512 of every pair of taps back at the end (modulo 2^32,
 * where the whole sum is exact). Requantization is vectorised with each channel's multiplier and shift
 * (mlcc/qs8-requant-wasm.h), laid out for chunks of channels once per call. 8 channels past a multiple of 16 go
 * in the vectors' low halves (8 channels alone at stride 1: two pixels a step), the rest one at a time; more
 * than MAX_TAPS taps take the reference's code. A chunk with a shift below 31 (a real multiplier of 1/2 or more)
 * lifts its accumulators to shift 31 first (mlcc_qs8_scale_up4_wasm). */
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>

#include "mlcc/kernels/qs8-dwconv.h"
#include "mlcc/qs8-requant-wasm.h"

#define MAX_TAPS 64
#define CHUNK 256   /* channels whose shift terms are laid out at a time */
#define LIFT 32512  /* 128 * 127 * 2: the least two products can sum to, negated */

/* What every pixel of one call uses */
struct dw {
    size_t taps;
    v128_t flip, zeros, lift, back, low, high, y_zero;
    bool signed_out;
};

/* 16 lanes of output: tap t's bytes at source[t] + offset (NULL: the padding) times its 16 weights at w + t *
 * w_step, requantized with the lanes' bias, multiplier and terms, stored at yp */
static inline __attribute__((always_inline)) void lanes16(const struct dw *d, const uint8_t *const *source, size_t offset,
                                                          const int8_t *w, size_t w_step, const int32_t *bias,
                                                          const int32_t *multiplier, const uint64_t *round,
                                                          const uint32_t *factor, const int32_t *lower, const int32_t *upper,
                                                          const int32_t *scale, bool scaled_up, uint8_t *yp) {
    const size_t taps = d->taps;
    v128_t a0 = wasm_v128_load(bias), a1 = wasm_v128_load(bias + 4);
    v128_t a2 = wasm_v128_load(bias + 8), a3 = wasm_v128_load(bias + 12);
    for (size_t t = 0; t < taps; t += 2) {
        const v128_t x0 = source[t] == NULL ? d->zeros : wasm_v128_xor(wasm_v128_load(source[t] + offset), d->flip);
        const v128_t w0 = wasm_v128_load(w + t * w_step);
        v128_t lo = wasm_i16x8_add(d->lift, wasm_i16x8_extmul_low_i8x16(x0, w0));
        v128_t hi = wasm_i16x8_add(d->lift, wasm_i16x8_extmul_high_i8x16(x0, w0));
        if (t + 1 < taps) {
            const v128_t x1 = source[t + 1] == NULL ? d->zeros : wasm_v128_xor(wasm_v128_load(source[t + 1] + offset), d->flip);
            const v128_t w1 = wasm_v128_load(w + (t + 1) * w_step);
            lo = wasm_i16x8_add(lo, wasm_i16x8_extmul_low_i8x16(x1, w1));
            hi = wasm_i16x8_add(hi, wasm_i16x8_extmul_high_i8x16(x1, w1));
        }
        a0 = wasm_i32x4_add(a0, wasm_u32x4_extend_low_u16x8(lo));
        a1 = wasm_i32x4_add(a1, wasm_u32x4_extend_high_u16x8(lo));
        a2 = wasm_i32x4_add(a2, wasm_u32x4_extend_low_u16x8(hi));
        a3 = wasm_i32x4_add(a3, wasm_u32x4_extend_high_u16x8(hi));
    }
    a0 = wasm_i32x4_sub(a0, d->back);
    a1 = wasm_i32x4_sub(a1, d->back);
    a2 = wasm_i32x4_sub(a2, d->back);
    a3 = wasm_i32x4_sub(a3, d->back);
    if (scaled_up) {
        a0 = mlcc_qs8_scale_up4_wasm(a0, lower, upper, scale);
        a1 = mlcc_qs8_scale_up4_wasm(a1, lower + 4, upper + 4, scale + 4);
        a2 = mlcc_qs8_scale_up4_wasm(a2, lower + 8, upper + 8, scale + 8);
        a3 = mlcc_qs8_scale_up4_wasm(a3, lower + 12, upper + 12, scale + 12);
    }
    const v128_t v0 = mlcc_qs8_requant4_wasm(a0, multiplier, round, factor, d->low, d->high, d->y_zero);
    const v128_t v1 = mlcc_qs8_requant4_wasm(a1, multiplier + 4, round + 4, factor + 4, d->low, d->high, d->y_zero);
    const v128_t v2 = mlcc_qs8_requant4_wasm(a2, multiplier + 8, round + 8, factor + 8, d->low, d->high, d->y_zero);
    const v128_t v3 = mlcc_qs8_requant4_wasm(a3, multiplier + 12, round + 12, factor + 12, d->low, d->high, d->y_zero);
    wasm_v128_store(yp, mlcc_qs8_narrow16_wasm(v0, v1, v2, v3, d->signed_out));
}

void mlcc_qs8_dwconv_nhwc__wasmsimd(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                    uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                    const struct mlcc_qs8_requant *rq) {
    const size_t channels = g->channels, taps = g->kernel_h * g->kernel_w;
    if (taps > MAX_TAPS) {
        mlcc_qs8_dwconv_nhwc__reference(g, x, x_zero, a_flip, w, y, rq);
        return;
    }
    const int32_t zero = (int32_t)(int8_t)(x_zero ^ a_flip);
    const v128_t flip = wasm_i8x16_splat((int8_t)a_flip), zeros = wasm_i8x16_splat((int8_t)zero);
    const v128_t lift = wasm_i16x8_splat(LIFT), back = wasm_i32x4_splat((int32_t)((taps + 1) / 2 * LIFT));
    const v128_t low = wasm_i32x4_splat(rq->y_min - rq->y_zero), high = wasm_i32x4_splat(rq->y_max - rq->y_zero);
    const v128_t y_zero = wasm_i32x4_splat(rq->y_zero);
    const bool signed_out = rq->y_min < 0;
    const struct dw d = {taps, flip, zeros, lift, back, low, high, y_zero, signed_out};
    const uint8_t *source[MAX_TAPS];
    const size_t stride = g->stride_w * channels;
    /* 8 channels at stride 1: two pixels side by side inside a row take one 16-lane step, their taps' bytes
     * adjacent in x, with each tap's 8 weights, the bias and the terms twice */
    const bool paired = channels == 8 && g->stride_w == 1;
    int8_t w_pairs[MAX_TAPS * 16];
    int32_t bias_pairs[16], multiplier_pairs[16];
    if (paired) {
        for (size_t i = 0; i < taps * 16; ++i) w_pairs[i] = w[i / 16 * 8 + i % 8];
        for (size_t i = 0; i < 16; ++i) {
            bias_pairs[i] = rq->bias[i % 8];
            multiplier_pairs[i] = rq->multiplier[i % 8];
        }
    }
    uint64_t round[CHUNK];
    uint32_t factor[CHUNK];
    int32_t lower[CHUNK], upper[CHUNK], scale[CHUNK];
    for (size_t c0 = 0; c0 < channels; c0 += CHUNK) {
        const size_t count = MLCC_MIN(CHUNK, channels - c0), full = count & ~(size_t)15, half = count & ~(size_t)7;
        bool scaled_up = false;
        for (size_t i = 0; i < half; ++i) {
            mlcc_qs8_wasm_lane_terms(rq->multiplier[c0 + i], rq->shift[c0 + i], &round[i], &factor[i], &lower[i], &upper[i], &scale[i]);
            scaled_up |= rq->shift[c0 + i] < 31;
        }
        if (paired) {  /* lanes 8..15: the second pixel's channels, the same terms */
            for (size_t i = 8; i < 16; ++i) {
                round[i] = round[i - 8];
                factor[i] = factor[i - 8];
                lower[i] = lower[i - 8];
                upper[i] = upper[i - 8];
                scale[i] = scale[i - 8];
            }
        }
        for (size_t oh = 0; oh < g->out_h; ++oh) {
            bool was_inside = false;
            for (size_t ow = 0; ow < g->out_w; ++ow) {
                /* a window inside the row, after one inside: its taps are the last pixel's one stride on */
                const size_t iw = ow * g->stride_w - g->pad_left;  /* left of the padding wraps around */
                const bool inside = iw < g->in_w && iw + (g->kernel_w - 1) * g->dilation_w < g->in_w;
                if (inside && was_inside) {
                    for (size_t t = 0; t < taps; ++t) source[t] = source[t] == NULL ? NULL : source[t] + stride;
                } else {
                    for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
                        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) source[t] = mlcc_qs8_dwconv_source(g, x, oh, ow, kh, kw);
                    }
                }
                was_inside = inside;
                uint8_t *yp = y + (oh * g->out_w + ow) * channels;
                if (paired && inside && ow + 1 < g->out_w && iw + 1 + (g->kernel_w - 1) * g->dilation_w < g->in_w) {
                    lanes16(&d, source, 0, w_pairs, 16, bias_pairs, multiplier_pairs, round, factor, lower, upper, scale,
                            scaled_up, yp);
                    for (size_t t = 0; t < taps; ++t) source[t] = source[t] == NULL ? NULL : source[t] + stride;
                    ++ow;  /* the taps now the next pixel's, inside */
                    continue;
                }
                for (size_t i = 0; i < full; i += 16) {
                    const size_t c = c0 + i;
                    lanes16(&d, source, c, w + c, channels, rq->bias + c, rq->multiplier + c, round + i, factor + i,
                            lower + i, upper + i, scale + i, scaled_up, yp + c);
                }
                if (half > full) {  /* 8 channels in the vectors' low halves */
                    const size_t i = full, c = c0 + i;
                    v128_t a0 = wasm_v128_load(rq->bias + c), a1 = wasm_v128_load(rq->bias + c + 4);
                    for (size_t t = 0; t < taps; t += 2) {
                        const v128_t x0 = source[t] == NULL ? zeros : wasm_v128_xor(wasm_v128_load64_zero(source[t] + c), flip);
                        v128_t lo = wasm_i16x8_add(lift, wasm_i16x8_extmul_low_i8x16(x0, wasm_v128_load64_zero(w + t * channels + c)));
                        if (t + 1 < taps) {
                            const v128_t x1 = source[t + 1] == NULL ? zeros : wasm_v128_xor(wasm_v128_load64_zero(source[t + 1] + c), flip);
                            lo = wasm_i16x8_add(lo, wasm_i16x8_extmul_low_i8x16(x1, wasm_v128_load64_zero(w + (t + 1) * channels + c)));
                        }
                        a0 = wasm_i32x4_add(a0, wasm_u32x4_extend_low_u16x8(lo));
                        a1 = wasm_i32x4_add(a1, wasm_u32x4_extend_high_u16x8(lo));
                    }
                    a0 = wasm_i32x4_sub(a0, back);
                    a1 = wasm_i32x4_sub(a1, back);
                    if (scaled_up) {
                        a0 = mlcc_qs8_scale_up4_wasm(a0, lower + i, upper + i, scale + i);
                        a1 = mlcc_qs8_scale_up4_wasm(a1, lower + i + 4, upper + i + 4, scale + i + 4);
                    }
                    const v128_t v0 = mlcc_qs8_requant4_wasm(a0, rq->multiplier + c, round + i, factor + i, low, high, y_zero);
                    const v128_t v1 = mlcc_qs8_requant4_wasm(a1, rq->multiplier + c + 4, round + i + 4, factor + i + 4, low, high, y_zero);
                    wasm_v128_store64_lane(yp + c, mlcc_qs8_narrow16_wasm(v0, v1, v0, v1, signed_out), 0);
                }
                for (size_t c = c0 + half; c < c0 + count; ++c) {
                    int32_t total = rq->bias[c];
                    for (size_t t = 0; t < taps; ++t) {
                        total += (int32_t)w[t * channels + c] * (source[t] ? (int32_t)(int8_t)(source[t][c] ^ a_flip) : zero);
                    }
                    yp[c] = mlcc_qs8_requantize(total, rq->multiplier[c], rq->shift[c], rq);
                }
            }
        }
    }
}
#endif
