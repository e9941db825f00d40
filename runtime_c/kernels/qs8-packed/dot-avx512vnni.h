/* The product both AVX-512 VNNI forms of qs8-packed run on one 16-column panel (the requantizing
 * gemm-8x16-avx512vnni.c's single-panel tiles, the dequantizing dequant-8x16-avx512vnni.c): `mr` rows (at most
 * 8) of `a`, each row's quad broadcast ^ flip, times the panel's 16 columns x 4 bytes as packed, added into acc
 * by one vpdpbusd per row and quad (unsigned by signed bytes, four 16-bit products summed in 32 bits: exact). */
#ifndef MLCC_QS8_PACKED_DOT_AVX512VNNI_H
#define MLCC_QS8_PACKED_DOT_AVX512VNNI_H

#include <immintrin.h>
#include <string.h>

#include "walk.h"

static inline __attribute__((always_inline)) void mlcc_qs8_vnni_accumulate(size_t mr, const uint8_t *a, size_t lda,
                                                                           size_t k, uint32_t flip,
                                                                           const int8_t *weights, __m512i acc[8]) {
    const size_t k4 = k / 4;
    for (size_t q = 0; q < k4; ++q) {
        const __m512i ws = _mm512_loadu_si512(weights + q * 64);
        for (size_t r = 0; r < mr; ++r) {
            int32_t bytes;
            memcpy(&bytes, a + r * lda + 4 * q, 4);
            acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32(bytes ^ (int32_t)flip), ws);
        }
    }
    if (4 * k4 < k) {
        const __m512i ws = _mm512_loadu_si512(weights + k4 * 64);
        for (size_t r = 0; r < mr; ++r) {
            acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32((int32_t)mlcc_qs8_row_quad(a + r * lda, k4, k, flip)), ws);
        }
    }
}

#endif
