/* The product both Armv8.2 dot-product forms of qs8-packed's 4x16 tile run (the requantizing
 * gemm-4x16-neondot.c, the dequantizing dequant-4x16-neondot.c): `mr` rows (at most 4) of `a`, each byte
 * ^ a_flip, times one 16-column panel of `weights`, added into acc (a row's 4 vectors of 4 columns). One sdot
 * per row and 4 columns x 4 bytes of k: the panel's 16 bytes as packed times one quad of the row (the lane form
 * picks it from 16 bytes loaded at once), each lane summing 4 exact 16-bit products in 32 bits. */
#ifndef MLCC_QS8_PACKED_DOT_NEONDOT_H
#define MLCC_QS8_PACKED_DOT_NEONDOT_H

#include <arm_neon.h>

#include "walk.h"

static inline __attribute__((always_inline)) void mlcc_qs8_neondot_accumulate(size_t mr, const uint8_t *a, size_t lda,
                                                                              size_t k, uint8_t a_flip,
                                                                              const int8_t *weights,
                                                                              int32x4_t acc[4][4]) {
    const size_t k16 = k / 16, quads = (k + 3) / 4;
    const uint8x16_t flip = vdupq_n_u8(a_flip);
    for (size_t g = 0; g < k16; ++g) {  /* 4 quads: 16 bytes of each row */
        int8x16_t x[4];
        for (size_t r = 0; r < mr; ++r) x[r] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(a + r * lda + 16 * g), flip));
        const int8_t *wg = weights + g * 256;
#define QUAD(lane)                                                                                  \
        for (size_t b = 0; b < 4; ++b) {                                                            \
            const int8x16_t ws = vld1q_s8(wg + (lane) * 64 + 16 * b);                               \
            for (size_t r = 0; r < mr; ++r) acc[r][b] = vdotq_laneq_s32(acc[r][b], ws, x[r], lane); \
        }
        QUAD(0)
        QUAD(1)
        QUAD(2)
        QUAD(3)
#undef QUAD
    }
    for (size_t q = 4 * k16; q < quads; ++q) {
        int8x16_t x[4];
        for (size_t r = 0; r < mr; ++r) {
            x[r] = vreinterpretq_s8_u32(vdupq_n_u32(mlcc_qs8_row_quad(a + r * lda, q, k, a_flip * 0x01010101u)));
        }
        for (size_t b = 0; b < 4; ++b) {
            const int8x16_t ws = vld1q_s8(weights + q * 64 + 16 * b);
            for (size_t r = 0; r < mr; ++r) acc[r][b] = vdotq_s32(acc[r][b], ws, x[r]);
        }
    }
}

#endif
