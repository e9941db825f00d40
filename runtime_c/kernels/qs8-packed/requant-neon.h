/* The NEON qs8-packed kernels' per-panel parameters and requantization of a row's 16 columns, bit for bit as
 * mlcc_qs8_requantize: the 64-bit product (smull), the rounding term added, an arithmetic shift right by the
 * column's shift (sshl by its negative: the floor, as the reference's), saturated to 32 bits (sqxtn) and the zero
 * point added with saturation before the clamp: saturating moves a value already past the clamp bounds only
 * further out, so the clamped byte is the same. Every shift 1..62 is exact here (no fallback). */
#ifndef MLCC_QS8_PACKED_REQUANT_NEON_H
#define MLCC_QS8_PACKED_REQUANT_NEON_H

#include <arm_neon.h>

#include "walk.h"

/* One panel's 16 columns: past n, a zero bias and a neutral multiplier (their bytes are not stored); its quads */
struct mlcc_qs8_panel_rq {
    const int8_t *weights;
    size_t nr;
    int32_t bias[16], multiplier[16];
    int64_t round[16], shift[16];  /* 2^(shift - 1), -shift */
};

/* a mlcc_qs8_packed_panel_fn */
static inline void mlcc_qs8_panel_rq_load(void *state, const int8_t *panel, size_t j, size_t nr, const struct mlcc_qs8_requant *rq) {
    struct mlcc_qs8_panel_rq *p = state;
    p->weights = panel + 64;
    p->nr = nr;
    for (size_t q = 0; q < 16; ++q) {
        const int32_t shift = q < nr ? rq->shift[j + q] : 31;
        p->bias[q] = q < nr ? rq->bias[j + q] : 0;
        p->multiplier[q] = q < nr ? rq->multiplier[j + q] : 1 << 30;
        p->round[q] = (int64_t)1 << (shift - 1);
        p->shift[q] = -shift;
    }
}

/* Columns 4b .. 4b + 3 (accumulators without the bias) to clamped 32-bit values */
static inline int32x4_t mlcc_qs8_requant4_neon(int32x4_t acc, const struct mlcc_qs8_panel_rq *p, size_t b,
                                               const struct mlcc_qs8_requant *rq) {
    acc = vaddq_s32(acc, vld1q_s32(p->bias + 4 * b));
    const int32x4_t mult = vld1q_s32(p->multiplier + 4 * b);
    const int64x2_t lo = vshlq_s64(vaddq_s64(vmull_s32(vget_low_s32(acc), vget_low_s32(mult)), vld1q_s64(p->round + 4 * b)),
                                   vld1q_s64(p->shift + 4 * b));
    const int64x2_t hi = vshlq_s64(vaddq_s64(vmull_s32(vget_high_s32(acc), vget_high_s32(mult)), vld1q_s64(p->round + 4 * b + 2)),
                                   vld1q_s64(p->shift + 4 * b + 2));
    const int32x4_t v = vqaddq_s32(vcombine_s32(vqmovn_s64(lo), vqmovn_s64(hi)), vdupq_n_s32(rq->y_zero));
    return vminq_s32(vmaxq_s32(v, vdupq_n_s32(rq->y_min)), vdupq_n_s32(rq->y_max));
}

/* A row's 16 column sums (4 vectors of 4 columns) requantized and stored: nr bytes at c */
static inline void mlcc_qs8_store16_neon(const int32x4_t s[4], const struct mlcc_qs8_panel_rq *p,
                                         const struct mlcc_qs8_requant *rq, uint8_t *c, size_t nr) {
    int32x4_t v[4];
    for (size_t b = 0; b < 4; ++b) v[b] = mlcc_qs8_requant4_neon(s[b], p, b, rq);
    const int16x8_t w0 = vcombine_s16(vqmovn_s32(v[0]), vqmovn_s32(v[1])), w1 = vcombine_s16(vqmovn_s32(v[2]), vqmovn_s32(v[3]));
    /* the values are clamped to the output's byte range already: either narrowing keeps them */
    const uint8x16_t bytes = rq->y_min < 0 ? vreinterpretq_u8_s8(vcombine_s8(vqmovn_s16(w0), vqmovn_s16(w1)))
                                           : vcombine_u8(vqmovun_s16(w0), vqmovun_s16(w1));
    if (nr == 16) {
        vst1q_u8(c, bytes);
    } else {
        uint8_t lanes[16];
        vst1q_u8(lanes, bytes);
        for (size_t q = 0; q < nr; ++q) c[q] = lanes[q];
    }
}

#endif /* MLCC_QS8_PACKED_REQUANT_NEON_H */
