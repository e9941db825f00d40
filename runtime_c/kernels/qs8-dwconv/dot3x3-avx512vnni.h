/* qs8-dwconv's 3x3 depthwise convolution on AVX-512 VNNI (included by dwconv-nhwc-avx512.c where the target has
 * it): stride 1 or 2, dilation 1, any padding. vpdpbusd sums four unsigned-byte by signed-byte products in each
 * 32-bit lane, so a lane is one channel and its four bytes are four input rows of one input column: an input
 * column is loaded once for the (up to) three output pixels whose windows hold it, its rows interleaved per
 * channel, and one vpdpbusd per kernel column adds its three taps (the fourth byte meets a zero weight). With
 * stride 1 along the height, the four rows serve two output rows at once (weights w0 w1 w2 0 and 0 w0 w1 w2).
 *
 * The activations go in as unsigned bytes u = x' + 128 (uint8 ones as they are; int8 ones with their sign bit
 * flipped), and the bias takes back 128 * sum(w) once per channel. Requantization is qs8-gemm's, the zero
 * point folded into the rounding term ((acc * m + 2^(s-1) + y_zero * 2^s) >> s), with the odd lanes shifted by
 * s - 32 so their result is already the high half of the 64-bit lane: one blend joins them. That wants every
 * shift in 32..52 (the sum below 2^63); a layer with another takes the general loops.
 *
 * A block is 64 channels (four accumulators: the byte unpacks leave channels 16L + 4q + i in lane L, dword i
 * of accumulator q, and the saturating packs put them back in order), 32 (two: the unpacks on 256 bits, a
 * 64-bit permute restores the order) or 16 (one: the unpacks on 128 bits, the quarters joined);
 * the last block of 32 or 16 may hold fewer, under masks. Up to 16 channels at stride 1 run as flat rows of 64
 * lanes instead (dot3x3_flat). */
#ifndef MLCC_QS8_DWCONV_DOT3X3_H
#define MLCC_QS8_DWCONV_DOT3X3_H

#include <immintrin.h>

#include "mlcc/kernels/qs8-dwconv.h"

#define DOT_WIDE 64  /* channels of a four-accumulator block */

/* One accumulator's requantization: the even lanes' 64-bit terms and the odd lanes' (shifted by s - 32) */
struct dot_lanes {
    __m512i mult, mult_odd, round_even, round_odd, shift_even, shift_odd;
};

static inline __m512i dot_requantize(__m512i acc, const struct dot_lanes *l) {
    const __m512i even = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(acc, l->mult), l->round_even), l->shift_even);
    const __m512i odd = _mm512_srav_epi64(
        _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(acc, 32), l->mult_odd), l->round_odd), l->shift_odd);
    return _mm512_mask_blend_epi32((__mmask16)0xAAAA, even, odd);
}

/* Whether every channel's requantization suits dot_requantize (a zero multiplier takes any shift) */
static inline bool dot_requant_fits(const struct mlcc_qs8_requant *rq, size_t channels) {
    if (!((rq->y_min >= 0 && rq->y_max <= 255) || (rq->y_min >= -128 && rq->y_max <= 127))) return false;
    for (size_t c = 0; c < channels; ++c) {
        if (rq->multiplier[c] != 0 && (rq->shift[c] < 32 || rq->shift[c] > 52)) return false;
    }
    return true;
}

/* Four rows' bytes interleaved per channel: 64 channels into four vectors (the unpacks' order) */
static inline void dot_interleave64(__m512i r0, __m512i r1, __m512i r2, __m512i r3, __m512i out[4]) {
    const __m512i a = _mm512_unpacklo_epi8(r0, r1), b = _mm512_unpackhi_epi8(r0, r1);
    const __m512i c = _mm512_unpacklo_epi8(r2, r3), d = _mm512_unpackhi_epi8(r2, r3);
    out[0] = _mm512_unpacklo_epi16(a, c);
    out[1] = _mm512_unpackhi_epi16(a, c);
    out[2] = _mm512_unpacklo_epi16(b, d);
    out[3] = _mm512_unpackhi_epi16(b, d);
}

