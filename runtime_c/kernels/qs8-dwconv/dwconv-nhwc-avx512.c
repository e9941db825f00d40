/* qs8-dwconv for AVX-512 (F, BW; see qs8-dwconv.h): 32 channels a step, each tap's bytes sign-extended to 16
 * bits and multiplied with vpmullw (|x' w| <= 2^14 fits 16 bits exactly), widened and added in 32 bits.
 * A block of channels runs over the whole image with its requantization parameters in registers (each
 * lane's multiplier and shift: 64-bit products, arithmetic shifts); a pixel whose taps are all inside the
 * image finds them at fixed offsets from its first. Channels past a multiple of 32 are masked loads and
 * stores. More than MAX_TAPS taps and a shift below 31 (a real multiplier of 1 or more) take the reference. */
#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>

#include "mlcc/kernels/qs8-dwconv.h"

#define MAX_TAPS 64

struct lanes16 {
    __m512i mult_even, mult_odd, shift_even, shift_odd, round_even, round_odd;
};

static inline struct lanes16 lanes_of(__mmask16 valid, const int32_t *multiplier, const int32_t *shift) {
    const __m512i mult = _mm512_mask_loadu_epi32(_mm512_set1_epi32(1 << 30), valid, multiplier);
    const __m512i shifts = _mm512_mask_loadu_epi32(_mm512_set1_epi32(31), valid, shift);
    const __m512i one = _mm512_set1_epi64(1);
    struct lanes16 l;
    l.mult_even = mult;
    l.mult_odd = _mm512_srli_epi64(mult, 32);
    l.shift_even = _mm512_and_si512(shifts, _mm512_set1_epi64(0xFFFFFFFF));
    l.shift_odd = _mm512_srli_epi64(shifts, 32);
    l.round_even = _mm512_sllv_epi64(one, _mm512_sub_epi64(l.shift_even, one));
    l.round_odd = _mm512_sllv_epi64(one, _mm512_sub_epi64(l.shift_odd, one));
    return l;
}

static inline __m512i requantize16(__m512i acc, const struct lanes16 *l) {
    const __m512i even = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(acc, l->mult_even), l->round_even), l->shift_even);
    const __m512i odd = _mm512_srav_epi64(
        _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(acc, 32), l->mult_odd), l->round_odd), l->shift_odd);
    return _mm512_mask_blend_epi32((__mmask16)0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

void mlcc_qs8_dwconv_nhwc__avx512(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                  uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                  const struct mlcc_qs8_requant *rq) {
    const size_t channels = g->channels, taps = g->kernel_h * g->kernel_w;
    bool small_shift = false;
    for (size_t c = 0; c < channels; ++c) small_shift |= rq->shift[c] < 31;
    if (taps > MAX_TAPS || small_shift) {
        mlcc_qs8_dwconv_nhwc__reference(g, x, x_zero, a_flip, w, y, rq);
        return;
    }
    const __m256i flip = _mm256_set1_epi8((char)a_flip);
    const __m512i zeros = _mm512_set1_epi16((int16_t)(int8_t)(x_zero ^ a_flip));
    const __m512i zero_point = _mm512_set1_epi32(rq->y_zero);
    const __m512i low = _mm512_set1_epi32(rq->y_min), high = _mm512_set1_epi32(rq->y_max);
    const size_t reach_h = (g->kernel_h - 1) * g->dilation_h, reach_w = (g->kernel_w - 1) * g->dilation_w;
    size_t offset[MAX_TAPS];  /* an interior pixel's taps, from its first */
    for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) offset[t] = (kh * g->dilation_h * g->in_w + kw * g->dilation_w) * channels;
    }
    const uint8_t *source[MAX_TAPS];
    for (size_t c = 0; c < channels; c += 32) {
        const size_t count = MLCC_MIN(32, channels - c);
        const __mmask32 valid = (__mmask32)(count == 32 ? 0xFFFFFFFFu : (1u << count) - 1u);
        const __mmask16 valid0 = (__mmask16)valid, valid1 = (__mmask16)(valid >> 16);
        const struct lanes16 l0 = lanes_of(valid0, rq->multiplier + c, rq->shift + c);
        const struct lanes16 l1 = lanes_of(valid1, rq->multiplier + c + 16, rq->shift + c + 16);
        const __m512i bias0 = _mm512_maskz_loadu_epi32(valid0, rq->bias + c);
        const __m512i bias1 = _mm512_maskz_loadu_epi32(valid1, rq->bias + c + 16);
        for (size_t oh = 0; oh < g->out_h; ++oh) {
            /* left of the padding wraps around to a huge size_t: one test covers both sides */
            const size_t ih0 = oh * g->stride_h - g->pad_top;
            const bool rows_inside = ih0 < g->in_h && ih0 + reach_h < g->in_h;
            for (size_t ow = 0; ow < g->out_w; ++ow) {
                const size_t iw0 = ow * g->stride_w - g->pad_left;
                if (rows_inside && iw0 < g->in_w && iw0 + reach_w < g->in_w) {
                    const uint8_t *first = x + (ih0 * g->in_w + iw0) * channels;
                    for (size_t t = 0; t < taps; ++t) source[t] = first + offset[t];
                } else {
                    for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
                        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) source[t] = mlcc_qs8_dwconv_source(g, x, oh, ow, kh, kw);
                    }
                }
                __m512i acc0 = bias0, acc1 = bias1;
                for (size_t t = 0; t < taps; ++t) {
                    const __m512i xs = source[t] == NULL ? zeros
                        : _mm512_cvtepi8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(valid, source[t] + c), flip));
                    const __m512i ws = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(valid, w + t * channels + c));
                    const __m512i products = _mm512_mullo_epi16(xs, ws);
                    acc0 = _mm512_add_epi32(acc0, _mm512_cvtepi16_epi32(_mm512_castsi512_si256(products)));
                    acc1 = _mm512_add_epi32(acc1, _mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(products, 1)));
                }
                __m512i v0 = requantize16(acc0, &l0), v1 = requantize16(acc1, &l1);
                v0 = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v0, zero_point), low), high);
                v1 = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v1, zero_point), low), high);
                uint8_t *out = y + (oh * g->out_w + ow) * channels + c;
                _mm_mask_storeu_epi8(out, valid0, _mm512_cvtepi32_epi8(v0));
                _mm_mask_storeu_epi8(out + 16, valid1, _mm512_cvtepi32_epi8(v1));
            }
        }
    }
}
#endif
