/* qs8-dwconv for AVX-512 (F, BW; see qs8-dwconv.h): 32 channels a step, two taps at a time: their bytes
 * sign-extended to 16 bits, interleaved per channel and multiplied by the weights paired alike with vpmaddwd
 * (two exact 16-bit products summed in 32 bits: no saturation). The pairing leaves the channels in an
 * interleaved order, which the requantization parameters are loaded in and the stores undo.
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

/* acc + each channel's two taps: exact 16-bit products summed in 32 bits (vpdpwssd where the target has
 * AVX-512 VNNI, else vpmaddwd and an add) */
static inline __m512i pair_products(__m512i acc, __m512i x_pairs, __m512i w_pairs) {
#if defined(__AVX512VNNI__)
    return _mm512_dpwssd_epi32(acc, x_pairs, w_pairs);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(x_pairs, w_pairs));
#endif
}

/* An int32 run of 32 channels in the order the pair products leave them: vpunpck*wd take words 0-3 ("lo")
 * or 4-7 ("hi") of each 128-bit lane, so `lo` holds channels 8j .. 8j + 3 and `hi` 8j + 4 .. 8j + 7 of
 * lane j; past `count` the value is `fill`. */
static void interleaved(const int32_t *values, size_t count, int32_t fill, int32_t lo[16], int32_t hi[16]) {
    for (size_t i = 0; i < 16; ++i) {
        const size_t first = 8 * (i / 4) + i % 4;
        lo[i] = first < count ? values[first] : fill;
        hi[i] = first + 4 < count ? values[first + 4] : fill;
    }
}

/* One input column of a 3x3 window, 32 channels: rows 0 and 1 paired, row 2 paired with zero, as vpmaddwd /
 * vpdpwssd take them (lo: words 0-3 of each 128-bit lane, hi: 4-7) */
struct column {
    __m512i top_lo, top_hi, bottom_lo, bottom_hi;
};

static inline __m512i load_x(const uint8_t *p, __mmask32 valid, __m256i flip) {
    return _mm512_cvtepi8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(valid, p), flip));
}

/* column iw of the three rows (NULL: a row in the padding), channels c .. c + 31 */
static inline struct column column_of(const uint8_t *const rows[3], size_t iw, size_t in_w, size_t channels, size_t c,
                                      __mmask32 valid, __m256i flip, __m512i zeros) {
    __m512i v[3];
    for (size_t r = 0; r < 3; ++r) v[r] = rows[r] != NULL && iw < in_w ? load_x(rows[r] + iw * channels + c, valid, flip) : zeros;
    const struct column col = {_mm512_unpacklo_epi16(v[0], v[1]), _mm512_unpackhi_epi16(v[0], v[1]),
                               _mm512_unpacklo_epi16(v[2], _mm512_setzero_si512()), _mm512_unpackhi_epi16(v[2], _mm512_setzero_si512())};
    return col;
}

/* A 3x3 depthwise convolution with stride and dilation 1: each input column is widened and paired once for
 * the three output pixels that read it (a window slides along the row), where the general loop widens every
 * tap of every pixel: 12 multiply-adds a pixel and a block instead of 10 loads, widenings and pairings too */