/* ... and 16 channels into one, in order: the unpacks on 128 bits, their four quarters joined */
static inline __m512i dot_interleave16(__m128i r0, __m128i r1, __m128i r2, __m128i r3) {
    const __m128i a = _mm_unpacklo_epi8(r0, r1), b = _mm_unpackhi_epi8(r0, r1);
    const __m128i c = _mm_unpacklo_epi8(r2, r3), d = _mm_unpackhi_epi8(r2, r3);
    const __m256i low = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi16(a, c)), _mm_unpackhi_epi16(a, c), 1);
    const __m256i high = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_unpacklo_epi16(b, d)), _mm_unpackhi_epi16(b, d), 1);
    return _mm512_inserti64x4(_mm512_castsi256_si512(low), high, 1);
}

/* ... and 32 channels into two: the unpacks on 256 bits, their halves paired (lanes: channels 0-3, 16-19, 4-7, 20-23
 * in out[0], 8-11, 24-27, 12-15, 28-31 in out[1]) */
static inline void dot_interleave32(__m256i r0, __m256i r1, __m256i r2, __m256i r3, __m512i out[2]) {
    const __m256i a = _mm256_unpacklo_epi8(r0, r1), b = _mm256_unpackhi_epi8(r0, r1);
    const __m256i c = _mm256_unpacklo_epi8(r2, r3), d = _mm256_unpackhi_epi8(r2, r3);
    out[0] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_unpacklo_epi16(a, c)), _mm256_unpackhi_epi16(a, c), 1);
    out[1] = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_unpacklo_epi16(b, d)), _mm256_unpackhi_epi16(b, d), 1);
}

/* What a block's loads need: its first channel's offset, its lanes, the padding's raw byte, the sign flip */
struct dot_io {
    size_t c;
    __mmask64 lanes;
    __m512i padding, flip;
    bool flips;
};

/* Input column iw of the four rows (row k at rows[k], read where valid[k]), interleaved into out[0 .. Q-1] */
static inline void dot_column(size_t accumulators, const uint8_t *const rows[4], const bool valid[4], size_t iw,
                              size_t in_w, size_t channels, const struct dot_io *io, __m512i out[4]) {
    const bool inside = iw < in_w;  /* left of the padding wraps around */
    if (accumulators == 4) {
        __m512i r[4];
        for (size_t k = 0; k < 4; ++k) {
            const bool read = inside && valid[k];  /* else the padding, nothing loaded */
            r[k] = _mm512_mask_loadu_epi8(io->padding, read ? io->lanes : 0, read ? rows[k] + iw * channels + io->c : rows[k]);
        }
        dot_interleave64(r[0], r[1], r[2], r[3], out);
        if (io->flips) {
            for (size_t q = 0; q < 4; ++q) out[q] = _mm512_xor_si512(out[q], io->flip);
        }
    } else if (accumulators == 2) {
        __m256i r[4];
        for (size_t k = 0; k < 4; ++k) {
            const bool read = inside && valid[k];
            r[k] = _mm256_mask_loadu_epi8(_mm512_castsi512_si256(io->padding), read ? (__mmask32)io->lanes : 0,
                                          read ? rows[k] + iw * channels + io->c : rows[k]);
        }
        dot_interleave32(r[0], r[1], r[2], r[3], out);
        if (io->flips) {
            for (size_t q = 0; q < 2; ++q) out[q] = _mm512_xor_si512(out[q], io->flip);
        }
    } else {
        __m128i r[4];
        for (size_t k = 0; k < 4; ++k) {
            const bool read = inside && valid[k];
            r[k] = _mm_mask_loadu_epi8(_mm512_castsi512_si128(io->padding), read ? (__mmask16)io->lanes : 0,
                                       read ? rows[k] + iw * channels + io->c : rows[k]);
        }
        out[0] = dot_interleave16(r[0], r[1], r[2], r[3]);
        if (io->flips) out[0] = _mm512_xor_si512(out[0], io->flip);
    }
}

/* The weights of kernel column kw as four rows, taps (top, kh0, kh1, kh2 ...): `shift` 0 puts w0 w1 w2 0 in a lane
 * (the upper output row), 1 puts 0 w0 w1 w2 (the lower one, a row further down) */
