/* qs8-packed GEMM for AVX-512 VNNI (see qs8-packed.h): tiles of 8 rows x one 16-column panel, one vpdpbusd per
 * row and 4 bytes of k: the row's quad broadcast, the panel's 16 columns x 4 bytes as they are packed.
 * vpdpbusd multiplies unsigned by signed bytes and sums the four 16-bit products into 32 bits (no
 * saturation): it is fed a' + 128 (a ^ a_flip ^ 0x80) and the accumulators start at bias - 128 * sums,
 * so the result is exact. Requantization: each lane's multiplier and shift, 64-bit products and arithmetic
 * shifts (vpsravq). A shift below 31 (a real multiplier of 1 or more) takes the reference's code. */
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#include <immintrin.h>
#include <string.h>

#include "mlcc/kernels/qs8-packed.h"

#define MR 8

static inline int32_t row_quad(const uint8_t *row, size_t q, size_t k, uint32_t flip) {
    uint32_t bytes = 0;
    if (4 * q + 4 <= k) {
        memcpy(&bytes, row + 4 * q, 4);
    } else {  /* past k meets the panel's zero padding */
        for (size_t p = 4 * q; p < k; ++p) bytes |= (uint32_t)row[p] << (8 * (p - 4 * q));
    }
    return (int32_t)(bytes ^ flip);
}

void mlcc_qs8_packed_gemm__avx512vnni(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                      const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    for (size_t j = 0; j < n; ++j) {
        if (rq->shift[j] < 31) {
            mlcc_qs8_packed_gemm__reference(m, n, k, a, lda, a_flip, packed, c, ldc, rq);
            return;
        }
    }
    const size_t panel = mlcc_qs8_packed_panel_bytes(k), quads = (k + 3) / 4, k4 = k / 4;
    const uint32_t flip = (uint32_t)(a_flip ^ 0x80) * 0x01010101u;
    const __m512i zero_point = _mm512_set1_epi32(rq->y_zero);
    const __m512i low = _mm512_set1_epi32(rq->y_min), high = _mm512_set1_epi32(rq->y_max);
    const __m512i one = _mm512_set1_epi64(1);
    for (size_t j = 0; j < n; j += MLCC_QS8_PACKED_NR) {
        const size_t nr = MLCC_MIN(MLCC_QS8_PACKED_NR, n - j);
        const __mmask16 columns = (__mmask16)(nr == 16 ? 0xFFFFu : (1u << nr) - 1u);
        const int8_t *base = packed + (j / MLCC_QS8_PACKED_NR) * panel;
        const __m512i sums = _mm512_loadu_si512(base);
        const int8_t *weights = base + 64;
        const __m512i start = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(columns, rq->bias + j), _mm512_slli_epi32(sums, 7));
        const __m512i multiplier = _mm512_mask_loadu_epi32(_mm512_set1_epi32(1 << 30), columns, rq->multiplier + j);
        const __m512i shifts = _mm512_mask_loadu_epi32(_mm512_set1_epi32(31), columns, rq->shift + j);
        const __m512i s_even = _mm512_and_si512(shifts, _mm512_set1_epi64(0xFFFFFFFF)), s_odd = _mm512_srli_epi64(shifts, 32);
        const __m512i round_even = _mm512_sllv_epi64(one, _mm512_sub_epi64(s_even, one));
        const __m512i round_odd = _mm512_sllv_epi64(one, _mm512_sub_epi64(s_odd, one));
        const __m512i mult_odd = _mm512_srli_epi64(multiplier, 32);
        for (size_t i = 0; i < m; i += MR) {
            const size_t mr = MLCC_MIN(MR, m - i);
            const uint8_t *rows[MR];
            for (size_t r = 0; r < MR; ++r) rows[r] = a + (i + (r < mr ? r : 0)) * lda;
            __m512i acc[MR];
            for (size_t r = 0; r < MR; ++r) acc[r] = start;
            for (size_t q = 0; q < k4; ++q) {
                const __m512i ws = _mm512_loadu_si512(weights + q * 64);
                for (size_t r = 0; r < MR; ++r) {
                    int32_t bytes;
                    memcpy(&bytes, rows[r] + 4 * q, 4);
                    acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32(bytes ^ (int32_t)flip), ws);
                }
            }
            if (k4 < quads) {
                const __m512i ws = _mm512_loadu_si512(weights + k4 * 64);
                for (size_t r = 0; r < MR; ++r) acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_set1_epi32(row_quad(rows[r], k4, k, flip)), ws);
            }
            for (size_t r = 0; r < mr; ++r) {
                const __m512i even = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(acc[r], multiplier), round_even), s_even);
                const __m512i odd = _mm512_srav_epi64(
                    _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(acc[r], 32), mult_odd), round_odd), s_odd);
                __m512i v = _mm512_mask_blend_epi32((__mmask16)0xAAAA, even, _mm512_slli_epi64(odd, 32));
                v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, zero_point), low), high);
                _mm_mask_storeu_epi8(c + (i + r) * ldc + j, columns, _mm512_cvtepi32_epi8(v));
            }
        }
    }
}
#endif
