/* qs8-packed GEMM for AArch64 NEON without the dot product (see qs8-packed.h): tiles of 2 rows x one 16-column
 * panel, two quads of k a step. smull/smlal multiply 8 bytes of the panel (2 columns x 4 bytes of k) by the
 * row's quad twice into 16-bit lanes, and the same lanes of the next quad are added there (smlal): two
 * products of 8-bit values lie in -32512 .. 32768, one past int16, so the 16-bit sums start at 32512 and are
 * read as unsigned (0 .. 65280, exact); uadalp adds their pairs into 32-bit lanes, and the 32512 of every
 * lane is taken back at the end (modulo 2^32, where the whole sum is exact). */
#if defined(__ARM_NEON) && defined(__aarch64__)
#include <string.h>

#include "requant-neon.h"

#define MR 2
#define LIFT 32512  /* 128 * 127 * 2: the least two products can sum to, negated */

static inline int8x16_t quad_vector(const uint8_t *row, size_t q, size_t k4, size_t k, uint8_t a_flip) {
    uint32_t bytes;
    if (q < k4) {
        memcpy(&bytes, row + 4 * q, 4);
        bytes ^= a_flip * 0x01010101u;
    } else {
        bytes = mlcc_qs8_row_quad(row, q, k, a_flip * 0x01010101u);
    }
    return vreinterpretq_s8_u32(vdupq_n_u32(bytes));
}

/* `mr` rows (a constant where it is inlined: 2, then 1) times one panel */
static inline __attribute__((always_inline)) void tile(size_t mr, const uint8_t *a, size_t lda, size_t k, uint8_t a_flip,
                                                       const int8_t *weights, const struct mlcc_qs8_panel_rq *p,
                                                       uint8_t *c, size_t ldc, size_t nr, const struct mlcc_qs8_requant *rq) {
    const size_t k4 = k / 4, quads = (k + 3) / 4;
    const int16x8_t lift = vdupq_n_s16(LIFT);
    uint32x4_t acc[MR][8];
    for (size_t r = 0; r < mr; ++r)
        for (size_t t = 0; t < 8; ++t) acc[r][t] = vdupq_n_u32(0);
    size_t q = 0;
    for (; q + 2 <= quads; q += 2) {
        int8x16_t x0[MR], x1[MR];
        for (size_t r = 0; r < mr; ++r) {
            x0[r] = quad_vector(a + r * lda, q, k4, k, a_flip);
            x1[r] = quad_vector(a + r * lda, q + 1, k4, k, a_flip);
        }
        for (size_t b = 0; b < 4; ++b) {
            const int8x16_t w0 = vld1q_s8(weights + q * 64 + 16 * b), w1 = vld1q_s8(weights + q * 64 + 64 + 16 * b);
            for (size_t r = 0; r < mr; ++r) {
                const int16x8_t lo = vmlal_s8(vmlal_s8(lift, vget_low_s8(w0), vget_low_s8(x0[r])), vget_low_s8(w1), vget_low_s8(x1[r]));
                const int16x8_t hi = vmlal_high_s8(vmlal_high_s8(lift, w0, x0[r]), w1, x1[r]);
                acc[r][2 * b] = vpadalq_u16(acc[r][2 * b], vreinterpretq_u16_s16(lo));
                acc[r][2 * b + 1] = vpadalq_u16(acc[r][2 * b + 1], vreinterpretq_u16_s16(hi));
            }
        }
    }
    if (q < quads) {  /* an odd last quad */
        int8x16_t x0[MR];
        for (size_t r = 0; r < mr; ++r) x0[r] = quad_vector(a + r * lda, q, k4, k, a_flip);
        for (size_t b = 0; b < 4; ++b) {
            const int8x16_t w0 = vld1q_s8(weights + q * 64 + 16 * b);
            for (size_t r = 0; r < mr; ++r) {
                const int16x8_t lo = vmlal_s8(lift, vget_low_s8(w0), vget_low_s8(x0[r]));
                const int16x8_t hi = vmlal_high_s8(lift, w0, x0[r]);
                acc[r][2 * b] = vpadalq_u16(acc[r][2 * b], vreinterpretq_u16_s16(lo));
                acc[r][2 * b + 1] = vpadalq_u16(acc[r][2 * b + 1], vreinterpretq_u16_s16(hi));
            }
        }
    }
    /* each step added 2 * LIFT to every lane */
    const uint32x4_t lifted = vdupq_n_u32((uint32_t)((quads + 1) / 2) * (2u * LIFT));
    for (size_t r = 0; r < mr; ++r) {
        int32x4_t s[4];
        for (size_t b = 0; b < 4; ++b) {  /* lanes (c0, c0, c1, c1) and (c2, c2, c3, c3): pair sums */
            s[b] = vreinterpretq_s32_u32(vsubq_u32(vpaddq_u32(acc[r][2 * b], acc[r][2 * b + 1]), vaddq_u32(lifted, lifted)));
        }
        mlcc_qs8_store16_neon(s, p, rq, c + r * ldc, nr);
    }
}

void mlcc_qs8_packed_gemm__neon(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const size_t panel_bytes = mlcc_qs8_packed_panel_bytes(k), full = m - m % MR;
    struct mlcc_qs8_panel_rq p;
    for (size_t j = 0; j < n; j += MLCC_QS8_PACKED_NR) {
        const size_t nr = MLCC_MIN(MLCC_QS8_PACKED_NR, n - j);
        const int8_t *weights = packed + (j / MLCC_QS8_PACKED_NR) * panel_bytes + 64;
        mlcc_qs8_panel_rq_load(&p, rq, j, nr);
        for (size_t i = 0; i < full; i += MR) tile(MR, a + i * lda, lda, k, a_flip, weights, &p, c + i * ldc + j, ldc, nr, rq);
        if (full < m) tile(1, a + full * lda, lda, k, a_flip, weights, &p, c + full * ldc + j, ldc, nr, rq);
    }
}
#endif
