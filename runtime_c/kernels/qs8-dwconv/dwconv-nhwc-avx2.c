/* qs8-dwconv for AVX2 (see qs8-dwconv.h): 16 channels a step, two taps at a time: their bytes sign-extended
 * to 16 bits, interleaved per channel and multiplied by the weights paired alike with vpmaddwd (two exact
 * 16-bit products summed in 32 bits: no saturation, and one multiply-add per two taps where a product per tap
 * and its widening cost three). The pairing leaves the channels in the order (0-3, 8-11) and (4-7, 12-15),
 * which the requantization parameters are loaded in and vpackssdw undoes. A block of channels runs over the
 * whole image with its paired weights and parameters made once; a pixel whose taps are all inside the image
 * finds them at fixed offsets from its first (no padding tests). Requantization is vectorised across
 * channels with each lane's own multiplier and shift (variable 64-bit shifts, the arithmetic shift done as a
 * logical one of the value plus 2^62, as qs8-gemm.h explains). Channels past a multiple of 16, more than
 * MAX_TAPS taps and a shift below 31 (a real multiplier of 1 or more, whose result may not fit 32 bits before
 * the clamp) take the reference's code. */
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

/* 16 values in the order the pair products leave channels: `lo` holds channels 0-3 and 8-11, `hi` 4-7 and 12-15 */
static inline void interleaved8(const int32_t *values, int32_t lo[8], int32_t hi[8]) {
    for (size_t i = 0; i < 8; ++i) {
        const size_t first = 8 * (i / 4) + i % 4;
        lo[i] = values[first];
        hi[i] = values[first + 4];
    }
}

static inline __m256i requantize8(__m256i acc, const struct lanes8 *l) {
    __m256i even = _mm256_add_epi64(_mm256_mul_epi32(acc, l->mult_even), l->round_even);
    __m256i odd = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(acc, 32), l->mult_odd), l->round_odd);
    even = _mm256_sub_epi64(_mm256_srlv_epi64(even, l->shift_even), l->unbias_even);
    odd = _mm256_sub_epi64(_mm256_srlv_epi64(odd, l->shift_odd), l->unbias_odd);
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

/* One input column of a 3x3 window, 16 channels: rows 0 and 1 paired, row 2 paired with zero, as vpmaddwd
 * takes them (lo: words 0-3 of each 128-bit lane, hi: 4-7) */
struct column {
    __m256i top_lo, top_hi, bottom_lo, bottom_hi;
};

/* column iw of the three rows (NULL: a row in the padding), channels c .. c + 15 */
static inline struct column column_of(const uint8_t *const rows[3], size_t iw, size_t in_w, size_t channels, size_t c,
                                      __m128i flip, __m256i zeros) {
    __m256i v[3];
    for (size_t r = 0; r < 3; ++r) {
        v[r] = rows[r] != NULL && iw < in_w
            ? _mm256_cvtepi8_epi16(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[r] + iw * channels + c)), flip)) : zeros;
    }
    const struct column col = {_mm256_unpacklo_epi16(v[0], v[1]), _mm256_unpackhi_epi16(v[0], v[1]),
                               _mm256_unpacklo_epi16(v[2], _mm256_setzero_si256()), _mm256_unpackhi_epi16(v[2], _mm256_setzero_si256())};
    return col;
}

static inline __m256i pair_products(__m256i acc, __m256i x_pairs, __m256i w_pairs) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(x_pairs, w_pairs));
}

/* A 3x3 depthwise convolution with stride and dilation 1 on the channels up to `full`: each input column is
 * widened and paired once for the three output pixels that read it (a window slides along the row), where
 * the general loop widens every tap of every pixel */
