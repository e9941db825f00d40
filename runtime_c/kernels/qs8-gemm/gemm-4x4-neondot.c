/* qs8-gemm for Armv8.2 NEON with the dot product: tiles of 4 rows x 4 columns, 16 bytes of k a step, each
 * sdot (vdotq_s32) adding four signed 8-bit products into each 32-bit lane: the products are full 16-bit
 * values summed in 32 bits, so the result is exact. Rows and columns past the product's edge reuse the first
 * row or column and are not stored; k past a multiple of 16 is finished in scalar code. */
#if defined(__ARM_NEON) && defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__)
#include <arm_neon.h>

#include "mlcc/kernels/qs8-gemm.h"
#include "requant-neon.h"

#define MR 4
#define NR 4

void mlcc_qs8_gemm__neondot(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                            const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                            const struct mlcc_qs8_requant *rq) {
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
                for (size_t q = 0; q < NR; ++q) b[q] = vld1q_s8(wc[q] + p);
                for (size_t r = 0; r < MR; ++r) {
                    const int8x16_t x = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(ar[r] + p), flip));
                    for (size_t q = 0; q < NR; ++q) acc[r][q] = vdotq_s32(acc[r][q], x, b[q]);
                }
            }
            if (nr == NR && k16 == k) {  /* a whole tile: requantized 4 columns at a time */
                const struct mlcc_qs8_requant4 q4 = mlcc_qs8_requant4_load(rq, j);
                for (size_t r = 0; r < mr; ++r)
                    mlcc_qs8_requant4_store(&q4, acc[r][0], acc[r][1], acc[r][2], acc[r][3], c + (i + r) * c_rs + j * c_cs, c_cs);
                continue;
            }
            for (size_t r = 0; r < mr; ++r) {
                for (size_t q = 0; q < nr; ++q) {
                    int32_t total = rq->bias[j + q] + vaddvq_s32(acc[r][q]);
                    for (size_t p = k16; p < k; ++p) total += (int32_t)(int8_t)(ar[r][p] ^ a_flip) * (int32_t)wc[q][p];
                    c[(i + r) * c_rs + (j + q) * c_cs] = mlcc_qs8_requantize(total, rq->multiplier[j + q], rq->shift[j + q], rq);
                }
            }
        }
    }
}
#endif
