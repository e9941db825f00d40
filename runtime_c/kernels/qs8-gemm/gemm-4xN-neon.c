/* qs8-gemm for NEON (AArch64 and Armv7): tiles of 4 rows x NR columns (4 on AArch64's 32 vector registers,
 * 2 on Armv7's 16), 16 bytes of k a step. Two ways to multiply, both exact:
 * - mlcc_qs8_gemm__neon: smull multiplies 8 byte pairs into 16-bit lanes and sadalp adds each pair of those
 *   into a 32-bit lane: one product of two 8-bit values fits 16 bits ((-128)^2 = 2^14), so nothing saturates.
 *   (smlal of a second product into the same 16-bit lane, as kernels for 7-bit weights do, would wrap at
 *   (-128)(-128) + (-128)(-128) = 2^15.)
 * - mlcc_qs8_gemm__neondot (Armv8.2 with the dot product): sdot adds four signed 8-bit products, full 16-bit
 *   values, into each 32-bit lane.
 * Rows and columns past the product's edge reuse the first row or column and are not stored; k past a
 * multiple of 16 is finished in scalar code. */
#if defined(__ARM_NEON)
#include <arm_neon.h>
#include <stdbool.h>

#include "tile.h"
#if defined(__aarch64__)
#include "requant-neon.h"
#endif

#define MR 4
/* Armv7's cost model left these loops rolled, the accumulators in memory (97,682 instructions a 16x16x256
 * call under qemu; unrolled 53,131) */
#if defined(__clang__)
#define UNROLLED _Pragma("clang loop unroll(full)")
#else
#define UNROLLED
#endif
#if defined(__aarch64__)
#define NR 4
static inline int32_t sum_lanes(int32x4_t v) { return vaddvq_s32(v); }
#else
#define NR 2
static inline int32_t sum_lanes(int32x4_t v) {
    const int32x2_t s = vadd_s32(vget_low_s32(v), vget_high_s32(v));
    return vget_lane_s32(vpadd_s32(s, s), 0);
}
#endif

/* acc + the products of x and b's 16 bytes, each 32-bit lane taking four of them; `dot` is a constant at
 * every call, so each kernel keeps one instruction sequence. */
static inline __attribute__((always_inline)) int32x4_t multiply_add(int32x4_t acc, int8x16_t x, int8x16_t b, bool dot) {
#if defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__)
    if (dot) return vdotq_s32(acc, x, b);
#endif
    (void)dot;
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(x), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_s8(vget_high_s8(x), vget_high_s8(b)));
}

static inline __attribute__((always_inline)) void gemm_tiles(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda,
                                                             uint8_t a_flip, const int8_t *w, size_t ldw, uint8_t *c,
                                                             size_t c_rs, size_t c_cs, const struct mlcc_qs8_requant *rq,
                                                             bool dot) {
    const size_t k16 = k & ~(size_t)15;
    const uint8x16_t flip = vdupq_n_u8(a_flip);
    for (size_t i = 0; i < m; i += MR) {
        const size_t mr = MLCC_MIN(MR, m - i);
        const uint8_t *ar[MR];
        for (size_t r = 0; r < MR; ++r) ar[r] = a + (i + (r < mr ? r : 0)) * lda;
        for (size_t j = 0; j < n; j += NR) {
            const size_t nr = MLCC_MIN(NR, n - j);
            const int8_t *wc[NR];
            for (size_t q = 0; q < NR; ++q) wc[q] = w + (j + (q < nr ? q : 0)) * ldw;
            int32x4_t acc[MR][NR];
            for (size_t r = 0; r < MR; ++r)
                for (size_t q = 0; q < NR; ++q) acc[r][q] = vdupq_n_s32(0);
            for (size_t p = 0; p < k16; p += 16) {
                int8x16_t b[NR];
                UNROLLED for (size_t q = 0; q < NR; ++q) b[q] = vld1q_s8(wc[q] + p);
                UNROLLED for (size_t r = 0; r < MR; ++r) {
                    const int8x16_t x = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(ar[r] + p), flip));
                    UNROLLED for (size_t q = 0; q < NR; ++q) acc[r][q] = multiply_add(acc[r][q], x, b[q], dot);
                }
            }
#if defined(__aarch64__)
            if (nr == NR && k16 == k) {  /* a whole tile: requantized 4 columns at a time */
                const struct mlcc_qs8_requant4 q4 = mlcc_qs8_requant4_load(rq, j);
                for (size_t r = 0; r < mr; ++r)
                    mlcc_qs8_requant4_store(&q4, acc[r][0], acc[r][1], acc[r][2], acc[r][3], c + (i + r) * c_rs + j * c_cs, c_cs);
                continue;
            }
#endif
            for (size_t r = 0; r < mr; ++r) {
                for (size_t q = 0; q < nr; ++q) {
                    c[(i + r) * c_rs + (j + q) * c_cs] = mlcc_qs8_gemm_finish(sum_lanes(acc[r][q]), ar[r], a_flip, wc[q], k16, k, j + q, rq);
                }
            }
        }
    }
}

void mlcc_qs8_gemm__neon(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                         const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                         const struct mlcc_qs8_requant *rq) {
    gemm_tiles(m, n, k, a, lda, a_flip, w, ldw, c, c_rs, c_cs, rq, false);
}

#if defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__)
void mlcc_qs8_gemm__neondot(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                            const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                            const struct mlcc_qs8_requant *rq) {
    gemm_tiles(m, n, k, a, lda, a_flip, w, ldw, c, c_rs, c_cs, rq, true);
}
#endif
#endif