static inline void dot_weights(size_t accumulators, const int8_t *w, size_t channels, size_t kw, size_t shift,
                               const struct dot_io *io, __m512i out[4]) {
    if (accumulators == 4) {
        __m512i r[4];
        for (size_t k = 0; k < 4; ++k) {
            const size_t kh = k - shift;  /* wraps around for the row above the kernel */
            r[k] = kh < 3 ? _mm512_maskz_loadu_epi8(io->lanes, w + (kh * 3 + kw) * channels + io->c) : _mm512_setzero_si512();
        }
        dot_interleave64(r[0], r[1], r[2], r[3], out);
    } else if (accumulators == 2) {
        __m256i r[4];
        for (size_t k = 0; k < 4; ++k) {
            const size_t kh = k - shift;
            r[k] = kh < 3 ? _mm256_maskz_loadu_epi8((__mmask32)io->lanes, w + (kh * 3 + kw) * channels + io->c) : _mm256_setzero_si256();
        }
        dot_interleave32(r[0], r[1], r[2], r[3], out);
    } else {
        __m128i r[4];
        for (size_t k = 0; k < 4; ++k) {
            const size_t kh = k - shift;
            r[k] = kh < 3 ? _mm_maskz_loadu_epi8((__mmask16)io->lanes, w + (kh * 3 + kw) * channels + io->c) : _mm_setzero_si128();
        }
        out[0] = dot_interleave16(r[0], r[1], r[2], r[3]);
    }
}

/* The block's 8-bit results of accumulators acc[0 .. Q-1] stored at y (channels from its first, in order; the
 * lanes of `store`) */
static inline void dot_store(size_t accumulators, uint8_t *y, const __m512i acc[4], const struct dot_lanes lanes[4],
                             const struct mlcc_qs8_requant *rq, __mmask64 store) {
    if (accumulators == 4) {
        const __m512i v01 = _mm512_packs_epi32(dot_requantize(acc[0], &lanes[0]), dot_requantize(acc[1], &lanes[1]));
        const __m512i v23 = _mm512_packs_epi32(dot_requantize(acc[2], &lanes[2]), dot_requantize(acc[3], &lanes[3]));
        __m512i bytes;
        if (rq->y_min >= 0) {  /* uint8: saturated to 0 .. 255, then clamped */
            bytes = _mm512_packus_epi16(v01, v23);
            bytes = _mm512_min_epu8(_mm512_max_epu8(bytes, _mm512_set1_epi8((char)rq->y_min)), _mm512_set1_epi8((char)rq->y_max));
        } else {
            bytes = _mm512_packs_epi16(v01, v23);
            bytes = _mm512_min_epi8(_mm512_max_epi8(bytes, _mm512_set1_epi8((char)rq->y_min)), _mm512_set1_epi8((char)rq->y_max));
        }
        if (store == ~(__mmask64)0) {
            _mm512_storeu_si512(y, bytes);
        } else {
            _mm512_mask_storeu_epi8(y, store, bytes);
        }
    } else if (accumulators == 2) {  /* words back in order by 64-bit quarters, then clamped and narrowed */
        __m512i v = _mm512_packs_epi32(dot_requantize(acc[0], &lanes[0]), dot_requantize(acc[1], &lanes[1]));
        v = _mm512_permutexvar_epi64(_mm512_set_epi64(7, 3, 6, 2, 5, 1, 4, 0), v);
        v = _mm512_min_epi16(_mm512_max_epi16(v, _mm512_set1_epi16((int16_t)rq->y_min)), _mm512_set1_epi16((int16_t)rq->y_max));
        _mm256_mask_storeu_epi8(y, (__mmask32)store, _mm512_cvtepi16_epi8(v));
    } else {
        __m512i v = dot_requantize(acc[0], &lanes[0]);
        v = _mm512_min_epi32(_mm512_max_epi32(v, _mm512_set1_epi32(rq->y_min)), _mm512_set1_epi32(rq->y_max));
        _mm512_mask_cvtepi32_storeu_epi8(y, (__mmask16)store, v);
    }
}

