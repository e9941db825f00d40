/* qs8-gemm for Cortex-M with the DSP extension (Armv7E-M: Cortex-M4, M7; Armv8-M Mainline with DSP: M33,
 * M55): tiles of 2 rows x 1 column, 4 bytes of k a step. SXTB16 sign-extends bytes 0 and 2 (and, rotated by
 * 8, bytes 1 and 3) of a word into two 16-bit halves, and SMLAD adds both 16 x 16-bit products to a 32-bit
 * accumulator: the products are exact and the sum is in 32 bits, so nothing saturates. The tile is what the
 * 13 general registers hold without spilling (2 x 2 spilled: 0.31 multiply-adds per instruction against 0.5
 * for this one, counted under qemu); the activation flip is a constant in each of two copies of the loop, an
 * EOR immediate. A row past the product's edge reuses the first and is not stored; k past a multiple of 4 is
 * finished in scalar code. */
#if defined(__ARM_FEATURE_DSP) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#include <arm_acle.h>

#include "tile.h"

static inline uint32_t load_word(const void *p) {
    uint32_t v;
    __builtin_memcpy(&v, p, 4);  /* one LDR: Armv7E-M loads unaligned words */
    return v;
}

/* sum_p x0[p] w[p] and sum_p x1[p] w[p] over k4 bytes, x = a ^ flip */
static inline __attribute__((always_inline)) void dot_2x1(const uint8_t *a0, const uint8_t *a1, const int8_t *w, size_t k4,
                                                          uint32_t flip, int32_t *acc0, int32_t *acc1) {
    int32_t s0 = 0, s1 = 0;
    for (size_t p = 0; p < k4; p += 4) {
        const uint32_t b = load_word(w + p);
        const int16x2_t be = __sxtb16(b), bo = __sxtb16(__ror(b, 8));
        const uint32_t x0 = load_word(a0 + p) ^ flip;
        s0 = __smlad(__sxtb16(__ror(x0, 8)), bo, __smlad(__sxtb16(x0), be, s0));
        const uint32_t x1 = load_word(a1 + p) ^ flip;
        s1 = __smlad(__sxtb16(__ror(x1, 8)), bo, __smlad(__sxtb16(x1), be, s1));
    }
    *acc0 = s0;
    *acc1 = s1;
}

void mlcc_qs8_gemm__dsp(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                        const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                        const struct mlcc_qs8_requant *rq) {
    const size_t k4 = k & ~(size_t)3;
    for (size_t i = 0; i < m; i += 2) {
        const size_t mr = MLCC_MIN(2, m - i);
        const uint8_t *ar[2] = {a + i * lda, mr > 1 ? a + (i + 1) * lda : a + i * lda};
        for (size_t j = 0; j < n; ++j) {
            const int8_t *wj = w + j * ldw;
            int32_t sums[2];
            if (a_flip) dot_2x1(ar[0], ar[1], wj, k4, 0x80808080u, &sums[0], &sums[1]);
            else dot_2x1(ar[0], ar[1], wj, k4, 0, &sums[0], &sums[1]);
            for (size_t r = 0; r < mr; ++r) c[(i + r) * c_rs + j * c_cs] = mlcc_qs8_gemm_finish(sums[r], ar[r], a_flip, wj, k4, k, j, rq);
        }
    }
}
#endif
