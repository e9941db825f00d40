/* qs8-packed convolution driver: channels-last patches gathered by blocks of output pixels, then the packed
 * GEMM (see qs8-packed.h). */
#include <string.h>

#include "mlcc/kernels/qs8-packed.h"

/* A short run of bytes: copies of a constant size, which compile to moves (a call to memcpy per tap of a few
 * channels costs more than the copy) */
static inline void copy_run(uint8_t *dst, const uint8_t *src, size_t bytes) {
    for (; bytes >= 16; bytes -= 16, dst += 16, src += 16) memcpy(dst, src, 16);
    for (; bytes >= 4; bytes -= 4, dst += 4, src += 4) memcpy(dst, src, 4);
    for (; bytes > 0; --bytes) *dst++ = *src++;
}

static inline void fill_run(uint8_t *dst, uint8_t value, size_t bytes) {
    for (size_t i = 0; i < bytes; ++i) dst[i] = value;
}

/* The patch rows of block rows [0, count) from pixel (*oh_at, *ow_at) where a kernel row's span is at most 16
 * bytes (dilation_w 1: an image's 3x3 on 3 channels, 9 bytes; DS-CNN's 10x4 on one, 4): each span moved as 16
 * bytes, the next span's move overwriting the excess, the last one's landing in the quads' padding (zeroed
 * after, 4 bytes from k), the next patch row (written after) or the 16 bytes past the block's. A pixel whose
 * spans are not all inside x's rows (or whose 16-byte reads would leave x) takes each byte from x or x_zero. */
static void gather_short_spans(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                               uint8_t *patches, size_t ldp, size_t count, size_t *oh_at, size_t *ow_at) {
    static const uint32_t zero = 0;
    const size_t channels = g->channels, span = g->kernel_w * channels, k = g->kernel_h * span;
    const size_t row_bytes = g->in_w * channels, x_bytes = g->in_h * row_bytes, step_h = g->dilation_h * row_bytes;
    const size_t reach_h = (g->kernel_h - 1) * g->dilation_h;
    uint8_t padding[16];
    memset(padding, x_zero, sizeof padding);
    size_t oh = *oh_at, ow = *ow_at;
    for (size_t r = 0; r < count; ++r) {
        uint8_t *row = patches + r * ldp;
        /* above or left of x wraps around to a huge size_t: one test covers both sides */
        const size_t ih0 = oh * g->stride_h - g->pad_top, iw0 = ow * g->stride_w - g->pad_left;
        const size_t at = ih0 * row_bytes + iw0 * channels;  /* the first span's offset, where inside */
        if (ih0 < g->in_h && ih0 + reach_h < g->in_h && iw0 < g->in_w && iw0 + g->kernel_w <= g->in_w &&
            at + reach_h * row_bytes + 16 <= x_bytes) {
            for (size_t kh = 0; kh < g->kernel_h; ++kh) memcpy(row + kh * span, x + at + kh * step_h, 16);
        } else {
            for (size_t kh = 0; kh < g->kernel_h; ++kh) {
                const size_t ih = ih0 + kh * g->dilation_h;
                uint8_t *dst = row + kh * span;
                if (ih >= g->in_h) {
                    memcpy(dst, padding, 16);
                    continue;
                }
                const uint8_t *src = x + ih * row_bytes;
                for (size_t p = 0, in_row = iw0 * channels; p < span; ++p, ++in_row) {
                    dst[p] = in_row < row_bytes ? src[in_row] : x_zero;
                }
            }
        }
        memcpy(row + k, &zero, 4);  /* the quads' padding (a loop of up to 3 bytes compiled to a memset call) */
        if (++ow == g->out_w) {
            ow = 0;
            ++oh;
        }
    }
    *oh_at = oh;
    *ow_at = ow;
}

