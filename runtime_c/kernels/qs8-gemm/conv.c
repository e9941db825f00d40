/* qs8-gemm convolution driver: im2col by blocks of output pixels, then the GEMM (see qs8-gemm.h). */
#include <string.h>

#include "mlcc/kernels/qs8-gemm.h"

/* The patches of output pixels [first, first + count) of one group: row r holds pixel first + r's taps in
 * (c, kh, kw) order; taps outside the image hold the zero point. */
static void patches_of(const struct mlcc_qs8_conv_geometry *g, const uint8_t *xg, size_t group_in, uint8_t x_zero,
                       size_t first, size_t count, uint8_t *patches, size_t ldw) {
    const size_t taps = g->kernel_h * g->kernel_w;
    for (size_t r = 0; r < count; ++r) {
        const size_t oh = (first + r) / g->out_w, ow = (first + r) % g->out_w;
        uint8_t *row = patches + r * ldw;
        for (size_t c = 0; c < group_in; ++c) {
            const uint8_t *xc = xg + c * g->in_h * g->in_w;
            for (size_t kh = 0; kh < g->kernel_h; ++kh) {
                /* left of the padding wraps around to a huge size_t: one test covers both sides */
                const size_t ih = oh * g->stride_h + kh * g->dilation_h - g->pad_top;
                uint8_t *dst = row + (c * g->kernel_h + kh) * g->kernel_w;
                if (ih >= g->in_h) {
                    memset(dst, x_zero, g->kernel_w);
                    continue;
                }
                const uint8_t *src = xc + ih * g->in_w;
                const size_t iw0 = ow * g->stride_w - g->pad_left;  /* wraps left of the image, as ih */
                if (iw0 < g->in_w && iw0 + (g->kernel_w - 1) * g->dilation_w < g->in_w) {  /* the window is inside */
                    for (size_t kw = 0; kw < g->kernel_w; ++kw) dst[kw] = src[iw0 + kw * g->dilation_w];
                    continue;
                }
                for (size_t kw = 0; kw < g->kernel_w; ++kw) {
                    const size_t iw = iw0 + kw * g->dilation_w;
                    dst[kw] = iw < g->in_w ? src[iw] : x_zero;
                }
            }
        }
        memset(row + group_in * taps, 0, ldw - group_in * taps);  /* the weights' zero padding meets zeros */
    }
}

void mlcc_qs8_conv_nchw(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                        const int8_t *w, size_t ldw, uint8_t *y, const struct mlcc_qs8_requant *rq,
                        uint8_t *patches, size_t rows, mlcc_qs8_gemm_fn gemm) {
    const size_t pixels = g->out_h * g->out_w, in_size = g->in_h * g->in_w;
    const size_t group_in = g->channels / g->groups;
    for (size_t group = 0; group < g->groups; ++group) {
        const size_t oc = group * g->group_out;
        const struct mlcc_qs8_requant grq = {rq->bias + oc, rq->multiplier + oc, rq->shift + oc,
                                             rq->y_zero, rq->y_min, rq->y_max};
        for (size_t first = 0; first < pixels; first += rows) {
            const size_t count = MLCC_MIN(rows, pixels - first);
            patches_of(g, x + group * group_in * in_size, group_in, x_zero, first, count, patches, ldw);
            /* the patches' and weights' zero padding adds nothing: k as ldw spares a variant its tail */
            gemm(count, g->group_out, ldw, patches, ldw, a_flip, w + oc * ldw, ldw, y + oc * pixels + first, 1, pixels, &grq);
        }
    }
}

/* Rows q = (c, kh, kw) of the patches of output pixels [first, first + count) of one group, `rows` bytes
 * apart: each a run of the input row shifted by the tap, the zero point where it reads the padding. The
 * block is cut into stretches of one output row; a stretch's in-row columns for each kw are found once and
 * hold for every channel and kh. */
static void column_patches(const struct mlcc_qs8_conv_geometry *g, const uint8_t *xg, size_t group_in, uint8_t x_zero,
                           size_t first, size_t count, uint8_t *patches, size_t rows) {
    const size_t taps = g->kernel_h * g->kernel_w;
    for (size_t done = 0; done < count;) {
        const size_t pixel = first + done, oh = pixel / g->out_w, ow0 = pixel % g->out_w;
        const size_t run = MLCC_MIN(count - done, g->out_w - ow0);
        for (size_t kw = 0; kw < g->kernel_w; ++kw) {
            const size_t offset = kw * g->dilation_w;
            size_t lo = 0, hi = run;  /* [lo, hi): the stretch's columns that read inside the row */
            while (lo < run && (ow0 + lo) * g->stride_w + offset < g->pad_left) ++lo;
            while (hi > lo && (ow0 + hi - 1) * g->stride_w + offset - g->pad_left >= g->in_w) --hi;
            const size_t start = hi > lo ? (ow0 + lo) * g->stride_w + offset - g->pad_left : 0;
            for (size_t c = 0; c < group_in; ++c) {
                const uint8_t *xc = xg + c * g->in_h * g->in_w;
                for (size_t kh = 0; kh < g->kernel_h; ++kh) {
                    uint8_t *out = patches + (c * taps + kh * g->kernel_w + kw) * rows + done;
                    const size_t ih = oh * g->stride_h + kh * g->dilation_h - g->pad_top;
                    if (ih >= g->in_h || hi == lo) {
                        memset(out, x_zero, run);
                        continue;
                    }
                    for (size_t r = 0; r < lo; ++r) out[r] = x_zero;
                    for (size_t r = hi; r < run; ++r) out[r] = x_zero;
                    const uint8_t *src = xc + ih * g->in_w + start;
                    if (g->stride_w == 1) {
                        memcpy(out + lo, src, hi - lo);
                    } else {
                        for (size_t r = lo; r < hi; ++r) out[r] = src[(r - lo) * g->stride_w];
                    }
                }
            }
        }
        done += run;
    }
}

void mlcc_qs8_conv_nchw_cm(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                           const int8_t *w, size_t ldw, uint8_t *y, const struct mlcc_qs8_requant *rq,
                           uint8_t *patches, size_t rows, mlcc_qs8_gemm_nchw_fn gemm) {
    const size_t pixels = g->out_h * g->out_w, in_size = g->in_h * g->in_w;
    const size_t group_in = g->channels / g->groups, k = group_in * g->kernel_h * g->kernel_w;
    const bool in_place = g->kernel_h == 1 && g->kernel_w == 1 && g->stride_h == 1 && g->stride_w == 1 &&
                          g->pad_top == 0 && g->pad_left == 0 && g->out_h == g->in_h && g->out_w == g->in_w;
    for (size_t group = 0; group < g->groups; ++group) {
        const size_t oc = group * g->group_out;
        const uint8_t *xg = x + group * group_in * in_size;
        const struct mlcc_qs8_requant grq = {rq->bias + oc, rq->multiplier + oc, rq->shift + oc,
                                             rq->y_zero, rq->y_min, rq->y_max};
        if (in_place) {
            gemm(g->group_out, pixels, k, w + oc * ldw, ldw, xg, in_size, a_flip, y + oc * pixels, pixels, &grq);
            continue;
        }
        for (size_t first = 0; first < pixels; first += rows) {
            const size_t count = MLCC_MIN(rows, pixels - first);
            column_patches(g, xg, group_in, x_zero, first, count, patches, rows);
            gemm(g->group_out, count, k, w + oc * ldw, ldw, patches, rows, a_flip, y + oc * pixels + first, pixels, &grq);
        }
    }
}
