/* qs8-dwconv for NEON, AArch64 and Armv7 (see qs8-dwconv.h): 16 channels a step (then 8, then one at a time),
 * two taps at once: smull/smlal multiply each tap's bytes by its weights into 16-bit lanes and add the next
 * tap's products there. Two products of 8-bit values lie in -32512 .. 32768, one past int16, so the 16-bit
 * sums start at 32512 and are read as unsigned (0 .. 65280, exact) when uaddw widens them into the 32-bit
 * accumulators, which take the 32512 of every pair of taps back at the end (modulo 2^32, where the whole sum is
 * exact). Requantization is vectorised with each channel's multiplier and shift (smull, sshl by the negative
 * shift: the floor, as the reference's; saturated to 32 bits before the clamp, which keeps the clamped byte),
 * exact for every shift. Channels go in chunks whose parameters are laid out once per call. */
#if defined(__ARM_NEON)
#include <arm_neon.h>

#include "mlcc/kernels/qs8-dwconv.h"

#define MAX_TAPS 64
#define CHUNK 256   /* channels whose requantization parameters are laid out at a time */
#define LIFT 32512  /* 128 * 127 * 2: the least two products can sum to, negated */

struct chunk {
    int64_t round[CHUNK], shift[CHUNK];  /* 2^(shift - 1), -shift */
};

/* 4 channels' accumulators (bias included) requantized: c indexes rq's arrays, i the chunk's */
static inline int32x4_t requant4(int32x4_t acc, const struct chunk *ch, size_t i, const struct mlcc_qs8_requant *rq, size_t c) {
    const int32x4_t mult = vld1q_s32(rq->multiplier + c);
    const int64x2_t lo = vshlq_s64(vaddq_s64(vmull_s32(vget_low_s32(acc), vget_low_s32(mult)), vld1q_s64(ch->round + i)),
                                   vld1q_s64(ch->shift + i));
    const int64x2_t hi = vshlq_s64(vaddq_s64(vmull_s32(vget_high_s32(acc), vget_high_s32(mult)), vld1q_s64(ch->round + i + 2)),
                                   vld1q_s64(ch->shift + i + 2));
    const int32x4_t v = vqaddq_s32(vcombine_s32(vqmovn_s64(lo), vqmovn_s64(hi)), vdupq_n_s32(rq->y_zero));
    return vminq_s32(vmaxq_s32(v, vdupq_n_s32(rq->y_min)), vdupq_n_s32(rq->y_max));
}

static inline uint8x8_t narrow8(int32x4_t v0, int32x4_t v1, bool signed_out) {
    const int16x8_t w = vcombine_s16(vqmovn_s32(v0), vqmovn_s32(v1));  /* clamped already: either narrowing keeps it */
    return signed_out ? vreinterpret_u8_s8(vqmovn_s16(w)) : vqmovun_s16(w);
}

/* a tap's 8 or 16 bytes of channels from c, ^ a_flip, or the padding's value */
static inline int8x16_t load16(const uint8_t *source, size_t c, uint8x16_t flip, int8x16_t zeros) {
    return source ? vreinterpretq_s8_u8(veorq_u8(vld1q_u8(source + c), flip)) : zeros;
}

static inline int8x8_t load8(const uint8_t *source, size_t c, uint8x16_t flip, int8x16_t zeros) {
    return source ? vreinterpret_s8_u8(veor_u8(vld1_u8(source + c), vget_low_u8(flip))) : vget_low_s8(zeros);
}