/* A block's per-channel int32 parameters in its accumulators' lane order (past the channels: 0) */
static inline void dot_parameters(size_t accumulators, const int32_t *values, const struct dot_io *io, __m512i out[4]) {
    if (accumulators == 4) {  /* accumulator q's lane L is 128-bit block q of channels 16L .. 16L + 15 */
        const int32_t *v = values + io->c;
        const __m512i n0 = _mm512_loadu_si512(v), n1 = _mm512_loadu_si512(v + 16);
        const __m512i n2 = _mm512_loadu_si512(v + 32), n3 = _mm512_loadu_si512(v + 48);
        const __m512i t0 = _mm512_shuffle_i32x4(n0, n1, 0x44), t1 = _mm512_shuffle_i32x4(n0, n1, 0xEE);
        const __m512i t2 = _mm512_shuffle_i32x4(n2, n3, 0x44), t3 = _mm512_shuffle_i32x4(n2, n3, 0xEE);
        out[0] = _mm512_shuffle_i32x4(t0, t2, 0x88);
        out[1] = _mm512_shuffle_i32x4(t0, t2, 0xDD);
        out[2] = _mm512_shuffle_i32x4(t1, t3, 0x88);
        out[3] = _mm512_shuffle_i32x4(t1, t3, 0xDD);
    } else if (accumulators == 2) {
        const __m512i n0 = _mm512_maskz_loadu_epi32((__mmask16)io->lanes, values + io->c);
        const __m512i n1 = _mm512_maskz_loadu_epi32((__mmask16)(io->lanes >> 16), values + io->c + 16);
        out[0] = _mm512_permutex2var_epi64(n0, _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0), n1);
        out[1] = _mm512_permutex2var_epi64(n0, _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4), n1);
    } else {
        out[0] = _mm512_maskz_loadu_epi32((__mmask16)io->lanes, values + io->c);
    }
}

/* A block's weights (upper and lower output rows, per kernel column), bias less 128 * sum(w), requantization */
struct dot_block {
    __m512i upper[3][4], lower[3][4], bias[4];
    struct dot_lanes lanes[4];
};

/* Weights taps x `stride` bytes and the parameters from io->c on (int32 arrays) */
static inline __attribute__((always_inline)) void dot_setup(size_t accumulators, const int8_t *w, size_t stride, const int32_t *bias,
                             const int32_t *multiplier_of, const int32_t *shift_of, int32_t zero_point,
                             const struct dot_io *io, struct dot_block *b) {
    const size_t Q = accumulators;
    for (size_t kw = 0; kw < 3; ++kw) {
        dot_weights(Q, w, stride, kw, 0, io, b->upper[kw]);
        dot_weights(Q, w, stride, kw, 1, io, b->lower[kw]);
    }
    __m512i multiplier[4], shift[4];
    dot_parameters(Q, bias, io, b->bias);
    dot_parameters(Q, multiplier_of, io, multiplier);
    dot_parameters(Q, shift_of, io, shift);
    const __m512i ones = _mm512_set1_epi8(1), low = _mm512_set1_epi64(0xFFFFFFFF), one = _mm512_set1_epi64(1);
    const __m512i y_zero = _mm512_set1_epi64(zero_point), thirty_two = _mm512_set1_epi32(32);
    for (size_t q = 0; q < Q; ++q) {
        __m512i sum = _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, b->upper[0][q]);  /* sum(w) in the lanes' order */
        sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(sum, ones, b->upper[1][q]), ones, b->upper[2][q]);
        b->bias[q] = _mm512_sub_epi32(b->bias[q], _mm512_slli_epi32(sum, 7));
        /* a zero multiplier (and a lane past the channels) with shift 32: the result is y_zero */
        const __m512i s = _mm512_mask_mov_epi32(shift[q], _mm512_cmpeq_epi32_mask(multiplier[q], _mm512_setzero_si512()), thirty_two);
        const __m512i s_even = _mm512_and_si512(s, low), s_odd = _mm512_srli_epi64(s, 32);
        struct dot_lanes *l = &b->lanes[q];
        l->mult = multiplier[q];
        l->mult_odd = _mm512_srli_epi64(multiplier[q], 32);
        l->round_even = _mm512_add_epi64(_mm512_sllv_epi64(one, _mm512_sub_epi64(s_even, one)), _mm512_sllv_epi64(y_zero, s_even));
        l->round_odd = _mm512_add_epi64(_mm512_sllv_epi64(one, _mm512_sub_epi64(s_odd, one)), _mm512_sllv_epi64(y_zero, s_odd));
        l->shift_even = s_even;
        l->shift_odd = _mm512_sub_epi64(s_odd, _mm512_set1_epi64(32));
    }
}

