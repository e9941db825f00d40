/* The loops qs8-dwconv's x86 kernels (AVX2, AVX-512) share, written once over the vector primitives the
 * including source defines first (its own ISA's instructions, inlined):
 *
 *   BLOCK                      channels a block: the 16-bit lanes of `vec`
 *   PARTIAL_BLOCKS             1 where loads and stores mask a last block of fewer channels (AVX-512 by the
 *                              byte; AVX2 by whole dwords, its caller's `limit` a multiple of 4), else 0 (the
 *                              caller's `limit` is a multiple of BLOCK)
 *   vec                        the vector type
 *   struct lanes, lanes_of(multiplier, shift), requantize(acc, lanes): BLOCK / 2 channels' requantization
 *                              before the zero point, each lane with its own multiplier and shift
 *   struct io, io_of(x_zero, a_flip, rq, count): what a block's loads and stores need (the flip, the padding's
 *                              value, masks for a block of `count` < BLOCK channels where the ISA has them)
 *   load_x(p, io), load_w(p, io): BLOCK bytes of the image (^ flip) or of the weights widened to 16 bits
 *   padding(io), zero()        the padding's widened value; zeros
 *   load_i32(p)                BLOCK / 2 int32 values
 *   pair_lo(a, b), pair_hi(a, b): a's and b's 16-bit lanes interleaved (vpunpcklwd, vpunpckhwd)
 *   pair_products(acc, x, w)   acc + the exact sums of the 16-bit pairs' products (vpmaddwd)
 *   store(y, v_lo, v_hi, io)   zero point, clamp, bytes back in channel order
 *
 * Two taps go at a time, their bytes widened and interleaved per channel and multiplied by the weights paired
 * alike: the pairing leaves channels 8j .. 8j + 3 of each 128-bit lane in the `lo` vector and 8j + 4 .. 8j + 7
 * in `hi`, so the requantization parameters are loaded in that order and `store` undoes it. A block of
 * channels runs over the whole image with its paired weights and parameters made once. */
#ifndef MLCC_QS8_DWCONV_BLOCKS_H
#define MLCC_QS8_DWCONV_BLOCKS_H

#include "mlcc/kernels/qs8-dwconv.h"

#define MAX_TAPS 64

/* BLOCK int32 values in the order the pair products leave channels; past `count`, `fill` */
static inline void interleaved(const int32_t *values, size_t count, int32_t fill, int32_t lo[BLOCK / 2], int32_t hi[BLOCK / 2]) {
    for (size_t i = 0; i < BLOCK / 2; ++i) {
        const size_t first = 8 * (i / 4) + i % 4;
        lo[i] = first < count ? values[first] : fill;
        hi[i] = first + 4 < count ? values[first + 4] : fill;
    }
}

/* A block's requantization and bias, interleaved (past `count`: a zero bias and a neutral multiplier) */
struct block {
    struct lanes lo, hi;
    vec bias_lo, bias_hi;
};

static inline struct block block_of(const struct mlcc_qs8_requant *rq, size_t c, size_t count) {
    int32_t lo[BLOCK / 2], hi[BLOCK / 2], shift_lo[BLOCK / 2], shift_hi[BLOCK / 2];
    interleaved(rq->shift + c, count, 31, shift_lo, shift_hi);
    interleaved(rq->multiplier + c, count, 1 << 30, lo, hi);
    struct block b;
    b.lo = lanes_of(lo, shift_lo);
    b.hi = lanes_of(hi, shift_hi);
    interleaved(rq->bias + c, count, 0, lo, hi);
    b.bias_lo = load_i32(lo);
    b.bias_hi = load_i32(hi);
    return b;
}

/* One input column of a 3x3 window: rows 0 and 1 paired, row 2 paired with zero */
struct column {
    vec top_lo, top_hi, bottom_lo, bottom_hi;
};

