/* qs8-gemm for Cortex-M55 Helium (Armv8.1-M MVE): tiles of 2 rows x 2 columns, 16 bytes of k a step.
 * VMLADAVA multiplies 16 byte pairs and adds every product to a 32-bit scalar accumulator (the products are
 * 16-bit values, summed in 32 bits: exact). k past a multiple of 16 is one more step under a tail predicate
 * (VCTP), whose inactive bytes are zero in both operands: no scalar tail and no read past k. Rows and columns past the
 * product's edge reuse the first and are not stored. */
#if defined(__ARM_FEATURE_MVE)
#include <arm_mve.h>

#include "mlcc/kernels/qs8-gemm.h"

void mlcc_qs8_gemm__mve(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                        const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                        const struct mlcc_qs8_requant *rq) {
    const uint8x16_t flip = vdupq_n_u8(a_flip);
    for (size_t i = 0; i < m; i += 2) {
        const size_t mr = MLCC_MIN(2, m - i);
        const uint8_t *a0 = a + i * lda, *a1 = mr > 1 ? a0 + lda : a0;
        for (size_t j = 0; j < n; j += 2) {
            const size_t nr = MLCC_MIN(2, n - j);
            const int8_t *w0 = w + j * ldw, *w1 = nr > 1 ? w0 + ldw : w0;
            int32_t acc00 = 0, acc01 = 0, acc10 = 0, acc11 = 0;
            size_t p = 0;
            for (; p + 16 <= k; p += 16) {
                const int8x16_t x0 = vreinterpretq_s8_u8(veorq_u8(vldrbq_u8(a0 + p), flip));
                const int8x16_t x1 = vreinterpretq_s8_u8(veorq_u8(vldrbq_u8(a1 + p), flip));
                const int8x16_t b0 = vldrbq_s8(w0 + p), b1 = vldrbq_s8(w1 + p);
                acc00 = vmladavaq_s8(acc00, x0, b0);
                acc01 = vmladavaq_s8(acc01, x0, b1);
                acc10 = vmladavaq_s8(acc10, x1, b0);
                acc11 = vmladavaq_s8(acc11, x1, b1);
            }
            if (p < k) {  /* the flip is applied to live bytes only: dead ones stay zero */
                const mve_pred16_t live = vctp8q((uint32_t)(k - p));
                const uint8x16_t zero = vdupq_n_u8(0);
                const int8x16_t x0 = vreinterpretq_s8_u8(veorq_m_u8(zero, vldrbq_z_u8(a0 + p, live), flip, live));
                const int8x16_t x1 = vreinterpretq_s8_u8(veorq_m_u8(zero, vldrbq_z_u8(a1 + p, live), flip, live));
                const int8x16_t b0 = vldrbq_z_s8(w0 + p, live), b1 = vldrbq_z_s8(w1 + p, live);
                acc00 = vmladavaq_s8(acc00, x0, b0);
                acc01 = vmladavaq_s8(acc01, x0, b1);
                acc10 = vmladavaq_s8(acc10, x1, b0);
                acc11 = vmladavaq_s8(acc11, x1, b1);
            }
            const int32_t sums[2][2] = {{acc00, acc01}, {acc10, acc11}};
            for (size_t r = 0; r < mr; ++r) {
                for (size_t q = 0; q < nr; ++q) {
                    c[(i + r) * c_rs + (j + q) * c_cs] =
                        mlcc_qs8_requantize(rq->bias[j + q] + sums[r][q], rq->multiplier[j + q], rq->shift[j + q], rq);
                }
            }
        }
    }
}
#endif
