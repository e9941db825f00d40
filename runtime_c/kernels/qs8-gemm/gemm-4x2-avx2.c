/* qs8-gemm for AVX2: tiles of 4 rows x 2 columns, 16 bytes of k a step. Each byte is sign-extended to
 * 16 bits (vpmovsxbw) and pairs are multiplied and added into 32-bit lanes (vpmaddwd): 16-bit products of
 * 8-bit values cannot saturate, unlike vpmaddubsw's pair sums, so the result is exact. Rows and columns past
 * the product's edge reuse the first row or column and are not stored; k past a multiple of 16 is finished
 * in scalar code. */
#if defined(__AVX2__)
#include <immintrin.h>

#include "tile.h"

#define MR 4
#define NR 2

static inline int32_t sum_lanes(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

void mlcc_qs8_gemm__avx2(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                         const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                         const struct mlcc_qs8_requant *rq) {
    const size_t k16 = k & ~(size_t)15;
    const __m128i flip = _mm_set1_epi8((char)a_flip);
    for (size_t i = 0; i < m; i += MR) {
        const size_t mr = MLCC_MIN(MR, m - i);
        const uint8_t *ar[MR];
        for (size_t r = 0; r < MR; ++r) ar[r] = a + (i + (r < mr ? r : 0)) * lda;
        for (size_t j = 0; j < n; j += NR) {
            const size_t nr = MLCC_MIN(NR, n - j);
            const int8_t *w0 = w + j * ldw, *w1 = w + (j + (nr > 1 ? 1 : 0)) * ldw;
            __m256i acc[MR][NR];
            for (size_t r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
            for (size_t p = 0; p < k16; p += 16) {
                const __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w0 + p)));
                const __m256i b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w1 + p)));
                for (size_t r = 0; r < MR; ++r) {
                    const __m256i x = _mm256_cvtepi8_epi16(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(ar[r] + p)), flip));
                    acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x, b0));
                    acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x, b1));
                }
            }
            for (size_t r = 0; r < mr; ++r) {
                for (size_t q = 0; q < nr; ++q) {
                    c[(i + r) * c_rs + (j + q) * c_cs] =
                        mlcc_qs8_gemm_finish(sum_lanes(acc[r][q]), ar[r], a_flip, q ? w1 : w0, k16, k, j + q, rq);
                }
            }
        }
    }
}
#endif
