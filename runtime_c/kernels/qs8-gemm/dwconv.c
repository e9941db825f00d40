/* qs8 depthwise convolution of one NCHW image (groups = channels, one filter per channel), portable C.
 * Per output row, each tap adds weight * input over the row into an int32 row of accumulators: the
 * in-image stretch is a plain loop the compiler vectorises, the stretches in the padding add the weight
 * times the zero point, as the folded bias expects. */
#include "mlcc/kernels/qs8-gemm.h"

#define MAX_ROW 1024  /* output pixels a row; wider rows are done in pieces */
#define MAX_PLANE 2048  /* a stride-1 channel whose padded plane fits this is done as whole-plane runs */

/* Stride 1, a small plane: the channel is copied once with its padding (the zero point) into a plane as wide
 * as the output plus the kernel's reach, where every tap is one contiguous run over the whole output (its
 * columns past out_w are computed and dropped): a few long vectorised loops instead of many short ones. */
static void small_plane(const struct mlcc_qs8_conv_geometry *g, const uint8_t *xc, uint8_t x_zero, uint8_t a_flip,
                        const int8_t *wc, size_t c, uint8_t *yc, const struct mlcc_qs8_requant *rq) {
    const size_t wide = g->out_w + (g->kernel_w - 1) * g->dilation_w;
    const size_t high = g->out_h + (g->kernel_h - 1) * g->dilation_h;
    const size_t span = (g->out_h - 1) * wide + g->out_w;
    int8_t plane[MAX_PLANE];
    int32_t acc[MAX_PLANE];
    for (size_t r = 0; r < high; ++r) {
        const size_t ih = r - g->pad_top;
        for (size_t q = 0; q < wide; ++q) {
            const size_t iw = q - g->pad_left;
            plane[r * wide + q] = (int8_t)((ih < g->in_h && iw < g->in_w ? xc[ih * g->in_w + iw] : x_zero) ^ a_flip);
        }
    }
    for (size_t i = 0; i < span; ++i) acc[i] = rq->bias[c];
    for (size_t kh = 0; kh < g->kernel_h; ++kh) {
        for (size_t kw = 0; kw < g->kernel_w; ++kw) {
            const int32_t tap = wc[kh * g->kernel_w + kw];
            const int8_t *src = plane + kh * g->dilation_h * wide + kw * g->dilation_w;
            for (size_t i = 0; i < span; ++i) acc[i] += tap * (int32_t)src[i];
        }
    }
    for (size_t oh = 0; oh < g->out_h; ++oh) {
        mlcc_qs8_requantize_run(acc + oh * wide, g->out_w, rq->multiplier[c], rq->shift[c], rq, yc + oh * g->out_w);
    }
}

void mlcc_qs8_dwconv_nchw(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                          const int8_t *w, size_t ldw, uint8_t *y, const struct mlcc_qs8_requant *rq) {
    const size_t in_size = g->in_h * g->in_w, pixels = g->out_h * g->out_w;
    const int32_t zero = (int32_t)(int8_t)(x_zero ^ a_flip);
    int32_t acc[MAX_ROW];
    const bool small = g->stride_h == 1 && g->stride_w == 1 &&
                       (g->out_h + (g->kernel_h - 1) * g->dilation_h) * (g->out_w + (g->kernel_w - 1) * g->dilation_w) <= MAX_PLANE;
    for (size_t c = 0; c < g->channels; ++c) {
        const uint8_t *xc = x + c * in_size;
        const int8_t *wc = w + c * ldw;
        if (small) {
            small_plane(g, xc, x_zero, a_flip, wc, c, y + c * pixels, rq);
            continue;
        }
        for (size_t oh = 0; oh < g->out_h; ++oh) {
            for (size_t first = 0; first < g->out_w; first += MAX_ROW) {
                const size_t count = MLCC_MIN(MAX_ROW, g->out_w - first);
                for (size_t r = 0; r < count; ++r) acc[r] = rq->bias[c];
                for (size_t kh = 0; kh < g->kernel_h; ++kh) {
                    const size_t ih = oh * g->stride_h + kh * g->dilation_h - g->pad_top;
                    for (size_t kw = 0; kw < g->kernel_w; ++kw) {
                        const int32_t tap = wc[kh * g->kernel_w + kw];
                        if (ih >= g->in_h) {
                            for (size_t r = 0; r < count; ++r) acc[r] += tap * zero;
                            continue;
                        }
                        const uint8_t *row = xc + ih * g->in_w;
                        /* output columns whose input column iw = ow * stride + offset - pad is inside the row */
                        const size_t offset = kw * g->dilation_w;
                        size_t lo = 0, hi = count;
                        while (lo < count && (first + lo) * g->stride_w + offset < g->pad_left) ++lo;
                        while (hi > lo && (first + hi - 1) * g->stride_w + offset - g->pad_left >= g->in_w) --hi;
                        for (size_t r = 0; r < lo; ++r) acc[r] += tap * zero;
                        for (size_t r = hi; r < count; ++r) acc[r] += tap * zero;
                        if (hi == lo) continue;
                        const uint8_t *src = row + (first + lo) * g->stride_w + offset - g->pad_left;
                        if (g->stride_w == 1) {
                            for (size_t r = lo; r < hi; ++r) acc[r] += tap * (int32_t)(int8_t)(src[r - lo] ^ a_flip);
                        } else {
                            for (size_t r = lo; r < hi; ++r) acc[r] += tap * (int32_t)(int8_t)(src[(r - lo) * g->stride_w] ^ a_flip);
                        }
                    }
                }
                uint8_t *out = y + c * pixels + oh * g->out_w + first;
                mlcc_qs8_requantize_run(acc, count, rq->multiplier[c], rq->shift[c], rq, out);
            }
        }
    }
}
