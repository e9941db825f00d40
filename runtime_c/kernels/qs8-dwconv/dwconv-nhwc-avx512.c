/* qs8-dwconv for AVX-512 (F, BW; see qs8-dwconv.h): 32 channels a step, two taps at a time (blocks.h): their
 * bytes sign-extended to 16 bits, interleaved per channel and multiplied by the weights paired alike with
 * vpmaddwd, or vpdpwssd where the target has AVX-512 VNNI (two exact 16-bit products summed in 32 bits: no
 * saturation); the stores undo the pairing's channel order. Requantization: each lane's multiplier and shift,
 * 64-bit products, arithmetic shifts. Channels past a multiple of 32 are masked loads and stores. More than
 * MAX_TAPS taps and a shift below 31 (a real multiplier of 1 or more) take the reference. With AVX-512 VNNI, a 3x3
 * window of stride 1 or 2 takes dot3x3-avx512vnni.h's vpdpbusd loops (three taps a multiply-add) instead. */
#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>

#include "mlcc/kernels/qs8-dwconv.h"

#define BLOCK 32
#define PARTIAL_BLOCKS 1
typedef __m512i vec;

struct lanes {
    __m512i mult_even, mult_odd, shift_even, shift_odd, round_even, round_odd;
};

static inline struct lanes lanes_of(const int32_t *multiplier, const int32_t *shift) {
    const __m512i mult = _mm512_loadu_si512(multiplier);
    const __m512i shifts = _mm512_loadu_si512(shift);
    const __m512i one = _mm512_set1_epi64(1);
    struct lanes l;
    l.mult_even = mult;
    l.mult_odd = _mm512_srli_epi64(mult, 32);
    l.shift_even = _mm512_and_si512(shifts, _mm512_set1_epi64(0xFFFFFFFF));
    l.shift_odd = _mm512_srli_epi64(shifts, 32);
    l.round_even = _mm512_sllv_epi64(one, _mm512_sub_epi64(l.shift_even, one));
    l.round_odd = _mm512_sllv_epi64(one, _mm512_sub_epi64(l.shift_odd, one));
    return l;
}

static inline __m512i requantize(__m512i acc, const struct lanes *l) {
    const __m512i even = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(acc, l->mult_even), l->round_even), l->shift_even);
    const __m512i odd = _mm512_srav_epi64(
        _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(acc, 32), l->mult_odd), l->round_odd), l->shift_odd);
    return _mm512_mask_blend_epi32((__mmask16)0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

struct io {
    __mmask32 valid;
    __m256i flip;
    __m512i padding, zero_point, low, high;  /* the last three as 16-bit lanes */
};

static inline struct io io_of(uint8_t x_zero, uint8_t a_flip, const struct mlcc_qs8_requant *rq, size_t count) {
    const struct io io = {(__mmask32)(count == 32 ? 0xFFFFFFFFu : (1u << count) - 1u), _mm256_set1_epi8((char)a_flip),
                          _mm512_set1_epi16((int16_t)(int8_t)(x_zero ^ a_flip)), _mm512_set1_epi16((int16_t)rq->y_zero),
                          _mm512_set1_epi16((int16_t)rq->y_min), _mm512_set1_epi16((int16_t)rq->y_max)};
    return io;
}

static inline __m512i load_x(const uint8_t *p, const struct io *io) {
    return _mm512_cvtepi8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(io->valid, p), io->flip));
}

static inline __m512i load_w(const int8_t *p, const struct io *io) {
    return _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(io->valid, p));
}

static inline __m512i padding(const struct io *io) { return io->padding; }
static inline __m512i zero(void) { return _mm512_setzero_si512(); }
static inline __m512i load_i32(const int32_t *p) { return _mm512_loadu_si512(p); }
static inline __m512i pair_lo(__m512i a, __m512i b) { return _mm512_unpacklo_epi16(a, b); }
static inline __m512i pair_hi(__m512i a, __m512i b) { return _mm512_unpackhi_epi16(a, b); }

static inline __m512i pair_products(__m512i acc, __m512i x_pairs, __m512i w_pairs) {
#if defined(__AVX512VNNI__)
    return _mm512_dpwssd_epi32(acc, x_pairs, w_pairs);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(x_pairs, w_pairs));