static void dwconv3x3(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                      const int8_t *w, uint8_t *MLCC_RESTRICT y, const struct mlcc_qs8_requant *rq) {
    const size_t channels = g->channels;
    const __m256i flip = _mm256_set1_epi8((char)a_flip);
    const __m512i zeros = _mm512_set1_epi16((int16_t)(int8_t)(x_zero ^ a_flip));
    const __m512i zero_point = _mm512_set1_epi32(rq->y_zero);
    const __m512i low = _mm512_set1_epi32(rq->y_min), high = _mm512_set1_epi32(rq->y_max);
    for (size_t c = 0; c < channels; c += 32) {
        const size_t count = MLCC_MIN(32, channels - c);
        const __mmask32 valid = (__mmask32)(count == 32 ? 0xFFFFFFFFu : (1u << count) - 1u);
        struct column weights[3];  /* per kw, the taps of rows 0 and 1 paired, row 2's with zero */
        for (size_t kw = 0; kw < 3; ++kw) {
            const __m512i w0 = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(valid, w + kw * channels + c));
            const __m512i w1 = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(valid, w + (3 + kw) * channels + c));
            const __m512i w2 = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(valid, w + (6 + kw) * channels + c));
            weights[kw].top_lo = _mm512_unpacklo_epi16(w0, w1);
            weights[kw].top_hi = _mm512_unpackhi_epi16(w0, w1);
            weights[kw].bottom_lo = _mm512_unpacklo_epi16(w2, _mm512_setzero_si512());
            weights[kw].bottom_hi = _mm512_unpackhi_epi16(w2, _mm512_setzero_si512());
        }
        int32_t lo[16], hi[16], shift_lo[16], shift_hi[16];
        interleaved(rq->shift + c, count, 31, shift_lo, shift_hi);
        interleaved(rq->multiplier + c, count, 1 << 30, lo, hi);
        const struct lanes16 l0 = lanes_of((__mmask16)0xFFFF, lo, shift_lo), l1 = lanes_of((__mmask16)0xFFFF, hi, shift_hi);
        interleaved(rq->bias + c, count, 0, lo, hi);
        const __m512i bias_lo = _mm512_loadu_si512(lo), bias_hi = _mm512_loadu_si512(hi);
        for (size_t oh = 0; oh < g->out_h; ++oh) {
            const uint8_t *rows[3];
            for (size_t kh = 0; kh < 3; ++kh) {
                const size_t ih = oh + kh - g->pad_top;  /* wraps around above the image */
                rows[kh] = ih < g->in_h ? x + ih * g->in_w * channels : NULL;
            }
            const size_t iw0 = (size_t)0 - g->pad_left;  /* the first window's first column, wrapping */
            struct column left = column_of(rows, iw0, g->in_w, channels, c, valid, flip, zeros);
            struct column middle = column_of(rows, iw0 + 1, g->in_w, channels, c, valid, flip, zeros);
            for (size_t ow = 0; ow < g->out_w; ++ow) {
                const struct column right = column_of(rows, iw0 + ow + 2, g->in_w, channels, c, valid, flip, zeros);
                __m512i acc_lo = bias_lo, acc_hi = bias_hi;
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
                __m512i v_lo = requantize16(acc_lo, &l0), v_hi = requantize16(acc_hi, &l1);
                v_lo = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v_lo, zero_point), low), high);
                v_hi = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v_hi, zero_point), low), high);
                const __m128i b_lo = _mm512_cvtepi32_epi8(v_lo), b_hi = _mm512_cvtepi32_epi8(v_hi);
                const __m256i bytes = _mm256_set_m128i(_mm_unpackhi_epi32(b_lo, b_hi), _mm_unpacklo_epi32(b_lo, b_hi));
                _mm256_mask_storeu_epi8(y + (oh * g->out_w + ow) * channels + c, valid, bytes);
            }
        }
    }
}