static inline struct column column_of3(vec r0, vec r1, vec r2) {
    const struct column col = {pair_lo(r0, r1), pair_hi(r0, r1), pair_lo(r2, zero()), pair_hi(r2, zero())};
    return col;
}

/* column iw of the three rows (NULL: a row in the padding), channels c .. c + BLOCK - 1 */
static inline struct column column_of(const uint8_t *const rows[3], size_t iw, size_t in_w, size_t channels, size_t c,
                                      const struct io *io) {
    vec v[3];
    for (size_t r = 0; r < 3; ++r) v[r] = rows[r] != NULL && iw < in_w ? load_x(rows[r] + iw * channels + c, io) : padding(io);
    return column_of3(v[0], v[1], v[2]);
}

/* A 3x3 depthwise convolution with stride and dilation 1 on the channels up to `limit`: each input column is
 * widened and paired once for the three output pixels that read it (a window slides along the row): 12
 * multiply-adds a pixel and a block, where the general loop also loads, widens and pairs every tap */
static void dwconv3x3(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                      const int8_t *w, uint8_t *MLCC_RESTRICT y, const struct mlcc_qs8_requant *rq, size_t limit) {
    const size_t channels = g->channels;
    for (size_t c = 0; c < limit; c += BLOCK) {
        const size_t count = PARTIAL_BLOCKS ? MLCC_MIN(BLOCK, limit - c) : BLOCK;
        const struct io io = io_of(x_zero, a_flip, rq, count);
        struct column weights[3];  /* per kw, the taps of rows 0 and 1 paired, row 2's with zero */
        for (size_t kw = 0; kw < 3; ++kw) {
            weights[kw] = column_of3(load_w(w + kw * channels + c, &io), load_w(w + (3 + kw) * channels + c, &io),
                                     load_w(w + (6 + kw) * channels + c, &io));
        }
        const struct block b = block_of(rq, c, count);
        for (size_t oh = 0; oh < g->out_h; ++oh) {
            const uint8_t *rows[3];
            for (size_t kh = 0; kh < 3; ++kh) {
                const size_t ih = oh + kh - g->pad_top;  /* wraps around above the image */
                rows[kh] = ih < g->in_h ? x + ih * g->in_w * channels : NULL;
            }
            const size_t iw0 = (size_t)0 - g->pad_left;  /* the first window's first column, wrapping */
            struct column left = column_of(rows, iw0, g->in_w, channels, c, &io);
            struct column middle = column_of(rows, iw0 + 1, g->in_w, channels, c, &io);
            for (size_t ow = 0; ow < g->out_w; ++ow) {
                const struct column right = column_of(rows, iw0 + ow + 2, g->in_w, channels, c, &io);
                vec acc_lo = b.bias_lo, acc_hi = b.bias_hi;
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
                store(y + (oh * g->out_w + ow) * channels + c, requantize(acc_lo, &b.lo), requantize(acc_hi, &b.hi), &io);
            }
        }
    }
}

/* Any other depthwise convolution (taps <= MAX_TAPS) on the channels up to `limit`: a pixel whose taps are all
 * inside the image finds them at fixed offsets from its first (no padding tests); one near the border finds
 * each tap's pixel or the padding */
