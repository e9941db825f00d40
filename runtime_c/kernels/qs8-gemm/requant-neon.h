/* Four adjacent output columns of one row requantized at once on AArch64 NEON, bit for bit as
 * mlcc_qs8_requantize: the 64-bit product (smull), the rounding term added, an arithmetic shift right by the
 * column's shift (sshl by its negative: the floor, as the reference's), then saturated to 32 bits (sqxtn) and
 * the zero point added with saturation before the clamp: saturating moves a value already past the clamp
 * bounds further out only, so the clamped byte is the same. For the row kernels' tiles of 4 columns. */
#ifndef MLCC_QS8_GEMM_REQUANT_NEON_H
#define MLCC_QS8_GEMM_REQUANT_NEON_H

#include <arm_neon.h>

#include "mlcc/kernels/qs8-gemm.h"

struct mlcc_qs8_requant4 {
    int32x4_t bias, multiplier, zero, low, high;
    int64x2_t round[2], shift[2];  /* 2^(shift-1), -shift: columns 0-1 and 2-3 */
};

static inline struct mlcc_qs8_requant4 mlcc_qs8_requant4_load(const struct mlcc_qs8_requant *rq, size_t j) {
    struct mlcc_qs8_requant4 q;
    q.bias = vld1q_s32(rq->bias + j);
    q.multiplier = vld1q_s32(rq->multiplier + j);
    q.zero = vdupq_n_s32(rq->y_zero);
    q.low = vdupq_n_s32(rq->y_min);
    q.high = vdupq_n_s32(rq->y_max);
    const int32x4_t shift = vld1q_s32(rq->shift + j);
    const int64x2_t half[2] = {vmovl_s32(vget_low_s32(vsubq_s32(shift, vdupq_n_s32(1)))),
                               vmovl_high_s32(vsubq_s32(shift, vdupq_n_s32(1)))};
    for (int h = 0; h < 2; ++h) {
        q.round[h] = vshlq_s64(vdupq_n_s64(1), half[h]);
        q.shift[h] = vsubq_s64(vdupq_n_s64(-1), half[h]);  /* -(half + 1) = -shift */
    }
    return q;
}

/* The 4 columns' accumulators (each a vector of partial sums) to 4 output bytes at c, c_cs apart. */
static inline void mlcc_qs8_requant4_store(const struct mlcc_qs8_requant4 *q, int32x4_t s0, int32x4_t s1, int32x4_t s2,
                                           int32x4_t s3, uint8_t *c, size_t c_cs) {
    const int32x4_t acc = vaddq_s32(vpaddq_s32(vpaddq_s32(s0, s1), vpaddq_s32(s2, s3)), q->bias);
    const int64x2_t lo = vshlq_s64(vaddq_s64(vmull_s32(vget_low_s32(acc), vget_low_s32(q->multiplier)), q->round[0]), q->shift[0]);
    const int64x2_t hi = vshlq_s64(vaddq_s64(vmull_high_s32(acc, q->multiplier), q->round[1]), q->shift[1]);
    int32x4_t v = vqaddq_s32(vcombine_s32(vqmovn_s64(lo), vqmovn_s64(hi)), q->zero);
    v = vminq_s32(vmaxq_s32(v, q->low), q->high);
    c[0] = (uint8_t)vgetq_lane_s32(v, 0);
    c[c_cs] = (uint8_t)vgetq_lane_s32(v, 1);
    c[2 * c_cs] = (uint8_t)vgetq_lane_s32(v, 2);
    c[3 * c_cs] = (uint8_t)vgetq_lane_s32(v, 3);
}

#endif /* MLCC_QS8_GEMM_REQUANT_NEON_H */
