/* f32 pooling: windowed max/average and global max/average. */
#include <math.h>

#include "mlcc/kernels/f32-pool.h"

/* Windowed max/average pooling.
 *
 * Each output row (fixed d, h) starts at the identity, then every window tap that lands inside the input
 * is folded into it by a loop over the row's outputs: contiguous in y and, at stride 1, in x too, so the
 * innermost loop vectorises. Taps in the padding are never read; each tap's valid output range is
 * computed once per row instead of clamping every window. */

typedef enum { POOL_MAX, POOL_SUM } pool_kind;

static ptrdiff_t div_floor(ptrdiff_t a, ptrdiff_t b) /* b > 0 */
{
    const ptrdiff_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static ptrdiff_t div_ceil(ptrdiff_t a, ptrdiff_t b) /* b > 0 */
{
    return -div_floor(-a, b);
}

/* The outputs [*first, *last) of a dim whose tap at `offset` (tap * dilation - pad_begin) reads in [0, in). */
static void outputs_reading_inside(ptrdiff_t offset, ptrdiff_t stride, ptrdiff_t in, ptrdiff_t out,
                                   ptrdiff_t *first, ptrdiff_t *last)
{
    *first = MLCC_MAX(0, div_ceil(-offset, stride));
    *last = MLCC_MIN(out, div_floor(in - 1 - offset, stride) + 1);
    if (*last < *first) *last = *first;
}

/* How many taps of the window starting at `start` land in [lo, hi). */
static ptrdiff_t taps_inside(ptrdiff_t start, ptrdiff_t kernel, ptrdiff_t dilation, ptrdiff_t lo, ptrdiff_t hi)
{
    const ptrdiff_t first = MLCC_MAX(0, div_ceil(lo - start, dilation));
    const ptrdiff_t last = MLCC_MIN(kernel - 1, div_floor(hi - 1 - start, dilation));
    return last >= first ? last - first + 1 : 0;
}

/* Fold every tap along w of one input row into the output row. */
static void accumulate_row(pool_kind kind, const mlcc_pool_geometry *g, const float *MLCC_RESTRICT x_row,
                           float *MLCC_RESTRICT row)
{
    const ptrdiff_t stride = g->stride[2];
    for (ptrdiff_t k = 0; k < g->kernel[2]; ++k) {
        const ptrdiff_t offset = k * g->dilation[2] - g->pad_begin[2];
        ptrdiff_t first, last;
        outputs_reading_inside(offset, stride, g->in[2], g->out[2], &first, &last);
        if (stride == 1) {
            const float *MLCC_RESTRICT src = x_row + (first + offset);
            float *MLCC_RESTRICT dst = row + first;
            const ptrdiff_t n = last - first;
            if (kind == POOL_MAX) {
                for (ptrdiff_t i = 0; i < n; ++i) dst[i] = src[i] > dst[i] ? src[i] : dst[i];
            } else {
                for (ptrdiff_t i = 0; i < n; ++i) dst[i] += src[i];
            }
        } else if (kind == POOL_MAX) {
            for (ptrdiff_t o = first; o < last; ++o) {
                const float v = x_row[o * stride + offset];
                row[o] = v > row[o] ? v : row[o];
            }
        } else {
            for (ptrdiff_t o = first; o < last; ++o) row[o] += x_row[o * stride + offset];
        }
    }
}

/* Output row (od, oh) of one plane: the max or the sum of its windows. */
static void pool_row(pool_kind kind, const mlcc_pool_geometry *g, ptrdiff_t od, ptrdiff_t oh,
                     const float *MLCC_RESTRICT x, float *MLCC_RESTRICT row)
{
    const float identity = kind == POOL_MAX ? -INFINITY : 0.0f;
    for (ptrdiff_t o = 0; o < g->out[2]; ++o) row[o] = identity;
    for (ptrdiff_t kd = 0; kd < g->kernel[0]; ++kd) {
        const ptrdiff_t id = od * g->stride[0] + kd * g->dilation[0] - g->pad_begin[0];
        if (id < 0 || id >= g->in[0]) continue;
        for (ptrdiff_t kh = 0; kh < g->kernel[1]; ++kh) {
            const ptrdiff_t ih = oh * g->stride[1] + kh * g->dilation[1] - g->pad_begin[1];
            if (ih < 0 || ih >= g->in[1]) continue;
            accumulate_row(kind, g, x + (id * g->in[1] + ih) * g->in[2], row);
        }
    }
}

void mlcc_f32_pool_max__reference(size_t planes, const mlcc_pool_geometry *geometry,
                                  const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    const mlcc_pool_geometry *g = geometry;
    const size_t in_plane = (size_t)(g->in[0] * g->in[1] * g->in[2]);
    const size_t out_plane = (size_t)(g->out[0] * g->out[1] * g->out[2]);
    for (size_t p = 0; p < planes; ++p, x += in_plane, y += out_plane) {
        for (ptrdiff_t od = 0; od < g->out[0]; ++od) {
            for (ptrdiff_t oh = 0; oh < g->out[1]; ++oh) {
                pool_row(POOL_MAX, g, od, oh, x, y + (od * g->out[1] + oh) * g->out[2]);
            }
        }
    }
}

void mlcc_f32_pool_avg__reference(size_t planes, const mlcc_pool_geometry *geometry, bool count_include_pad,
                                  const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    const mlcc_pool_geometry *g = geometry;
    const size_t in_plane = (size_t)(g->in[0] * g->in[1] * g->in[2]);
    const size_t out_plane = (size_t)(g->out[0] * g->out[1] * g->out[2]);
    /* the divisor counts the taps inside [lo, hi) per dim: the input, or the input and its pads */
    ptrdiff_t lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
        lo[d] = count_include_pad ? -g->pad_begin[d] : 0;
        hi[d] = count_include_pad ? g->in[d] + g->pad_end[d] : g->in[d];
    }
    for (size_t p = 0; p < planes; ++p, x += in_plane, y += out_plane) {
        for (ptrdiff_t od = 0; od < g->out[0]; ++od) {
            const ptrdiff_t taps_d = taps_inside(od * g->stride[0] - g->pad_begin[0], g->kernel[0], g->dilation[0], lo[0], hi[0]);
            for (ptrdiff_t oh = 0; oh < g->out[1]; ++oh) {
                const ptrdiff_t taps_dh = taps_d * taps_inside(oh * g->stride[1] - g->pad_begin[1], g->kernel[1],
                                                               g->dilation[1], lo[1], hi[1]);
                float *MLCC_RESTRICT row = y + (od * g->out[1] + oh) * g->out[2];
                pool_row(POOL_SUM, g, od, oh, x, row);
                for (ptrdiff_t ow = 0; ow < g->out[2]; ++ow) {
                    const ptrdiff_t taps = taps_dh * taps_inside(ow * g->stride[2] - g->pad_begin[2], g->kernel[2],
                                                                 g->dilation[2], lo[2], hi[2]);
                    row[ow] = taps > 0 ? row[ow] / (float)taps : 0.0f;
                }
            }
        }
    }
}

/* Global max/average pooling: one reduction over each contiguous plane.
 * Four partial accumulators break the loop-carried dependency (the order of a float sum is ours). */

void mlcc_f32_pool_global_max__reference(size_t planes, size_t size, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    for (size_t p = 0; p < planes; ++p, x += size) {
        float m = size > 0 ? x[0] : 0.0f;
        for (size_t i = 1; i < size; ++i) m = x[i] > m ? x[i] : m;
        y[p] = m;
    }
}

void mlcc_f32_pool_global_avg__reference(size_t planes, size_t size, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    const float inv_size = size > 0 ? 1.0f / (float)size : 0.0f;
    for (size_t p = 0; p < planes; ++p, x += size) {
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
        size_t i = 0;
        for (; i + 4 <= size; i += 4) {
            s0 += x[i];
            s1 += x[i + 1];
            s2 += x[i + 2];
            s3 += x[i + 3];
        }
        for (; i < size; ++i) s0 += x[i];
        y[p] = ((s0 + s1) + (s2 + s3)) * inv_size;
    }
}