void mlcc_qs8_conv_nhwc(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                        const int8_t *packed, uint8_t *y, const struct mlcc_qs8_requant *rq,
                        uint8_t *patches, size_t rows, mlcc_qs8_packed_gemm_fn gemm) {
    const size_t channels = g->channels, n = g->group_out, pixels = g->out_h * g->out_w;
    const size_t k = g->kernel_h * g->kernel_w * channels, span = g->kernel_w * channels;
    if (g->kernel_h == 1 && g->kernel_w == 1 && g->stride_h == 1 && g->stride_w == 1 && g->pad_top == 0 &&
        g->pad_left == 0 && g->out_h == g->in_h && g->out_w == g->in_w) {
        gemm(pixels, n, k, x, channels, a_flip, packed, y, n, rq);
        return;
    }
    /* patch rows padded with zero bytes to whole 4-byte quads: they meet the panels' zero padding, and the
     * kernels run no tail (a first layer's k of 27 becomes 28) */
    const size_t ldp = (k + 3) & ~(size_t)3;
    const size_t reach_h = (g->kernel_h - 1) * g->dilation_h, step_h = g->dilation_h * g->in_w * channels;
    size_t oh = 0, ow = 0;  /* the block's first pixel */
    for (size_t first = 0; first < pixels; first += rows) {
        const size_t count = MLCC_MIN(rows, pixels - first);
        if (g->dilation_w == 1 && span <= 16) {
            gather_short_spans(g, x, x_zero, patches, ldp, count, &oh, &ow);
            gemm(count, n, ldp, patches, ldp, a_flip, packed, y + first * n, n, rq);
            continue;
        }
        for (size_t r = 0; r < count; ++r) {
            /* left of the padding wraps around to a huge size_t: one test covers both sides */
            const size_t iw0 = ow * g->stride_w - g->pad_left;
            /* without dilation, the kw taps inside the image are one run: kw_lo .. kw_hi */
            const size_t kw_lo = iw0 < g->in_w ? 0 : MLCC_MIN(g->kernel_w, g->pad_left - ow * g->stride_w);
            const size_t kw_hi = iw0 < g->in_w ? MLCC_MIN(g->kernel_w, g->in_w - iw0)
                                               : MLCC_MIN(g->kernel_w, kw_lo + g->in_w);
            uint8_t *row = patches + r * ldp;
            for (size_t p = k; p < ldp; ++p) row[p] = 0;
            const size_t ih0 = oh * g->stride_h - g->pad_top;
            if (g->dilation_w == 1 && kw_lo == 0 && kw_hi == g->kernel_w && ih0 < g->in_h && ih0 + reach_h < g->in_h) {
                /* every tap inside: kernel_h runs of span bytes, step_h apart in x */
                const uint8_t *src = x + (ih0 * g->in_w + iw0) * channels;
                for (size_t kh = 0; kh < g->kernel_h; ++kh, row += span, src += step_h) copy_run(row, src, span);
                if (++ow == g->out_w) {
                    ow = 0;
                    ++oh;
                }
                continue;
            }
            for (size_t kh = 0; kh < g->kernel_h; ++kh, row += span) {
                const size_t ih = oh * g->stride_h + kh * g->dilation_h - g->pad_top;
                if (ih >= g->in_h) {
                    fill_run(row, x_zero, span);
                } else if (g->dilation_w == 1) {
                    fill_run(row, x_zero, kw_lo * channels);
                    copy_run(row + kw_lo * channels, x + (ih * g->in_w + iw0 + kw_lo) * channels, (kw_hi - kw_lo) * channels);
                    fill_run(row + kw_hi * channels, x_zero, (g->kernel_w - kw_hi) * channels);
                } else {
                    for (size_t kw = 0; kw < g->kernel_w; ++kw) {
                        const size_t iw = iw0 + kw * g->dilation_w;
                        if (iw < g->in_w) {
                            copy_run(row + kw * channels, x + (ih * g->in_w + iw) * channels, channels);
                        } else {
                            fill_run(row + kw * channels, x_zero, channels);
                        }
                    }
                }
            }
            if (++ow == g->out_w) {
                ow = 0;
                ++oh;
            }
        }
        gemm(count, n, ldp, patches, ldp, a_flip, packed, y + first * n, n, rq);
    }
}

/* What the tap tables of one convolution need, made once per call */
struct tap_table {
    const struct mlcc_qs8_conv_geometry *g;
    const uint8_t *x, *padding, *tail_start;
    uint8_t *end;
    size_t x_bytes, run, taps, reach_h;
    size_t offset[64];  /* an inside pixel's taps from its first, in (kh, kw) order: increasing */
    size_t ow_lo, ow_hi;  /* the output columns whose taps are all inside x's columns */
    bool offsets;         /* taps <= 64: offset[] holds them */
};

/* A tap's pointer where its `run` bytes would leave x: the copy of x's last bytes */
static inline const uint8_t *kept_inside(const struct tap_table *tt, const uint8_t *p) {
    return tt->run > tt->g->channels && (size_t)(p - tt->x) + tt->run > tt->x_bytes ? tt->end + (p - tt->tail_start) : p;
}

/* Pixel (oh, ow)'s taps tested one by one: in the padding, or near x's end */
static void border_taps(const struct tap_table *tt, size_t oh, size_t ow, const uint8_t **tap) {
    const struct mlcc_qs8_conv_geometry *g = tt->g;
    const size_t ih0 = oh * g->stride_h - g->pad_top, iw0 = ow * g->stride_w - g->pad_left;
    for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
        const size_t ih = ih0 + kh * g->dilation_h;
        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) {
            const size_t iw = iw0 + kw * g->dilation_w;
            tap[t] = ih < g->in_h && iw < g->in_w ? kept_inside(tt, tt->x + (ih * g->in_w + iw) * g->channels) : tt->padding;
        }
    }
}