static void dwconv3x3(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                      const int8_t *w, uint8_t *MLCC_RESTRICT y, const struct mlcc_qs8_requant *rq, size_t full) {
    const size_t channels = g->channels;
    const __m128i flip = _mm_set1_epi8((char)a_flip);
    const __m256i zeros = _mm256_set1_epi16((int16_t)(int8_t)(x_zero ^ a_flip));
    const __m256i zero_point = _mm256_set1_epi32(rq->y_zero);
    const __m256i low = _mm256_set1_epi32(rq->y_min), high = _mm256_set1_epi32(rq->y_max);
    const bool signed_out = rq->y_min < 0;
    for (size_t c = 0; c < full; c += 16) {
        struct column weights[3];  /* per kw, the taps of rows 0 and 1 paired, row 2's with zero */
        for (size_t kw = 0; kw < 3; ++kw) {
            const __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + kw * channels + c)));
            const __m256i w1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + (3 + kw) * channels + c)));
            const __m256i w2 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + (6 + kw) * channels + c)));
            weights[kw].top_lo = _mm256_unpacklo_epi16(w0, w1);
            weights[kw].top_hi = _mm256_unpackhi_epi16(w0, w1);
            weights[kw].bottom_lo = _mm256_unpacklo_epi16(w2, _mm256_setzero_si256());
            weights[kw].bottom_hi = _mm256_unpackhi_epi16(w2, _mm256_setzero_si256());
        }
        int32_t lo[8], hi[8], shift_lo[8], shift_hi[8];
        interleaved8(rq->shift + c, shift_lo, shift_hi);
        interleaved8(rq->multiplier + c, lo, hi);
        const struct lanes8 l0 = lanes_of(lo, shift_lo), l1 = lanes_of(hi, shift_hi);
        interleaved8(rq->bias + c, lo, hi);
        const __m256i bias_lo = _mm256_loadu_si256((const __m256i *)lo), bias_hi = _mm256_loadu_si256((const __m256i *)hi);
        for (size_t oh = 0; oh < g->out_h; ++oh) {
            const uint8_t *rows[3];
            for (size_t kh = 0; kh < 3; ++kh) {
                const size_t ih = oh + kh - g->pad_top;  /* wraps around above the image */
                rows[kh] = ih < g->in_h ? x + ih * g->in_w * channels : NULL;
            }
            const size_t iw0 = (size_t)0 - g->pad_left;  /* the first window's first column, wrapping */
            struct column left = column_of(rows, iw0, g->in_w, channels, c, flip, zeros);
            struct column middle = column_of(rows, iw0 + 1, g->in_w, channels, c, flip, zeros);
            for (size_t ow = 0; ow < g->out_w; ++ow) {
                const struct column right = column_of(rows, iw0 + ow + 2, g->in_w, channels, c, flip, zeros);
                __m256i acc_lo = bias_lo, acc_hi = bias_hi;
                acc_lo = pair_products(acc_lo, left.top_lo, weights[0].top_lo);
                acc_hi = pair_products(acc_hi, left.top_hi, weights[0].top_hi);
                acc_lo = pair_products(acc_lo, left.bottom_lo, weights[0].bottom_lo);
                acc_hi = pair_products(acc_hi, left.bottom_hi, weights[0].bottom_hi);
                acc_lo = pair_products(acc_lo, middle.top_lo, weights[1].top_lo);
                acc_hi = pair_products(acc_hi, middle.top_hi, weights[1].top_hi);
                acc_lo = pair_products(acc_lo, middle.bottom_lo, weights[1].bottom_lo);
                acc_hi = pair_products(acc_hi, middle.bottom_hi, weights[1].bottom_hi);
                acc_lo = pair_products(acc_lo, right.top_lo, weights[2].top_lo);
                acc_hi = pair_products(acc_hi, right.top_hi, weights[2].top_hi);
                acc_lo = pair_products(acc_lo, right.bottom_lo, weights[2].bottom_lo);
                acc_hi = pair_products(acc_hi, right.bottom_hi, weights[2].bottom_hi);
                left = middle;
                middle = right;
                __m256i v_lo = requantize8(acc_lo, &l0), v_hi = requantize8(acc_hi, &l1);
                v_lo = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v_lo, zero_point), low), high);
                v_hi = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v_hi, zero_point), low), high);
                const __m256i words = _mm256_packs_epi32(v_lo, v_hi);
                const __m128i w0 = _mm256_castsi256_si128(words), w1 = _mm256_extracti128_si256(words, 1);
                _mm_storeu_si128((__m128i *)(y + (oh * g->out_w + ow) * channels + c),
                                 signed_out ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1));
            }
        }
    }
}

