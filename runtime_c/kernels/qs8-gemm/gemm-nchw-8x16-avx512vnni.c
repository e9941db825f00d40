/* qs8-gemm channel-major kernel for AVX-512 VNNI (see qs8-gemm.h): tiles of 8 output channels x 16 pixels.
 * Four input rows are interleaved into 4-byte groups per pixel and multiplied by the channel's 4 weights
 * with vpdpbusd, which takes unsigned bytes: the kernel feeds x' + 128 (x ^ x_flip ^ 0x80) and takes back
 * 128 * sum(w) per channel, so the result is exact (vpdpbusd sums four 16-bit products into 32 bits with no
 * saturation). k past a multiple of 4 meets the weights' zero padding (on a repeated row); pixels past a
 * multiple of 16 are masked loads and stores. */
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#include <immintrin.h>

#include "mlcc/kernels/qs8-gemm.h"

#define MR 8

void mlcc_qs8_gemm_nchw__avx512vnni(size_t n, size_t pixels, size_t k, const int8_t *w, size_t ldw,
                                    const uint8_t *x, size_t x_stride, uint8_t x_flip,
                                    uint8_t *y, size_t y_stride, const struct mlcc_qs8_requant *rq) {
    const __m128i flip = _mm_set1_epi8((char)(x_flip ^ 0x80));
    const __m512i low = _mm512_set1_epi32(rq->y_min), high = _mm512_set1_epi32(rq->y_max);
    const __m512i zero_point = _mm512_set1_epi32(rq->y_zero);
    const size_t quads = (k + 3) / 4;
    for (size_t j = 0; j < n; j += MR) {
        const size_t mr = MLCC_MIN(MR, n - j);
        const int8_t *wr[MR];
        int32_t base[MR];  /* bias - 128 * sum(w): the unsigned shift taken back */
        for (size_t r = 0; r < MR; ++r) {
            wr[r] = w + (j + (r < mr ? r : 0)) * ldw;
            int32_t sum = 0;
            for (size_t q = 0; q < k; ++q) sum += wr[r][q];
            base[r] = (r < mr ? rq->bias[j + r] : 0) - 128 * sum;
        }
        for (size_t p = 0; p < pixels; p += 16) {
            const __mmask16 lanes = (__mmask16)(pixels - p >= 16 ? 0xFFFFu : (1u << (pixels - p)) - 1u);
            __m512i acc[MR];
            for (size_t r = 0; r < MR; ++r) acc[r] = _mm512_set1_epi32(base[r]);
            for (size_t i = 0; i < quads; ++i) {
                __m128i v[4];
                for (size_t t = 0; t < 4; ++t) {
                    const size_t row = 4 * i + t < k ? 4 * i + t : 4 * i;
                    v[t] = _mm_xor_si128(_mm_maskz_loadu_epi8(lanes, x + row * x_stride + p), flip);
                }
                const __m128i a01lo = _mm_unpacklo_epi8(v[0], v[1]), a01hi = _mm_unpackhi_epi8(v[0], v[1]);
                const __m128i a23lo = _mm_unpacklo_epi8(v[2], v[3]), a23hi = _mm_unpackhi_epi8(v[2], v[3]);
                __m512i xs = _mm512_castsi128_si512(_mm_unpacklo_epi16(a01lo, a23lo));  /* pixels 0-3 */
                xs = _mm512_inserti32x4(xs, _mm_unpackhi_epi16(a01lo, a23lo), 1);      /* 4-7 */
                xs = _mm512_inserti32x4(xs, _mm_unpacklo_epi16(a01hi, a23hi), 2);      /* 8-11 */
                xs = _mm512_inserti32x4(xs, _mm_unpackhi_epi16(a01hi, a23hi), 3);      /* 12-15 */
                for (size_t r = 0; r < MR; ++r) {
                    int32_t quad;
                    __builtin_memcpy(&quad, wr[r] + 4 * i, 4);  /* zero past k: the rows are padded */
                    acc[r] = _mm512_dpbusd_epi32(acc[r], xs, _mm512_set1_epi32(quad));
                }
            }
            for (size_t r = 0; r < mr; ++r) {
                const size_t c = j + r;
                const int32_t shift = rq->shift[c];
                uint8_t *out = y + c * y_stride + p;
                if (shift < 31) {  /* the product may not fit 32 bits after the shift: the scalar path */
                    int32_t values[16];
                    _mm512_storeu_si512(values, acc[r]);
                    for (size_t q = 0; q < 16 && p + q < pixels; ++q) {
                        out[q] = mlcc_qs8_requantize(values[q], rq->multiplier[c], shift, rq);
                    }
                    continue;
                }
                const __m512i multiplier = _mm512_set1_epi64(rq->multiplier[c]);
                const __m512i round = _mm512_set1_epi64((int64_t)1 << (shift - 1));
                const __m128i count = _mm_cvtsi32_si128(shift);
                const __m512i even = _mm512_sra_epi64(_mm512_add_epi64(_mm512_mul_epi32(acc[r], multiplier), round), count);
                const __m512i odd = _mm512_sra_epi64(_mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(acc[r], 32), multiplier), round), count);
                __m512i v = _mm512_mask_blend_epi32((__mmask16)0xAAAA, even, _mm512_slli_epi64(odd, 32));
                v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, zero_point), low), high);
                _mm_mask_storeu_epi8(out, lanes, _mm512_cvtepi32_epi8(v));
            }
        }
    }
}
#endif