#endif
}

/* Per 128-bit lane j, v_lo holds channels 8j .. 8j + 3 and v_hi 8j + 4 .. 8j + 7, so vpackssdw leaves the 32
 * channels' words in order; then the zero point (saturating add) and the clamp in 16 bits: saturating moves a
 * value already past the clamp bounds only further out, so the clamped byte is the 32-bit clamp's */
static inline void store(uint8_t *y, __m512i v_lo, __m512i v_hi, const struct io *io) {
    const __m512i words = _mm512_packs_epi32(v_lo, v_hi);
    const __m512i clamped = _mm512_min_epi16(_mm512_max_epi16(_mm512_adds_epi16(words, io->zero_point), io->low), io->high);
    _mm256_mask_storeu_epi8(y, io->valid, _mm512_cvtepi16_epi8(clamped));
}

#include "blocks.h"
#if defined(__AVX512VNNI__)
#include "dot3x3-avx512vnni.h"
#endif

/* Lanes lo .. hi - 1 of a block (clipped to 0 .. 31) */
static inline __mmask32 lanes_between(ptrdiff_t lo, ptrdiff_t hi) {
    lo = lo < 0 ? 0 : lo;
    hi = hi > BLOCK ? BLOCK : hi;
    if (hi <= lo) return 0;
    return (__mmask32)((hi == BLOCK ? 0xFFFFFFFFu : (1u << hi) - 1u) & ~((1u << lo) - 1u));
}

/* Fewer channels than a block, dividing it (1, 2, 4, 8, 16), and stride 1 along the width: an output row's
 * pixels x channels are one run of bytes ("flat"), a tap's inputs the input row's run shifted by a fixed amount,
 * and the weights and requantization parameters repeat every `channels` lanes, so every lane of a block works
 * where a block of channels would leave most of them empty. A lane whose tap falls left or right of the row
 * reads the padding's value (a masked load merged with it); a row in the padding is that value throughout. */