void mlcc_qs8_dwconv_nhwc__neon(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                const struct mlcc_qs8_requant *rq) {
    const size_t channels = g->channels, taps = g->kernel_h * g->kernel_w;
    if (taps > MAX_TAPS) {
        mlcc_qs8_dwconv_nhwc__reference(g, x, x_zero, a_flip, w, y, rq);
        return;
    }
    const int32_t zero = (int32_t)(int8_t)(x_zero ^ a_flip);
    const uint8x16_t flip = vdupq_n_u8(a_flip);
    const int8x16_t zeros = vdupq_n_s8((int8_t)zero);
    const int16x8_t lift = vdupq_n_s16(LIFT);
    const bool signed_out = rq->y_min < 0;
    /* each pair of taps (and an odd last one) added LIFT to every 16-bit lane */
    const uint32_t lifted = (uint32_t)((taps + 1) / 2) * LIFT;
    const uint8_t *source[MAX_TAPS];
    struct chunk ch;
    for (size_t c0 = 0; c0 < channels; c0 += CHUNK) {
        const size_t count = MLCC_MIN(CHUNK, channels - c0), full16 = count & ~(size_t)15, full8 = count & ~(size_t)7;
        for (size_t i = 0; i < full8; ++i) {
            ch.round[i] = (int64_t)1 << (rq->shift[c0 + i] - 1);
            ch.shift[i] = -(int64_t)rq->shift[c0 + i];
        }
        for (size_t oh = 0; oh < g->out_h; ++oh) {
            for (size_t ow = 0; ow < g->out_w; ++ow) {
                for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
                    for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) source[t] = mlcc_qs8_dwconv_source(g, x, oh, ow, kh, kw);
                }
                uint8_t *yp = y + (oh * g->out_w + ow) * channels;
                for (size_t i = 0; i < full16; i += 16) {
                    const size_t c = c0 + i;
                    uint32x4_t a0 = vreinterpretq_u32_s32(vld1q_s32(rq->bias + c)), a1 = vreinterpretq_u32_s32(vld1q_s32(rq->bias + c + 4));
                    uint32x4_t a2 = vreinterpretq_u32_s32(vld1q_s32(rq->bias + c + 8)), a3 = vreinterpretq_u32_s32(vld1q_s32(rq->bias + c + 12));
                    for (size_t t = 0; t < taps; t += 2) {
                        const int8x16_t x0 = load16(source[t], c, flip, zeros), w0 = vld1q_s8(w + t * channels + c);
                        int16x8_t lo = vmlal_s8(lift, vget_low_s8(x0), vget_low_s8(w0));
                        int16x8_t hi = vmlal_s8(lift, vget_high_s8(x0), vget_high_s8(w0));
                        if (t + 1 < taps) {
                            const int8x16_t x1 = load16(source[t + 1], c, flip, zeros), w1 = vld1q_s8(w + (t + 1) * channels + c);
                            lo = vmlal_s8(lo, vget_low_s8(x1), vget_low_s8(w1));
                            hi = vmlal_s8(hi, vget_high_s8(x1), vget_high_s8(w1));
                        }
                        a0 = vaddw_u16(a0, vget_low_u16(vreinterpretq_u16_s16(lo)));
                        a1 = vaddw_u16(a1, vget_high_u16(vreinterpretq_u16_s16(lo)));
                        a2 = vaddw_u16(a2, vget_low_u16(vreinterpretq_u16_s16(hi)));
                        a3 = vaddw_u16(a3, vget_high_u16(vreinterpretq_u16_s16(hi)));
                    }
                    const uint32x4_t back = vdupq_n_u32(lifted);
                    const int32x4_t v0 = requant4(vreinterpretq_s32_u32(vsubq_u32(a0, back)), &ch, i, rq, c);
                    const int32x4_t v1 = requant4(vreinterpretq_s32_u32(vsubq_u32(a1, back)), &ch, i + 4, rq, c + 4);
                    const int32x4_t v2 = requant4(vreinterpretq_s32_u32(vsubq_u32(a2, back)), &ch, i + 8, rq, c + 8);
                    const int32x4_t v3 = requant4(vreinterpretq_s32_u32(vsubq_u32(a3, back)), &ch, i + 12, rq, c + 12);
                    vst1q_u8(yp + c, vcombine_u8(narrow8(v0, v1, signed_out), narrow8(v2, v3, signed_out)));
                }
                if (full16 < full8) {  /* 8 more */
                    const size_t i = full16, c = c0 + i;
                    uint32x4_t a0 = vreinterpretq_u32_s32(vld1q_s32(rq->bias + c)), a1 = vreinterpretq_u32_s32(vld1q_s32(rq->bias + c + 4));
                    for (size_t t = 0; t < taps; t += 2) {
                        int16x8_t s = vmlal_s8(lift, load8(source[t], c, flip, zeros), vld1_s8(w + t * channels + c));
                        if (t + 1 < taps) s = vmlal_s8(s, load8(source[t + 1], c, flip, zeros), vld1_s8(w + (t + 1) * channels + c));
                        a0 = vaddw_u16(a0, vget_low_u16(vreinterpretq_u16_s16(s)));
                        a1 = vaddw_u16(a1, vget_high_u16(vreinterpretq_u16_s16(s)));
                    }
                    const uint32x4_t back = vdupq_n_u32(lifted);
                    const int32x4_t v0 = requant4(vreinterpretq_s32_u32(vsubq_u32(a0, back)), &ch, i, rq, c);
                    const int32x4_t v1 = requant4(vreinterpretq_s32_u32(vsubq_u32(a1, back)), &ch, i + 4, rq, c + 4);
                    vst1_u8(yp + c, narrow8(v0, v1, signed_out));
                }
                for (size_t c = c0 + full8; c < c0 + count; ++c) {
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