/* The taps of output row oh's pixels [ow, ow + count): where the row's taps are inside x's rows (and away from
 * x's end), its inside pixels are a first tap's address plus the offsets, the address moving a stride a pixel
 * (a loop the compiler vectorises); the pixels near the left and right borders, and the other rows, test each tap */
static void row_taps(const struct tap_table *tt, size_t oh, size_t ow, size_t count, const uint8_t **tap) {
    const struct mlcc_qs8_conv_geometry *g = tt->g;
    const size_t ih0 = oh * g->stride_h - g->pad_top, end = ow + count, taps = tt->taps;
    /* left of the padding wraps around to a huge size_t: one test covers both sides */
    const bool rows_inside = tt->offsets && ih0 < g->in_h && ih0 + tt->reach_h < g->in_h &&
                             !(tt->run > g->channels && ih0 + tt->reach_h + 1 == g->in_h);
    const size_t lo = rows_inside ? MLCC_MIN(MLCC_MAX(ow, tt->ow_lo), end) : end;
    const size_t hi = rows_inside ? MLCC_MAX(MLCC_MIN(end, tt->ow_hi), lo) : end;
    for (; ow < lo; ++ow, tap += taps) border_taps(tt, oh, ow, tap);
    if (ow < hi) {
        const size_t step = g->stride_w * g->channels;
        const uint8_t *base = tt->x + (ih0 * g->in_w + (ow * g->stride_w - g->pad_left)) * g->channels;
        for (; ow < hi; ++ow, tap += taps, base += step) {
            for (size_t t = 0; t < taps; ++t) tap[t] = base + tt->offset[t];
        }
    }
    for (; ow < end; ++ow, tap += taps) border_taps(tt, oh, ow, tap);
}

void mlcc_qs8_conv_nhwc_indirect(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                 uint8_t a_flip, const int8_t *packed, uint8_t *y, const struct mlcc_qs8_requant *rq,
                                 void *work, size_t rows, mlcc_qs8_packed_igemm_fn igemm) {
    const size_t channels = g->channels, run = mlcc_qs8_conv_nhwc_indirect_run(channels);
    const size_t n = g->group_out, taps = g->kernel_h * g->kernel_w;
    const uint8_t **pointers = (const uint8_t **)work;
    uint8_t *padding = (uint8_t *)(pointers + rows * taps), *end = padding + run;
    fill_run(padding, x_zero, run);
    /* a tap reads `run` bytes: past its channels, the next pixel's (times zero weights); the last pixels'
     * reads would leave x, so they read a copy of x's last `run` bytes followed by zeros */
    const size_t x_bytes = g->in_h * g->in_w * channels, tail = MLCC_MIN(run, x_bytes);
    const uint8_t *tail_start = x + x_bytes - tail;
    for (size_t i = 0; i < 2 * run; ++i) end[i] = i < tail ? tail_start[i] : 0;
    struct tap_table tt = {g, x, padding, tail_start, end, x_bytes, run, taps, (g->kernel_h - 1) * g->dilation_h,
                           {0}, 0, 0, taps <= 64};
    const size_t reach_w = (g->kernel_w - 1) * g->dilation_w;
    for (size_t kh = 0, t = 0; tt.offsets && kh < g->kernel_h; ++kh) {
        for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) tt.offset[t] = (kh * g->dilation_h * g->in_w + kw * g->dilation_w) * channels;
    }
    /* inside columns: pad_left <= ow * stride_w and ow * stride_w - pad_left + reach_w < in_w */
    tt.ow_lo = MLCC_MIN((g->pad_left + g->stride_w - 1) / g->stride_w, g->out_w);
    tt.ow_hi = g->in_w + g->pad_left > reach_w
                   ? MLCC_MIN((g->in_w + g->pad_left - reach_w + g->stride_w - 1) / g->stride_w, g->out_w) : 0;
    size_t oh = 0, ow = 0;  /* the block's first pixel */
    for (size_t first = 0, pixels = g->out_h * g->out_w; first < pixels; first += rows) {
        const size_t count = MLCC_MIN(rows, pixels - first);
        for (size_t r = 0; r < count;) {  /* the block's pixels, a run of one output row at a time */
            const size_t span = MLCC_MIN(count - r, g->out_w - ow);
            row_taps(&tt, oh, ow, span, pointers + r * taps);
            r += span;
            ow += span;
            if (ow == g->out_w) {
                ow = 0;
                ++oh;
            }
        }
        igemm(count, n, taps, run, pointers, a_flip, packed, y + first * n, n, rq);
    }
}