/* The four input rows under output row oh (rows[k], valid[k]: inside the image; the fourth only where two
 * output rows are computed at once, stride 1 along the height); returns whether they are (oh and oh + 1) */
static inline bool dot_rows(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, size_t oh,
                            const uint8_t *rows[4], bool valid[4]) {
    const bool pair = g->stride_h == 1 && oh + 1 < g->out_h;
    const size_t ih0 = oh * g->stride_h - g->pad_top;  /* wraps around above the image */
    for (size_t k = 0; k < 4; ++k) {
        valid[k] = ih0 + k < g->in_h && (k < 3 || pair);
        rows[k] = valid[k] ? x + (ih0 + k) * g->in_w * g->channels : x;
    }
    return pair;
}

/* One block of channels (Q accumulators of 16, `count` channels from c) over the whole image, stride_w sw */
static inline __attribute__((always_inline)) void dot3x3_block(
    size_t accumulators, size_t sw, const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
    uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y, const struct mlcc_qs8_requant *rq, size_t c, size_t count) {
    const size_t channels = g->channels, Q = accumulators;
    const struct dot_io io = {c, count >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << count) - 1, _mm512_set1_epi8((char)x_zero),
                              _mm512_set1_epi8((char)0x80), a_flip == 0};
    struct dot_block b;
    dot_setup(Q, w, channels, rq->bias, rq->multiplier, rq->shift, rq->y_zero, &io, &b);
    const size_t iw0 = (size_t)0 - g->pad_left;  /* the first window's first column, wrapping */
    for (size_t oh = 0; oh < g->out_h;) {
        const uint8_t *rows[4];
        bool valid[4];
        const bool pair = dot_rows(g, x, oh, rows, valid);
        uint8_t *out = y + oh * g->out_w * channels + c;
        __m512i col[3][4];
        dot_column(Q, rows, valid, iw0, g->in_w, channels, &io, col[0]);
        if (sw == 1) dot_column(Q, rows, valid, iw0 + 1, g->in_w, channels, &io, col[1]);
        for (size_t ow = 0; ow < g->out_w; ++ow) {
            const size_t iw = iw0 + ow * sw;
            if (sw == 2) dot_column(Q, rows, valid, iw + 1, g->in_w, channels, &io, col[1]);
            dot_column(Q, rows, valid, iw + 2, g->in_w, channels, &io, col[2]);
            __m512i acc[4];
            for (size_t q = 0; q < Q; ++q) {
                acc[q] = _mm512_dpbusd_epi32(b.bias[q], col[0][q], b.upper[0][q]);
                acc[q] = _mm512_dpbusd_epi32(acc[q], col[1][q], b.upper[1][q]);
                acc[q] = _mm512_dpbusd_epi32(acc[q], col[2][q], b.upper[2][q]);
            }
            dot_store(Q, out + ow * channels, acc, b.lanes, rq, io.lanes);
            if (pair) {
                for (size_t q = 0; q < Q; ++q) {
                    acc[q] = _mm512_dpbusd_epi32(b.bias[q], col[0][q], b.lower[0][q]);
                    acc[q] = _mm512_dpbusd_epi32(acc[q], col[1][q], b.lower[1][q]);
                    acc[q] = _mm512_dpbusd_epi32(acc[q], col[2][q], b.lower[2][q]);
                }
                dot_store(Q, out + (g->out_w + ow) * channels, acc, b.lanes, rq, io.lanes);
            }
            for (size_t q = 0; q < Q; ++q) {
                if (sw == 1) {
                    col[0][q] = col[1][q];
                    col[1][q] = col[2][q];
                } else {
                    col[0][q] = col[2][q];
                }
            }
        }
        oh += pair ? 2 : 1;
    }
}

/* Lanes lo .. hi - 1 of 64 (clipped) */
static inline __mmask64 dot_span(ptrdiff_t lo, ptrdiff_t hi) {
    lo = lo < 0 ? 0 : lo;
    hi = hi > DOT_WIDE ? DOT_WIDE : hi;
    if (hi <= lo) return 0;
    return (hi == DOT_WIDE ? ~(__mmask64)0 : ((__mmask64)1 << hi) - 1) & ~(((__mmask64)1 << lo) - 1);
}