void mlcc_qs8_dwconv_nhwc__avx2(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                const struct mlcc_qs8_requant *rq) {
    const size_t channels = g->channels, taps = g->kernel_h * g->kernel_w, full = channels & ~(size_t)15;
    const size_t pairs = (taps + 1) / 2;
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
    const size_t reach_h = (g->kernel_h - 1) * g->dilation_h, reach_w = (g->kernel_w - 1) * g->dilation_w;
    size_t offset[MAX_TAPS + 1];  /* an interior pixel's taps, from its first; the odd count's dummy tap reads the first */
    for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) offset[t] = (kh * g->dilation_h * g->in_w + kw * g->dilation_w) * channels;
    }
    offset[taps] = 0;
    const uint8_t *source[MAX_TAPS + 1];
    __m256i w_lo[MAX_TAPS / 2], w_hi[MAX_TAPS / 2];  /* the block's weights, taps 2i and 2i + 1 paired */
    const bool window = g->kernel_h == 3 && g->kernel_w == 3 && g->stride_h == 1 && g->stride_w == 1 &&
                        g->dilation_h == 1 && g->dilation_w == 1;
    if (window) dwconv3x3(g, x, x_zero, a_flip, w, y, rq, full);
    for (size_t c = window ? full : 0; c < full; c += 16) {
        for (size_t i = 0; i < pairs; ++i) {
            const __m256i w0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + 2 * i * channels + c)));
            const __m256i w1 = 2 * i + 1 < taps ? _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(w + (2 * i + 1) * channels + c)))
                                                : _mm256_setzero_si256();  /* an odd count's last tap pairs with weight 0 */
            w_lo[i] = _mm256_unpacklo_epi16(w0, w1);
            w_hi[i] = _mm256_unpackhi_epi16(w0, w1);
        }
        int32_t lo[8], hi[8], shift_lo[8], shift_hi[8];
        interleaved8(rq->shift + c, shift_lo, shift_hi);
        interleaved8(rq->multiplier + c, lo, hi);
        const struct lanes8 l0 = lanes_of(lo, shift_lo), l1 = lanes_of(hi, shift_hi);
        interleaved8(rq->bias + c, lo, hi);
        const __m256i bias_lo = _mm256_loadu_si256((const __m256i *)lo), bias_hi = _mm256_loadu_si256((const __m256i *)hi);
        for (size_t oh = 0; oh < g->out_h; ++oh) {
            /* left of the padding wraps around to a huge size_t: one test covers both sides */
            const size_t ih0 = oh * g->stride_h - g->pad_top;
            const bool rows_inside = ih0 < g->in_h && ih0 + reach_h < g->in_h;
            for (size_t ow = 0; ow < g->out_w; ++ow) {
                const size_t iw0 = ow * g->stride_w - g->pad_left;
                __m256i acc_lo = bias_lo, acc_hi = bias_hi;
                if (rows_inside && iw0 < g->in_w && iw0 + reach_w < g->in_w) {
                    const uint8_t *first = x + (ih0 * g->in_w + iw0) * channels + c;
                    for (size_t i = 0; i < pairs; ++i) {
                        const __m256i x0 = _mm256_cvtepi8_epi16(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(first + offset[2 * i])), flip));
                        const __m256i x1 = _mm256_cvtepi8_epi16(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(first + offset[2 * i + 1])), flip));
                        acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), w_lo[i]));
                        acc_hi = _mm256_add_epi32(acc_hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), w_hi[i]));
                    }
                } else {
                    for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
                        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) source[t] = mlcc_qs8_dwconv_source(g, x, oh, ow, kh, kw);
                    }
                    source[taps] = NULL;  /* the odd count's dummy tap: zeros times weight 0 */
                    for (size_t i = 0; i < pairs; ++i) {
                        const uint8_t *s0 = source[2 * i], *s1 = source[2 * i + 1];
                        const __m256i x0 = s0 == NULL ? zeros : _mm256_cvtepi8_epi16(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(s0 + c)), flip));
                        const __m256i x1 = s1 == NULL ? zeros : _mm256_cvtepi8_epi16(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(s1 + c)), flip));
                        acc_lo = _mm256_add_epi32(acc_lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), w_lo[i]));
                        acc_hi = _mm256_add_epi32(acc_hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), w_hi[i]));
                    }
                }
                __m256i v_lo = requantize8(acc_lo, &l0), v_hi = requantize8(acc_hi, &l1);
                v_lo = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v_lo, zero_point), low), high);
                v_hi = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v_hi, zero_point), low), high);
                /* per 128-bit lane, channels (0-3, 4-7) and (8-11, 12-15): the words in order */
                const __m256i words = _mm256_packs_epi32(v_lo, v_hi);
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