void mlcc_qs8_conv_nhwc_rows(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                             uint8_t a_flip, const int8_t *packed, uint8_t *y, const struct mlcc_qs8_requant *rq,
                             void *work, size_t rows, mlcc_qs8_packed_igemm_fn igemm) {
    const size_t channels = g->channels, kh_count = g->kernel_h, n = g->group_out, span = g->kernel_w * channels;
    const size_t run = mlcc_qs8_conv_nhwc_rows_run(g->kernel_w, channels);
    const size_t lo = mlcc_qs8_conv_nhwc_rows_lo(g), hi = mlcc_qs8_conv_nhwc_rows_hi(g), borders = lo + g->out_w - hi;
    const size_t step = g->stride_w * channels, row_bytes = g->in_w * channels;
    const uint8_t **pointers = (const uint8_t **)work;
    uint8_t *padding = (uint8_t *)(pointers + rows * kh_count), *strips = padding + run;
    fill_run(padding, x_zero, run);
    /* each border column's run on each row of x, composed once: x_zero outside x's columns, zero past the span */
    for (size_t ih = 0; ih < g->in_h; ++ih) {
        for (size_t b = 0; b < borders; ++b) {
            const size_t ow = b < lo ? b : hi + (b - lo), iw0 = ow * g->stride_w - g->pad_left;
            uint8_t *strip = strips + (ih * borders + b) * run;
            const uint8_t *src = x + ih * row_bytes;
            for (size_t p = 0, at = iw0 * channels; p < span; ++p, ++at) {  /* at: the byte's offset in x's row */
                strip[p] = at < row_bytes ? src[at] : x_zero;  /* left of the row wraps around to a huge size_t */
            }
            for (size_t p = span; p < run; ++p) strip[p] = 0;
        }
    }
    size_t oh = 0, ow = 0;  /* the block's first pixel */
    for (size_t first = 0, pixels = g->out_h * g->out_w; first < pixels; first += rows) {
        const size_t count = MLCC_MIN(rows, pixels - first);
        for (size_t r = 0; r < count;) {  /* the block's pixels, a run of one output row at a time */
            const size_t end = ow + MLCC_MIN(count - r, g->out_w - ow);
            const size_t ih0 = oh * g->stride_h - g->pad_top;  /* above x wraps around to a huge size_t */
            const size_t in_lo = MLCC_MIN(MLCC_MAX(ow, lo), end), in_hi = MLCC_MAX(MLCC_MIN(end, hi), in_lo);
            const uint8_t **row = pointers + r * kh_count;
            if (kh_count == 3 && ih0 < g->in_h && ih0 + 2 * g->dilation_h < g->in_h) {
                /* three kernel rows inside x (a 3x3 stem's output rows but the edges): the middle's pointers
                 * written in order, three a pixel */
                const size_t step_h = g->dilation_h * row_bytes, strip_h = g->dilation_h * borders * run;
                for (size_t o = ow; o < in_lo; ++o) {
                    const uint8_t *strip = strips + (ih0 * borders + o) * run;
                    for (size_t kh = 0; kh < 3; ++kh) row[(o - ow) * 3 + kh] = strip + kh * strip_h;
                }
                const uint8_t *p = x + (ih0 * row_bytes + in_lo * step - g->pad_left * channels);
                const uint8_t **at = row + (in_lo - ow) * 3;
                for (size_t i = 0, middle = in_hi - in_lo; i < middle; ++i) {
                    at[3 * i] = p + i * step;
                    at[3 * i + 1] = p + i * step + step_h;
                    at[3 * i + 2] = p + i * step + 2 * step_h;
                }
                for (size_t o = in_hi; o < end; ++o) {
                    const uint8_t *strip = strips + (ih0 * borders + lo + o - hi) * run;
                    for (size_t kh = 0; kh < 3; ++kh) row[(o - ow) * 3 + kh] = strip + kh * strip_h;
                }
            } else {
                for (size_t kh = 0; kh < kh_count; ++kh) {
                    const size_t ih = ih0 + kh * g->dilation_h;
                    const bool inside = ih < g->in_h;
                    const uint8_t *strip = inside ? strips + ih * borders * run : NULL;
                    size_t o = ow;
                    for (; o < in_lo; ++o) row[(o - ow) * kh_count + kh] = inside ? strip + o * run : padding;
                    const uint8_t *p = inside ? x + (ih * row_bytes + in_lo * step - g->pad_left * channels) : padding;
                    const size_t advance = inside ? step : 0;
                    for (; o < in_hi; ++o, p += advance) row[(o - ow) * kh_count + kh] = p;
                    for (; o < end; ++o) row[(o - ow) * kh_count + kh] = inside ? strip + (lo + o - hi) * run : padding;
                }
            }
            r += end - ow;
            ow = end;
            if (ow == g->out_w) {
                ow = 0;
                ++oh;
            }
        }
        igemm(count, n, kh_count, run, pointers, a_flip, packed, y + first * n, n, rq);
    }
}