/* The four rows' bytes at `at` .. at + 63 of their runs (the padding outside 0 .. in_row - 1), interleaved */
static inline void dot_flat_column(const uint8_t *const rows[4], const bool valid[4], ptrdiff_t at, ptrdiff_t in_row,
                                   const struct dot_io *io, __m512i out[4]) {
    const __mmask64 inside = dot_span(-at, in_row - at);  /* lanes reading the row's bytes */
    __m512i r[4];
    for (size_t k = 0; k < 4; ++k) {
        const bool read = valid[k] && inside != 0;  /* else the padding, nothing loaded */
        r[k] = _mm512_mask_loadu_epi8(io->padding, read ? inside : 0, read ? rows[k] + at : rows[k]);
    }
    dot_interleave64(r[0], r[1], r[2], r[3], out);
    if (io->flips) {
        for (size_t q = 0; q < 4; ++q) out[q] = _mm512_xor_si512(out[q], io->flip);
    }
}

/* Channels dividing 64 with stride 1 along the width: an output row's pixels x channels are one run of bytes, a
 * kernel column's inputs the input row's run shifted by (kw - pad_left) * channels, and the weights and
 * parameters repeat every `channels` lanes, so a block of 64 lanes is 64 / channels pixels (as dwconv_flat) */
static inline __attribute__((always_inline)) void dot3x3_flat_units(
    size_t units, const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
    const int8_t *w, uint8_t *MLCC_RESTRICT y, const struct mlcc_qs8_requant *rq) {
    const size_t channels = g->channels;
    const ptrdiff_t out_row = (ptrdiff_t)(g->out_w * channels), in_row = (ptrdiff_t)(g->in_w * channels);
    int8_t taps[9 * DOT_WIDE];
    int32_t bias[DOT_WIDE], multiplier[DOT_WIDE], shift[DOT_WIDE];
    for (size_t f = 0; f < DOT_WIDE; ++f) {
        for (size_t t = 0; t < 9; ++t) taps[t * DOT_WIDE + f] = w[t * channels + f % channels];
        bias[f] = rq->bias[f % channels];
        multiplier[f] = rq->multiplier[f % channels];
        shift[f] = rq->shift[f % channels];
    }
    const struct dot_io io = {0, ~(__mmask64)0, _mm512_set1_epi8((char)x_zero), _mm512_set1_epi8((char)0x80), a_flip == 0};
    struct dot_block b;
    dot_setup(4, taps, DOT_WIDE, bias, multiplier, shift, rq->y_zero, &io, &b);
    ptrdiff_t offset[3];  /* a kernel column's input run from the output run */
    for (size_t kw = 0; kw < 3; ++kw) offset[kw] = ((ptrdiff_t)kw - (ptrdiff_t)g->pad_left) * (ptrdiff_t)channels;
    for (size_t oh = 0; oh < g->out_h;) {
        const uint8_t *rows[4];
        bool valid[4];
        const bool pair = dot_rows(g, x, oh, rows, valid);
        uint8_t *out = y + oh * (size_t)out_row;
        /* channels a multiple of 4 (units: dwords a pixel): kernel columns 0 and 2 are column 1 moved by that many
         * accumulators, across a 128-bit lane past the last, so a block interleaves one run (the next block's)
         * and takes the others from it and its neighbours */
        __m512i previous[4], current[4], next[4];
        if (units) {
            dot_flat_column(rows, valid, -DOT_WIDE + offset[1], in_row, &io, previous);
            dot_flat_column(rows, valid, offset[1], in_row, &io, current);
        }
        for (ptrdiff_t f0 = 0; f0 < out_row; f0 += DOT_WIDE) {
            __m512i col[3][4];
            if (units) {
                dot_flat_column(rows, valid, f0 + DOT_WIDE + offset[1], in_row, &io, next);
                for (size_t q = 0; q < 4; ++q) {
                    col[0][q] = q >= units ? current[q - units] : _mm512_alignr_epi32(current[q + 4 - units], previous[q + 4 - units], 12);
                    col[1][q] = current[q];
                    col[2][q] = q + units < 4 ? current[q + units] : _mm512_alignr_epi32(next[q + units - 4], current[q + units - 4], 4);
                }
                for (size_t q = 0; q < 4; ++q) {
                    previous[q] = current[q];
                    current[q] = next[q];
                }
            } else {
                for (size_t kw = 0; kw < 3; ++kw) dot_flat_column(rows, valid, f0 + offset[kw], in_row, &io, col[kw]);
            }
            const __mmask64 store = dot_span(0, out_row - f0);
            __m512i acc[4];
            for (size_t q = 0; q < 4; ++q) {
                acc[q] = _mm512_dpbusd_epi32(b.bias[q], col[0][q], b.upper[0][q]);
                acc[q] = _mm512_dpbusd_epi32(acc[q], col[1][q], b.upper[1][q]);
                acc[q] = _mm512_dpbusd_epi32(acc[q], col[2][q], b.upper[2][q]);
            }
            dot_store(4, out + f0, acc, b.lanes, rq, store);
            if (pair) {
                for (size_t q = 0; q < 4; ++q) {
                    acc[q] = _mm512_dpbusd_epi32(b.bias[q], col[0][q], b.lower[0][q]);
                    acc[q] = _mm512_dpbusd_epi32(acc[q], col[1][q], b.lower[1][q]);
                    acc[q] = _mm512_dpbusd_epi32(acc[q], col[2][q], b.lower[2][q]);
                }
                dot_store(4, out + out_row + f0, acc, b.lanes, rq, store);
            }
        }
        oh += pair ? 2 : 1;
    }
}

