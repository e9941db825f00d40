/* qs8-dwconv for AVX2 (see qs8-dwconv.h): 16 channels a step, each tap's bytes sign-extended to 16 bits and
 * multiplied with vpmullw (|x' w| <= 2^14 fits 16 bits exactly), then widened and added in 32 bits.
 * Requantization is vectorised across channels with each lane's own multiplier and shift (variable 64-bit
 * shifts, the arithmetic shift done as a logical one of the value plus 2^62, as qs8-gemm.h explains).
 * Channels past a multiple of 16, more than MAX_TAPS taps and a shift below 31 (a real multiplier of 1 or
 * more, whose result may not fit 32 bits before the clamp) take the reference's code. */
#if defined(__AVX2__)
#include <immintrin.h>

#include "mlcc/kernels/qs8-dwconv.h"

#define MAX_TAPS 64

/* requantize(acc, c) for 8 channels before the zero point and clamp, each lane with its own multiplier and
 * shift: the parameters as 64-bit lanes (even and odd channels), made once per block of channels */
struct lanes8 {
    __m256i mult_even, mult_odd, shift_even, shift_odd, round_even, round_odd, unbias_even, unbias_odd;
};

static inline struct lanes8 lanes_of(const int32_t *multiplier, const int32_t *shift) {
    const __m256i mult = _mm256_loadu_si256((const __m256i *)multiplier);
    const __m256i shifts = _mm256_loadu_si256((const __m256i *)shift);
    const __m256i one = _mm256_set1_epi64x(1), bias62 = _mm256_set1_epi64x((int64_t)1 << 62);
    const __m256i sixty_two = _mm256_set1_epi64x(62);
    struct lanes8 l;
    l.mult_even = mult;
    l.mult_odd = _mm256_srli_epi64(mult, 32);
    l.shift_even = _mm256_and_si256(shifts, _mm256_set1_epi64x(0xFFFFFFFF));
    l.shift_odd = _mm256_srli_epi64(shifts, 32);
    l.round_even = _mm256_add_epi64(_mm256_sllv_epi64(one, _mm256_sub_epi64(l.shift_even, one)), bias62);
    l.round_odd = _mm256_add_epi64(_mm256_sllv_epi64(one, _mm256_sub_epi64(l.shift_odd, one)), bias62);
    l.unbias_even = _mm256_sllv_epi64(one, _mm256_sub_epi64(sixty_two, l.shift_even));
    l.unbias_odd = _mm256_sllv_epi64(one, _mm256_sub_epi64(sixty_two, l.shift_odd));
    return l;
}

static inline __m256i requantize8(__m256i acc, const struct lanes8 *l) {
    __m256i even = _mm256_add_epi64(_mm256_mul_epi32(acc, l->mult_even), l->round_even);
    __m256i odd = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(acc, 32), l->mult_odd), l->round_odd);
    even = _mm256_sub_epi64(_mm256_srlv_epi64(even, l->shift_even), l->unbias_even);
    odd = _mm256_sub_epi64(_mm256_srlv_epi64(odd, l->shift_odd), l->unbias_odd);
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

void mlcc_qs8_dwconv_nhwc__avx2(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                const struct mlcc_qs8_requant *rq) {
    const size_t channels = g->channels, taps = g->kernel_h * g->kernel_w, full = channels & ~(size_t)15;
    bool small_shift = false;
    for (size_t c = 0; c < channels; ++c) small_shift |= rq->shift[c] < 31;
    if (taps > MAX_TAPS || small_shift) {
        mlcc_qs8_dwconv_nhwc__reference(g, x, x_zero, a_flip, w, y, rq);
        return;
    }
    const int32_t zero = (int32_t)(int8_t)(x_zero ^ a_flip);
    const __m128i flip = _mm_set1_epi8((char)a_flip);
    const __m256i zeros = _mm256_set1_epi16((int16_t)zero);
    const __m256i zero_point = _mm256_set1_epi32(rq->y_zero);
    const __m256i low = _mm256_set1_epi32(rq->y_min), high = _mm256_set1_epi32(rq->y_max);
    const bool signed_out = rq->y_min < 0;
    const uint8_t *source[MAX_TAPS];
    /* a block of 16 channels at a time over the whole image: its parameters stay in registers */
    for (size_t c = 0; c < full; c += 16) {
        const struct lanes8 l0 = lanes_of(rq->multiplier + c, rq->shift + c), l1 = lanes_of(rq->multiplier + c + 8, rq->shift + c + 8);
        const __m256i bias0 = _mm256_loadu_si256((const __m256i *)(rq->bias + c));
        const __m256i bias1 = _mm256_loadu_si256((const __m256i *)(rq->bias + c + 8));
        for (size_t oh = 0; oh < g->out_h; ++oh) {
            for (size_t ow = 0; ow < g->out_w; ++ow) {
                __m256i acc0 = bias0, acc1 = bias1;
                for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
                    for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) {
                        const uint8_t *src = mlcc_qs8_dwconv_source(g, x, oh, ow, kh, kw);
                        const __m256i xs = src == NULL ? zeros
                            : _mm256_cvtepi8_epi16(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(src + c)), flip));
                        const __m256i ws = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + t * channels + c)));
                        const __m256i products = _mm256_mullo_epi16(xs, ws);
                        acc0 = _mm256_add_epi32(acc0, _mm256_cvtepi16_epi32(_mm256_castsi256_si128(products)));
                        acc1 = _mm256_add_epi32(acc1, _mm256_cvtepi16_epi32(_mm256_extracti128_si256(products, 1)));
                    }
                }
                __m256i v0 = requantize8(acc0, &l0), v1 = requantize8(acc1, &l1);
                v0 = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v0, zero_point), low), high);
                v1 = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v1, zero_point), low), high);
                const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);
                const __m128i w0 = _mm256_castsi256_si128(words), w1 = _mm256_extracti128_si256(words, 1);
                _mm_storeu_si128((__m128i *)(y + (oh * g->out_w + ow) * channels + c),
                                 signed_out ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1));
            }
        }
    }
    if (full == channels) return;
    for (size_t oh = 0; oh < g->out_h; ++oh) {  /* the channels past a multiple of 16 */
        for (size_t ow = 0; ow < g->out_w; ++ow) {
            for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
                for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) source[t] = mlcc_qs8_dwconv_source(g, x, oh, ow, kh, kw);
            }
            uint8_t *yp = y + (oh * g->out_w + ow) * channels;
            for (size_t c = full; c < channels; ++c) {
                int32_t acc = rq->bias[c];
                for (size_t t = 0; t < taps; ++t) {
                    acc += (int32_t)w[t * channels + c] * (source[t] ? (int32_t)(int8_t)(source[t][c] ^ a_flip) : zero);
                }
                yp[c] = mlcc_qs8_requantize(acc, rq->multiplier[c], rq->shift[c], rq);
            }
        }
    }
}
#endif
