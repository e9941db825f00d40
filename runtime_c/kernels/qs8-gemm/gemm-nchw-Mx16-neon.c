/* qs8-gemm channel-major kernel for NEON (AArch64 and Armv7; see qs8-gemm.h): tiles of MR output channels
 * (4 on AArch64's 32 vector registers, 2 on Armv7's 16) x 16 pixels. Each input row's 16 bytes are
 * sign-extended to 16 bits once and multiplied by each channel's weight with smlal into 32-bit lanes: a
 * 16-bit product of 8-bit values, summed in 32 bits, so exact. The tile's accumulators are requantized as
 * runs (mlcc_qs8_requantize_run); pixels past a multiple of 16 take the reference's code. With it, NEON
 * targets' convolutions copy patches as runs of input rows (mlcc_qs8_conv_nchw_cm) instead of tap by tap. */
#if defined(__ARM_NEON)
#include <arm_neon.h>

#include "tile.h"

#if defined(__aarch64__)
#define MR 4
#else
#define MR 2
#endif
#if defined(__clang__)
#define UNROLLED _Pragma("clang loop unroll(full)")
#else
#define UNROLLED
#endif

void mlcc_qs8_gemm_nchw__neon(size_t n, size_t pixels, size_t k, const int8_t *w, size_t ldw,
                              const uint8_t *x, size_t x_stride, uint8_t x_flip,
                              uint8_t *y, size_t y_stride, const struct mlcc_qs8_requant *rq) {
    const size_t full = pixels & ~(size_t)15;
    const uint8x16_t flip = vdupq_n_u8(x_flip);
    int32_t lanes[16];
    for (size_t j = 0; j < n; j += MR) {
        const size_t mr = MLCC_MIN(MR, n - j);
        const int8_t *wr[MR];
        UNROLLED for (size_t r = 0; r < MR; ++r) wr[r] = w + (j + (r < mr ? r : 0)) * ldw;
        for (size_t p = 0; p < full; p += 16) {
            int32x4_t acc[MR][4];
            UNROLLED for (size_t r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = vdupq_n_s32(0);
            const uint8_t *row = x + p;
            for (size_t q = 0; q < k; ++q, row += x_stride) {
                const int8x16_t v = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(row), flip));
                const int16x8_t lo = vmovl_s8(vget_low_s8(v)), hi = vmovl_s8(vget_high_s8(v));
                UNROLLED for (size_t r = 0; r < MR; ++r) {
                    const int16_t weight = wr[r][q];
                    acc[r][0] = vmlal_n_s16(acc[r][0], vget_low_s16(lo), weight);
                    acc[r][1] = vmlal_n_s16(acc[r][1], vget_high_s16(lo), weight);
                    acc[r][2] = vmlal_n_s16(acc[r][2], vget_low_s16(hi), weight);
                    acc[r][3] = vmlal_n_s16(acc[r][3], vget_high_s16(hi), weight);
                }
            }
            for (size_t r = 0; r < mr; ++r) {
                const size_t c = j + r;
                const int32x4_t bias = vdupq_n_s32(rq->bias[c]);
                for (size_t t = 0; t < 4; ++t) vst1q_s32(lanes + 4 * t, vaddq_s32(acc[r][t], bias));
                mlcc_qs8_requantize_run(lanes, 16, rq->multiplier[c], rq->shift[c], rq, y + c * y_stride + p);
            }
        }
        mlcc_qs8_gemm_nchw_tail(j, mr, full, pixels, k, w, ldw, x, x_stride, x_flip, y, y_stride, rq);
    }
}
#endif