static void dwconv_taps(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                        const int8_t *w, uint8_t *MLCC_RESTRICT y, const struct mlcc_qs8_requant *rq, size_t limit) {
    const size_t channels = g->channels, taps = g->kernel_h * g->kernel_w, pairs = (taps + 1) / 2;
    const size_t reach_h = (g->kernel_h - 1) * g->dilation_h, reach_w = (g->kernel_w - 1) * g->dilation_w;
    size_t offset[MAX_TAPS + 1];  /* an interior pixel's taps, from its first; the odd count's dummy tap reads the first */
    for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) offset[t] = (kh * g->dilation_h * g->in_w + kw * g->dilation_w) * channels;
    }
    offset[taps] = 0;
    const uint8_t *source[MAX_TAPS + 1];
    vec w_lo[MAX_TAPS / 2], w_hi[MAX_TAPS / 2];  /* the block's weights, taps 2i and 2i + 1 paired */
    for (size_t c = 0; c < limit; c += BLOCK) {
        const size_t count = PARTIAL_BLOCKS ? MLCC_MIN(BLOCK, limit - c) : BLOCK;
        const struct io io = io_of(x_zero, a_flip, rq, count);
        for (size_t i = 0; i < pairs; ++i) {
            const vec w0 = load_w(w + 2 * i * channels + c, &io);
            const vec w1 = 2 * i + 1 < taps ? load_w(w + (2 * i + 1) * channels + c, &io)
                                            : zero();  /* an odd count's last tap pairs with weight 0 */
            w_lo[i] = pair_lo(w0, w1);
            w_hi[i] = pair_hi(w0, w1);
        }
        const struct block b = block_of(rq, c, count);
        for (size_t oh = 0; oh < g->out_h; ++oh) {
            /* left of the padding wraps around to a huge size_t: one test covers both sides */
            const size_t ih0 = oh * g->stride_h - g->pad_top;
            const bool rows_inside = ih0 < g->in_h && ih0 + reach_h < g->in_h;
            for (size_t ow = 0; ow < g->out_w; ++ow) {
                const size_t iw0 = ow * g->stride_w - g->pad_left;
                vec acc_lo = b.bias_lo, acc_hi = b.bias_hi;
                if (rows_inside && iw0 < g->in_w && iw0 + reach_w < g->in_w) {  /* no tap in the padding */
                    const uint8_t *first = x + (ih0 * g->in_w + iw0) * channels + c;
                    for (size_t i = 0; i < pairs; ++i) {
                        const vec x0 = load_x(first + offset[2 * i], &io), x1 = load_x(first + offset[2 * i + 1], &io);
                        acc_lo = pair_products(acc_lo, pair_lo(x0, x1), w_lo[i]);
                        acc_hi = pair_products(acc_hi, pair_hi(x0, x1), w_hi[i]);
                    }
                } else {
                    for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
                        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) source[t] = mlcc_qs8_dwconv_source(g, x, oh, ow, kh, kw);
                    }
                    source[taps] = NULL;  /* the odd count's dummy tap: the padding's value times weight 0 */
                    for (size_t i = 0; i < pairs; ++i) {
                        const uint8_t *s0 = source[2 * i], *s1 = source[2 * i + 1];
                        const vec x0 = s0 == NULL ? padding(&io) : load_x(s0 + c, &io);
                        const vec x1 = s1 == NULL ? padding(&io) : load_x(s1 + c, &io);
                        acc_lo = pair_products(acc_lo, pair_lo(x0, x1), w_lo[i]);
                        acc_hi = pair_products(acc_hi, pair_hi(x0, x1), w_hi[i]);
                    }
                }
                store(y + (oh * g->out_w + ow) * channels + c, requantize(acc_lo, &b.lo), requantize(acc_hi, &b.hi), &io);
            }
        }
    }
}

/* Whether the x86 forms take the reference's code: more than MAX_TAPS taps, or a shift below 31 (a real
 * multiplier of 1 or more, whose result may not fit 32 bits before the clamp) */
static inline bool falls_back(const struct mlcc_qs8_conv_geometry *g, const struct mlcc_qs8_requant *rq) {
    bool small_shift = false;
    for (size_t c = 0; c < g->channels; ++c) small_shift |= rq->shift[c] < 31;
    return g->kernel_h * g->kernel_w > MAX_TAPS || small_shift;
}

static inline bool is_window3x3(const struct mlcc_qs8_conv_geometry *g) {
    return g->kernel_h == 3 && g->kernel_w == 3 && g->stride_h == 1 && g->stride_w == 1 && g->dilation_h == 1 &&
           g->dilation_w == 1;
}

#endif /* MLCC_QS8_DWCONV_BLOCKS_H */
