/* qs8-quantize for AVX-512 (F): three planes (an RGB image) 16 pixels a step in 512-bit lanes (the compilers
 * vectorise the reference 256 bits wide), each plane's bytes narrowed by vpmovdb and the three interleaved by
 * byte shuffles into 48 bytes. The same operations as the reference lane by lane: a correctly rounded division,
 * rounding to nearest even, the zero point's addition, max then min (max's NaN operand gives lo, as the
 * reference's comparison does). Other plane counts and the last pixels take the reference. */
#if defined(__AVX512F__)
#include <immintrin.h>
#include <math.h>

#include "mlcc/kernels/qs8-quantize.h"

/* output byte j of 16-byte chunk k is pixel (16 k + j) / 3's plane (16 k + j) % 3: per chunk and plane, the
 * source byte of each output byte, or 0x80 (zero) where another plane's byte goes */
#define PICK(k, c, j) ((16 * (k) + (j)) % 3 == (c) ? (16 * (k) + (j)) / 3 : 0x80)
#define CHUNK(k, c)                                                                                             \
    {PICK(k, c, 0),  PICK(k, c, 1),  PICK(k, c, 2),  PICK(k, c, 3),  PICK(k, c, 4),  PICK(k, c, 5),           \
     PICK(k, c, 6),  PICK(k, c, 7),  PICK(k, c, 8),  PICK(k, c, 9),  PICK(k, c, 10), PICK(k, c, 11),          \
     PICK(k, c, 12), PICK(k, c, 13), PICK(k, c, 14), PICK(k, c, 15)}
static const uint8_t interleave[3][3][16] = {
    {CHUNK(0, 0), CHUNK(0, 1), CHUNK(0, 2)},
    {CHUNK(1, 0), CHUNK(1, 1), CHUNK(1, 2)},
    {CHUNK(2, 0), CHUNK(2, 1), CHUNK(2, 2)},
};

static inline __m128i narrow(__m512 rounded, __m512 zero, __m512 lo, __m512 hi) {
    const __m512 v = _mm512_add_ps(rounded, zero);
    return _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(_mm512_min_ps(_mm512_max_ps(v, lo), hi)));
}

static inline __m512 round_even(__m512 q) {
    return _mm512_roundscale_ps(q, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

static inline __m128i quantize16(const float *x, __m512 scale, __m512 zero, __m512 lo, __m512 hi) {
    return narrow(round_even(_mm512_div_ps(_mm512_loadu_ps(x), scale)), zero, lo, hi);
}

static inline void store48(uint8_t *y, __m128i b0, __m128i b1, __m128i b2, __m128i pick[3][3]) {
    for (int k = 0; k < 3; ++k) {
        const __m128i out = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(b0, pick[k][0]), _mm_shuffle_epi8(b1, pick[k][1])),
                                         _mm_shuffle_epi8(b2, pick[k][2]));
        _mm_storeu_si128((__m128i *)(y + 16 * k), out);
    }
}

void mlcc_qs8_quantize_planes__avx512(size_t planes, size_t pixels, const float *MLCC_RESTRICT x, float scale,
                                      float zero, float lo, float hi, uint8_t *MLCC_RESTRICT y) {
    size_t p = 0;
    if (planes == 3) {
        const __m512 vscale = _mm512_set1_ps(scale), vzero = _mm512_set1_ps(zero);
        const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
        __m128i pick[3][3];
        for (int k = 0; k < 3; ++k) {
            for (int c = 0; c < 3; ++c) pick[k][c] = _mm_loadu_si128((const __m128i *)interleave[k][c]);
        }
        for (; p + 16 <= pixels; p += 16) {
            const __m128i b0 = quantize16(x + p, vscale, vzero, vlo, vhi);
            const __m128i b1 = quantize16(x + pixels + p, vscale, vzero, vlo, vhi);
            const __m128i b2 = quantize16(x + 2 * pixels + p, vscale, vzero, vlo, vhi);
            store48(y + 3 * p, b0, b1, b2, pick);
        }
    }
    for (; p < pixels; ++p) {  /* the last pixels (every pixel of other plane counts), as the reference */
        for (size_t c = 0; c < planes; ++c) {
            const float v = rintf(x[c * pixels + p] / scale) + zero;
            y[p * planes + c] = (uint8_t)(int32_t)(v > lo ? (v < hi ? v : hi) : lo);
        }
    }
}
#endif
