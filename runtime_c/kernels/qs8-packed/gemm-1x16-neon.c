/* qs8-packed GEMM for NEON without the dot product, AArch64 and Armv7 (see qs8-packed.h): one row x one
 * 16-column panel at a time, two quads of k a step. smlal multiplies 8 bytes of the panel (2 columns x 4 bytes
 * of k) by the row's quad twice into 16-bit lanes, and the same lanes of the next quad are added there (smlal): two
 * products of 8-bit values lie in -32512 .. 32768, one past int16, so the 16-bit sums start at 32512 and are
 * read as unsigned (0 .. 65280, exact); uadalp adds their pairs into 32-bit lanes, and the 32512 of every
 * lane is taken back at the end (modulo 2^32, where the whole sum is exact). */
#if defined(__ARM_NEON)
#include <string.h>

#include "requant-neon.h"

/* One row: its 8 accumulators and the 16-bit sums of a step fill half the registers; with two rows clang keeps
 * every block's sums live at once and spills. */
#define MR 1
#define LIFT 32512  /* 128 * 127 * 2: the least two products can sum to, negated */

/* bytes 4q .. 4q + 3 of a row ^ a_flip, in every 32-bit lane: a whole quad loaded, the last one assembled */
static inline int8x16_t quad_vector(const uint8_t *row, size_t q, size_t k, uint32_t flip) {
    uint32_t bytes;
    if (4 * q + 4 <= k) {
        memcpy(&bytes, row + 4 * q, 4);
        bytes ^= flip;
    } else {
        bytes = mlcc_qs8_row_quad(row, q, k, flip);
    }
    return vreinterpretq_s8_u32(vdupq_n_u32(bytes));
}

/* two quads of `mr` rows (x0: quad q, x1: quad q + 1, zero past the panel's quads) into the accumulators */
static inline __attribute__((always_inline)) void step(size_t mr, const int8_t *wq, const int8x16_t *x0, const int8x16_t *x1,
                                                       bool pair, int16x8_t lift, uint32x4_t acc[][8]) {
    for (size_t b = 0; b < 4; ++b) {
        const int8x16_t w0 = vld1q_s8(wq + 16 * b);
        int16x8_t lo[MR], hi[MR];
        for (size_t r = 0; r < mr; ++r) {
            lo[r] = vmlal_s8(lift, vget_low_s8(w0), vget_low_s8(x0[r]));
            hi[r] = vmlal_s8(lift, vget_high_s8(w0), vget_high_s8(x0[r]));
        }
        if (pair) {
            const int8x16_t w1 = vld1q_s8(wq + 64 + 16 * b);
            for (size_t r = 0; r < mr; ++r) {
                lo[r] = vmlal_s8(lo[r], vget_low_s8(w1), vget_low_s8(x1[r]));
                hi[r] = vmlal_s8(hi[r], vget_high_s8(w1), vget_high_s8(x1[r]));
            }
        }
        for (size_t r = 0; r < mr; ++r) {
            acc[r][2 * b] = vpadalq_u16(acc[r][2 * b], vreinterpretq_u16_s16(lo[r]));
            acc[r][2 * b + 1] = vpadalq_u16(acc[r][2 * b + 1], vreinterpretq_u16_s16(hi[r]));
        }
    }
}

/* `mr` rows times one panel */
static inline __attribute__((always_inline)) void tile(size_t mr, const void *operand, size_t i, const void *state, uint8_t *c,
                                                       size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_packed_rows *rows = operand;
    const struct mlcc_qs8_panel_rq *p = state;
    const uint8_t *a = rows->a + i * rows->lda;
    const uint8_t a_flip = rows->a_flip;
    const size_t lda = rows->lda, k = rows->k, nr = p->nr;
    const int8_t *weights = p->weights;
    const size_t quads = (k + 3) / 4, whole = k / 8;  /* pairs of whole quads */
    const uint32_t flip = a_flip * 0x01010101u;
    const uint8x16_t flips = vdupq_n_u8(a_flip);
    const int16x8_t lift = vdupq_n_s16(LIFT);
    uint32x4_t acc[MR][8];
    for (size_t r = 0; r < mr; ++r)
        for (size_t t = 0; t < 8; ++t) acc[r][t] = vdupq_n_u32(0);
    for (size_t g = 0; g < whole; ++g) {
        int8x16_t x0[MR], x1[MR];
        for (size_t r = 0; r < mr; ++r) {  /* 8 bytes of the row: each quad in every lane */
            const uint32x2_t both = vreinterpret_u32_u8(veor_u8(vld1_u8(a + r * lda + 8 * g), vget_low_u8(flips)));
            x0[r] = vreinterpretq_s8_u32(vdupq_lane_u32(both, 0));
            x1[r] = vreinterpretq_s8_u32(vdupq_lane_u32(both, 1));
        }
        step(mr, weights + g * 128, x0, x1, true, lift, acc);
    }
    for (size_t q = 2 * whole; q < quads; q += 2) {  /* the last quad or two, a partial one assembled */
        int8x16_t x0[MR], x1[MR];
        for (size_t r = 0; r < mr; ++r) {
            x0[r] = quad_vector(a + r * lda, q, k, flip);
            x1[r] = q + 1 < quads ? quad_vector(a + r * lda, q + 1, k, flip) : vdupq_n_s8(0);
        }
        step(mr, weights + q * 64, x0, x1, q + 1 < quads, lift, acc);
    }
    /* each step added 2 * LIFT to every lane */
    const uint32x4_t lifted = vdupq_n_u32((uint32_t)((quads + 1) / 2) * (2u * LIFT));
    for (size_t r = 0; r < mr; ++r) {
        int32x4_t s[4];
        for (size_t b = 0; b < 4; ++b) {  /* lanes (c0, c0, c1, c1) and (c2, c2, c3, c3): pair sums */
            const uint32x4_t a0 = acc[r][2 * b], a1 = acc[r][2 * b + 1];
            const uint32x4_t sums = vcombine_u32(vpadd_u32(vget_low_u32(a0), vget_high_u32(a0)), vpadd_u32(vget_low_u32(a1), vget_high_u32(a1)));
            s[b] = vreinterpretq_s32_u32(vsubq_u32(sums, vaddq_u32(lifted, lifted)));
        }
        mlcc_qs8_store16_neon(s, p, rq, c + r * ldc, nr);
    }
}

void mlcc_qs8_packed_gemm__neon(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_packed_rows rows = {a, lda, k, a_flip};
    struct mlcc_qs8_panel_rq p;
    mlcc_qs8_packed_walk(MR, false, m, n, k, &rows, packed, c, ldc, rq, &p, mlcc_qs8_panel_rq_load, tile);
}
#endif
