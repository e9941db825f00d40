/* qs8-gemm channel-major kernel for AVX2 (see qs8-gemm.h): tiles of 4 output channels x 16 pixels. Two rows
 * of x (k and k + 1) are interleaved byte by byte, sign-extended to 16 bits and multiplied by the channel's
 * weight pair (vpmaddwd): exact, as products of 16-bit halves cannot saturate. The weight pairs of a tile are
 * widened once into a stack table. Requantization is vectorised across the pixels, which share the
 * channel's multiplier: (acc * multiplier + 2^(shift-1)) >> shift in 64-bit lanes, the arithmetic shift done
 * as a logical one of the value plus 2^62 (AVX2 has no 64-bit arithmetic shift; 2^62 is a multiple of
 * 2^shift, so the floor is unchanged). Pixels past a multiple of 16, k over 2 * MAX_PAIRS and shifts
 * below 31 (a real multiplier of 1 or more) take the reference's code. */
#if defined(__AVX2__)
#include <immintrin.h>

#include "tile.h"

#define MR 4
#define MAX_PAIRS 1152  /* the weight table: 4 x 1152 int32, 18 KiB of stack */

static inline __m256i requantize8(__m256i acc, const __m256i multiplier, const __m128i shift, const __m256i round,
                                  const __m256i unbias) {
    __m256i even = _mm256_mul_epi32(acc, multiplier);
    __m256i odd = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), multiplier);
    even = _mm256_sub_epi64(_mm256_srl_epi64(_mm256_add_epi64(even, round), shift), unbias);
    odd = _mm256_sub_epi64(_mm256_srl_epi64(_mm256_add_epi64(odd, round), shift), unbias);
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

void mlcc_qs8_gemm_nchw__avx2(size_t n, size_t pixels, size_t k, const int8_t *w, size_t ldw,
                              const uint8_t *x, size_t x_stride, uint8_t x_flip,
                              uint8_t *y, size_t y_stride, const struct mlcc_qs8_requant *rq) {
    const size_t pairs = (k + 1) / 2, full = pixels & ~(size_t)15;
    if (pairs > MAX_PAIRS) {
        mlcc_qs8_gemm_nchw__reference(n, pixels, k, w, ldw, x, x_stride, x_flip, y, y_stride, rq);
        return;
    }
    int32_t table[MR * MAX_PAIRS];
    const __m128i flip = _mm_set1_epi8((char)x_flip);
    const __m256i low = _mm256_set1_epi32(rq->y_min), high = _mm256_set1_epi32(rq->y_max);
    const __m256i zero_point = _mm256_set1_epi32(rq->y_zero);
    const bool signed_out = rq->y_min < 0;
    for (size_t j = 0; j < n; j += MR) {
        const size_t mr = MLCC_MIN(MR, n - j);
        mlcc_qs8_gemm_nchw_pack_pairs(table, w, ldw, j, mr, MR, pairs, k);
        for (size_t p = 0; p < full; p += 16) {
            __m256i acc[MR][2];
            for (size_t r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
            for (size_t i = 0; i < pairs; ++i) {
                const uint8_t *row = x + 2 * i * x_stride + p;
                const uint8_t *next = 2 * i + 1 < k ? row + x_stride : row;
                const __m128i v0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)row), flip);
                const __m128i v1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)next), flip);
                const __m256i lo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(v0, v1));
                const __m256i hi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(v0, v1));
                for (size_t r = 0; r < MR; ++r) {
                    const __m256i pair = _mm256_set1_epi32(table[r * pairs + i]);
                    acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(lo, pair));
                    acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(hi, pair));
                }
            }
            for (size_t r = 0; r < mr; ++r) {
                const size_t c = j + r;
                uint8_t *out = y + c * y_stride + p;
                const int32_t shift = rq->shift[c];
                if (shift < 31) {  /* |acc * multiplier| >> shift may not fit 32 bits: the scalar path */
                    int32_t lanes[16];
                    _mm256_storeu_si256((__m256i *)lanes, acc[r][0]);
                    _mm256_storeu_si256((__m256i *)(lanes + 8), acc[r][1]);
                    for (size_t q = 0; q < 16; ++q) out[q] = mlcc_qs8_requantize(rq->bias[c] + lanes[q], rq->multiplier[c], shift, rq);
                    continue;
                }
                const __m256i bias = _mm256_set1_epi32(rq->bias[c]);
                const __m256i multiplier = _mm256_set1_epi64x(rq->multiplier[c]);
                const __m128i count = _mm_cvtsi32_si128(shift);
                const __m256i round = _mm256_set1_epi64x((int64_t)(((uint64_t)1 << (shift - 1)) + ((uint64_t)1 << 62)));
                const __m256i unbias = _mm256_set1_epi64x((int64_t)((uint64_t)1 << (62 - shift)));
                __m256i a0 = requantize8(_mm256_add_epi32(acc[r][0], bias), multiplier, count, round, unbias);
                __m256i a1 = requantize8(_mm256_add_epi32(acc[r][1], bias), multiplier, count, round, unbias);
                a0 = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(a0, zero_point), low), high);
                a1 = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(a1, zero_point), low), high);
                const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(a0, a1), 0xD8);
                const __m128i w0 = _mm256_castsi256_si128(words), w1 = _mm256_extracti128_si256(words, 1);
                _mm_storeu_si128((__m128i *)out, signed_out ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1));
            }
        }
        mlcc_qs8_gemm_nchw_tail(j, mr, full, pixels, k, w, ldw, x, x_stride, x_flip, y, y_stride, rq);
    }
}
#endif
