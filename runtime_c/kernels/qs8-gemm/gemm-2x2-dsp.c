/* qs8-gemm for Cortex-M with the DSP extension (Armv7E-M: Cortex-M4, M7; Armv8-M Mainline with DSP: M33,
 * M55): tiles of 2 rows x 2 columns, 4 bytes of k a step. SXTB16 sign-extends bytes 0 and 2 (and, rotated by
 * 8, bytes 1 and 3) of a word into two 16-bit halves, and SMLAD adds both 16 x 16-bit products to a 32-bit
 * accumulator: the products are exact and the sum is in 32 bits, so nothing saturates. Rows and columns
 * past the product's edge reuse the first and are not stored; k past a multiple of 4 is finished in
 * scalar code. */
#if defined(__ARM_FEATURE_DSP) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#include <arm_acle.h>

#include "mlcc/kernels/qs8-gemm.h"

static inline uint32_t load_word(const void *p) {
    uint32_t v;
    __builtin_memcpy(&v, p, 4);  /* one LDR: Armv7E-M loads unaligned words */
    return v;
}

void mlcc_qs8_gemm__dsp(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                        const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                        const struct mlcc_qs8_requant *rq) {
    const size_t k4 = k & ~(size_t)3;
    const uint32_t flip = a_flip * 0x01010101u;
    for (size_t i = 0; i < m; i += 2) {
        const size_t mr = MLCC_MIN(2, m - i);
        const uint8_t *a0 = a + i * lda, *a1 = mr > 1 ? a0 + lda : a0;
        for (size_t j = 0; j < n; j += 2) {
            const size_t nr = MLCC_MIN(2, n - j);
            const int8_t *w0 = w + j * ldw, *w1 = nr > 1 ? w0 + ldw : w0;
            int32_t acc00 = 0, acc01 = 0, acc10 = 0, acc11 = 0;
            for (size_t p = 0; p < k4; p += 4) {
                const uint32_t x0 = load_word(a0 + p) ^ flip, x1 = load_word(a1 + p) ^ flip;
                const uint32_t b0 = load_word(w0 + p), b1 = load_word(w1 + p);
                const int16x2_t x0e = __sxtb16(x0), x0o = __sxtb16(__ror(x0, 8));
                const int16x2_t x1e = __sxtb16(x1), x1o = __sxtb16(__ror(x1, 8));
                const int16x2_t b0e = __sxtb16(b0), b0o = __sxtb16(__ror(b0, 8));
                const int16x2_t b1e = __sxtb16(b1), b1o = __sxtb16(__ror(b1, 8));
                acc00 = __smlad(x0o, b0o, __smlad(x0e, b0e, acc00));
                acc01 = __smlad(x0o, b1o, __smlad(x0e, b1e, acc01));
                acc10 = __smlad(x1o, b0o, __smlad(x1e, b0e, acc10));
                acc11 = __smlad(x1o, b1o, __smlad(x1e, b1e, acc11));
            }
            const int32_t sums[2][2] = {{acc00, acc01}, {acc10, acc11}};
            for (size_t r = 0; r < mr; ++r) {
                const uint8_t *ar = r ? a1 : a0;
                for (size_t q = 0; q < nr; ++q) {
                    const int8_t *wq = q ? w1 : w0;
                    int32_t total = rq->bias[j + q] + sums[r][q];
                    for (size_t p = k4; p < k; ++p) total += (int32_t)(int8_t)(ar[p] ^ a_flip) * (int32_t)wq[p];
                    c[(i + r) * c_rs + (j + q) * c_cs] = mlcc_qs8_requantize(total, rq->multiplier[j + q], rq->shift[j + q], rq);
                }
            }
        }
    }
}
#endif