/* units: channels / 4 where a constant 1, 2 or 4 (the sliding form), else 0 */
static void dot3x3_flat(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                        const int8_t *w, uint8_t *MLCC_RESTRICT y, const struct mlcc_qs8_requant *rq) {
    switch (g->channels) {
    case 4: dot3x3_flat_units(1, g, x, x_zero, a_flip, w, y, rq); break;
    case 8: dot3x3_flat_units(2, g, x, x_zero, a_flip, w, y, rq); break;
    case 16: dot3x3_flat_units(4, g, x, x_zero, a_flip, w, y, rq); break;
    default: dot3x3_flat_units(0, g, x, x_zero, a_flip, w, y, rq); break;
    }
}

static inline bool dot3x3_handles(const struct mlcc_qs8_conv_geometry *g, const struct mlcc_qs8_requant *rq) {
    return g->kernel_h == 3 && g->kernel_w == 3 && g->dilation_h == 1 && g->dilation_w == 1 &&
           (g->stride_w == 1 || g->stride_w == 2) && dot_requant_fits(rq, g->channels);
}

static void dot3x3(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                   const int8_t *w, uint8_t *MLCC_RESTRICT y, const struct mlcc_qs8_requant *rq) {
    if (g->stride_w == 1 && g->channels <= 16 && DOT_WIDE % g->channels == 0) {  /* 32: two 16-blocks, sliding, do better */
        dot3x3_flat(g, x, x_zero, a_flip, w, y, rq);
        return;
    }
    size_t c = 0;
    for (; c + DOT_WIDE <= g->channels; c += DOT_WIDE) {
        if (g->stride_w == 1) {
            dot3x3_block(4, 1, g, x, x_zero, a_flip, w, y, rq, c, DOT_WIDE);
        } else {
            dot3x3_block(4, 2, g, x, x_zero, a_flip, w, y, rq, c, DOT_WIDE);
        }
    }
    for (; c + 16 < g->channels; c += 32) {  /* more than 16 left: 32 (or fewer under masks) */
        const size_t count = MLCC_MIN(32, g->channels - c);
        if (g->stride_w == 1) {
            dot3x3_block(2, 1, g, x, x_zero, a_flip, w, y, rq, c, count);
        } else {
            dot3x3_block(2, 2, g, x, x_zero, a_flip, w, y, rq, c, count);
        }
    }
    if (c < g->channels) {
        if (g->stride_w == 1) {
            dot3x3_block(1, 1, g, x, x_zero, a_flip, w, y, rq, c, g->channels - c);
        } else {
            dot3x3_block(1, 2, g, x, x_zero, a_flip, w, y, rq, c, g->channels - c);
        }
    }
}

#endif /* MLCC_QS8_DWCONV_DOT3X3_H */