static void dwconv_flat(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                        const int8_t *w, uint8_t *MLCC_RESTRICT y, const struct mlcc_qs8_requant *rq) {
    const size_t channels = g->channels, taps = g->kernel_h * g->kernel_w, pairs = (taps + 1) / 2;
    const ptrdiff_t row_bytes = (ptrdiff_t)(g->out_w * channels), in_row = (ptrdiff_t)(g->in_w * channels);
    int32_t bias[BLOCK], multiplier[BLOCK], shift[BLOCK];
    for (size_t f = 0; f < BLOCK; ++f) {
        bias[f] = rq->bias[f % channels];
        multiplier[f] = rq->multiplier[f % channels];
        shift[f] = rq->shift[f % channels];
    }
    const struct mlcc_qs8_requant periodic = {bias, multiplier, shift, rq->y_zero, rq->y_min, rq->y_max};
    const struct block b = block_of(&periodic, 0, BLOCK);
    const struct io all = io_of(x_zero, a_flip, rq, BLOCK);
    vec w_lo[MAX_TAPS / 2], w_hi[MAX_TAPS / 2];  /* taps 2i and 2i + 1 paired, each repeated every `channels` lanes */
    ptrdiff_t shift_of[MAX_TAPS + 1];            /* a tap's input run from the output run: (kw * dilation - pad) * channels */
    for (size_t i = 0; i < pairs; ++i) {
        int8_t w0[BLOCK], w1[BLOCK];
        for (size_t f = 0; f < BLOCK; ++f) {
            w0[f] = w[2 * i * channels + f % channels];
            w1[f] = 2 * i + 1 < taps ? w[(2 * i + 1) * channels + f % channels] : 0;  /* an odd count's last tap: weight 0 */
        }
        const vec v0 = load_w(w0, &all), v1 = load_w(w1, &all);
        w_lo[i] = pair_lo(v0, v1);
        w_hi[i] = pair_hi(v0, v1);
    }
    for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) shift_of[t] = ((ptrdiff_t)(kw * g->dilation_w) - (ptrdiff_t)g->pad_left) * (ptrdiff_t)channels;
    }
    shift_of[taps] = 0;
    ptrdiff_t lowest = 0, highest = 0;  /* blocks from -lowest to in_row - highest - BLOCK read inside the row */
    for (size_t t = 0; t < taps; ++t) {
        lowest = MLCC_MIN(lowest, shift_of[t]);
        highest = MLCC_MAX(highest, shift_of[t]);
    }
    const __m256i padding_bytes = _mm256_set1_epi8((char)x_zero);
    const uint8_t *source[MAX_TAPS + 1];  /* a tap's input row, NULL in the padding */
    for (size_t oh = 0; oh < g->out_h; ++oh) {
        for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
            const size_t ih = oh * g->stride_h + kh * g->dilation_h - g->pad_top;  /* wraps around above the image */
            for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) source[t] = ih < g->in_h ? x + ih * (size_t)in_row : NULL;
        }
        source[taps] = NULL;
        uint8_t *out = y + oh * (size_t)row_bytes;
        for (ptrdiff_t f0 = 0; f0 < row_bytes; f0 += BLOCK) {
            vec acc_lo = b.bias_lo, acc_hi = b.bias_hi;
            if (f0 + lowest >= 0 && f0 + highest + BLOCK <= in_row) {  /* every lane's taps inside the row */
                for (size_t i = 0; i < pairs; ++i) {
                    const uint8_t *s0 = source[2 * i], *s1 = source[2 * i + 1];
                    const vec x0 = s0 == NULL ? all.padding : load_x(s0 + f0 + shift_of[2 * i], &all);
                    const vec x1 = s1 == NULL ? all.padding : load_x(s1 + f0 + shift_of[2 * i + 1], &all);
                    acc_lo = pair_products(acc_lo, pair_lo(x0, x1), w_lo[i]);
                    acc_hi = pair_products(acc_hi, pair_hi(x0, x1), w_hi[i]);
                }
                store(out + f0, requantize(acc_lo, &b.lo), requantize(acc_hi, &b.hi), &all);
                continue;
            }
            for (size_t i = 0; i < pairs; ++i) {
                vec v[2];
                for (size_t u = 0; u < 2; ++u) {
                    const size_t t = 2 * i + u;
                    if (source[t] == NULL) {
                        v[u] = all.padding;
                    } else {  /* lanes f0 + l reading the row's bytes 0 .. in_row - 1 */
                        const __mmask32 inside = lanes_between(-shift_of[t] - f0, in_row - shift_of[t] - f0);
                        const __m256i bytes = _mm256_mask_loadu_epi8(padding_bytes, inside, source[t] + f0 + shift_of[t]);
                        v[u] = _mm512_cvtepi8_epi16(_mm256_xor_si256(bytes, all.flip));
                    }
                }
                acc_lo = pair_products(acc_lo, pair_lo(v[0], v[1]), w_lo[i]);
                acc_hi = pair_products(acc_hi, pair_hi(v[0], v[1]), w_hi[i]);
            }
            struct io io = all;  /* the row's last block may be partial */
            io.valid = lanes_between(0, row_bytes - f0);
            store(out + f0, requantize(acc_lo, &b.lo), requantize(acc_hi, &b.hi), &io);
        }
    }
}

static inline bool fits_flat(const struct mlcc_qs8_conv_geometry *g) {
    return g->channels < BLOCK && BLOCK % g->channels == 0 && g->stride_w == 1;
}

void mlcc_qs8_dwconv_nhwc__avx512(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                  uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                  const struct mlcc_qs8_requant *rq) {
    if (falls_back(g, rq)) {
        mlcc_qs8_dwconv_nhwc__reference(g, x, x_zero, a_flip, w, y, rq);
#if defined(__AVX512VNNI__)
    } else if (dot3x3_handles(g, rq)) {
        dot3x3(g, x, x_zero, a_flip, w, y, rq);
#endif
    } else if (fits_flat(g)) {
        dwconv_flat(g, x, x_zero, a_flip, w, y, rq);
    } else if (is_window3x3(g)) {
        dwconv3x3(g, x, x_zero, a_flip, w, y, rq, g->channels);
    } else {
        dwconv_taps(g, x, x_zero, a_flip, w, y, rq, g->channels);
    }
}
#endif