void mlcc_qs8_dwconv_nhwc__avx512(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                  uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                  const struct mlcc_qs8_requant *rq) {
    const size_t channels = g->channels, taps = g->kernel_h * g->kernel_w, pairs = (taps + 1) / 2;
    bool small_shift = false;
    for (size_t c = 0; c < channels; ++c) small_shift |= rq->shift[c] < 31;
    if (taps > MAX_TAPS || small_shift) {
        mlcc_qs8_dwconv_nhwc__reference(g, x, x_zero, a_flip, w, y, rq);
        return;
    }
    if (g->kernel_h == 3 && g->kernel_w == 3 && g->stride_h == 1 && g->stride_w == 1 && g->dilation_h == 1 && g->dilation_w == 1) {
        dwconv3x3(g, x, x_zero, a_flip, w, y, rq);
        return;
    }
    const __m256i flip = _mm256_set1_epi8((char)a_flip);
    const __m512i zeros = _mm512_set1_epi16((int16_t)(int8_t)(x_zero ^ a_flip));
    const __m512i zero_point = _mm512_set1_epi32(rq->y_zero);
    const __m512i low = _mm512_set1_epi32(rq->y_min), high = _mm512_set1_epi32(rq->y_max);
    const size_t reach_h = (g->kernel_h - 1) * g->dilation_h, reach_w = (g->kernel_w - 1) * g->dilation_w;
    size_t offset[MAX_TAPS + 1];  /* an interior pixel's taps, from its first; the odd count's dummy tap reads the first */
    for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) offset[t] = (kh * g->dilation_h * g->in_w + kw * g->dilation_w) * channels;
    }
    offset[taps] = 0;
    const uint8_t *source[MAX_TAPS + 1];
    __m512i w_lo[MAX_TAPS / 2], w_hi[MAX_TAPS / 2];  /* the block's weights, taps 2i and 2i + 1 paired */
    for (size_t c = 0; c < channels; c += 32) {
        const size_t count = MLCC_MIN(32, channels - c);
        const __mmask32 valid = (__mmask32)(count == 32 ? 0xFFFFFFFFu : (1u << count) - 1u);
        for (size_t i = 0; i < pairs; ++i) {
            const __m512i w0 = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(valid, w + 2 * i * channels + c));
            const __m512i w1 = 2 * i + 1 < taps ? _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(valid, w + (2 * i + 1) * channels + c))
                                                : _mm512_setzero_si512();  /* an odd count's last tap pairs with weight 0 */
            w_lo[i] = _mm512_unpacklo_epi16(w0, w1);
            w_hi[i] = _mm512_unpackhi_epi16(w0, w1);
        }
        int32_t lo[16], hi[16], shift_lo[16], shift_hi[16];
        interleaved(rq->shift + c, count, 31, shift_lo, shift_hi);
        interleaved(rq->multiplier + c, count, 1 << 30, lo, hi);
        const struct lanes16 l0 = lanes_of((__mmask16)0xFFFF, lo, shift_lo), l1 = lanes_of((__mmask16)0xFFFF, hi, shift_hi);
        interleaved(rq->bias + c, count, 0, lo, hi);
        const __m512i bias_lo = _mm512_loadu_si512(lo), bias_hi = _mm512_loadu_si512(hi);
        for (size_t oh = 0; oh < g->out_h; ++oh) {
            /* left of the padding wraps around to a huge size_t: one test covers both sides */
            const size_t ih0 = oh * g->stride_h - g->pad_top;
            const bool rows_inside = ih0 < g->in_h && ih0 + reach_h < g->in_h;
            for (size_t ow = 0; ow < g->out_w; ++ow) {
                const size_t iw0 = ow * g->stride_w - g->pad_left;
                __m512i acc_lo = bias_lo, acc_hi = bias_hi;
                if (rows_inside && iw0 < g->in_w && iw0 + reach_w < g->in_w) {  /* no tap in the padding */
                    const uint8_t *first = x + (ih0 * g->in_w + iw0) * channels + c;
                    for (size_t i = 0; i < pairs; ++i) {
                        const __m512i x0 = _mm512_cvtepi8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(valid, first + offset[2 * i]), flip));
                        const __m512i x1 = _mm512_cvtepi8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(valid, first + offset[2 * i + 1]), flip));
                        acc_lo = pair_products(acc_lo, _mm512_unpacklo_epi16(x0, x1), w_lo[i]);
                        acc_hi = pair_products(acc_hi, _mm512_unpackhi_epi16(x0, x1), w_hi[i]);
                    }
                } else {
                    for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
                        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) source[t] = mlcc_qs8_dwconv_source(g, x, oh, ow, kh, kw);
                    }
                    source[taps] = NULL;  /* the odd count's dummy tap: zeros times weight 0 */
                    for (size_t i = 0; i < pairs; ++i) {
                        const uint8_t *s0 = source[2 * i], *s1 = source[2 * i + 1];
                        const __m512i x0 = s0 == NULL ? zeros
                            : _mm512_cvtepi8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(valid, s0 + c), flip));
                        const __m512i x1 = s1 == NULL ? zeros
                            : _mm512_cvtepi8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(valid, s1 + c), flip));
                        acc_lo = pair_products(acc_lo, _mm512_unpacklo_epi16(x0, x1), w_lo[i]);
                        acc_hi = pair_products(acc_hi, _mm512_unpackhi_epi16(x0, x1), w_hi[i]);
                    }
                }
                __m512i v_lo = requantize16(acc_lo, &l0), v_hi = requantize16(acc_hi, &l1);
                v_lo = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v_lo, zero_point), low), high);
                v_hi = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v_hi, zero_point), low), high);
                /* bytes of channels (0-3, 8-11, 16-19, 24-27) and (4-7, 12-15, ...) back in order */
                const __m128i b_lo = _mm512_cvtepi32_epi8(v_lo), b_hi = _mm512_cvtepi32_epi8(v_hi);
                const __m256i bytes = _mm256_set_m128i(_mm_unpackhi_epi32(b_lo, b_hi), _mm_unpacklo_epi32(b_lo, b_hi));
                _mm256_mask_storeu_epi8(y + (oh * g->out_w + ow) * channels + c, valid, bytes);
            }
        }
    }
}
#endif
