/* f32 pooling over channels-last (N[D]HWC) tensors: every window folds whole pixels of `channels`
 * contiguous floats, so the innermost loop runs over channels and vectorises. */
#include <math.h>

#include "mlcc/kernels/f32-pool.h"

/* 1 and the input index along one dim of output o's tap k, or 0 when it falls in the padding. */
static int tap_index(const mlcc_pool_geometry *g, int dim, ptrdiff_t o, ptrdiff_t k, ptrdiff_t *i)
{
    *i = o * g->stride[dim] + k * g->dilation[dim] - g->pad_begin[dim];
    return *i >= 0 && *i < g->in[dim];
}

/* How many of the window's taps along `dim` land in [lo, hi). */
static ptrdiff_t taps_within(const mlcc_pool_geometry *g, int dim, ptrdiff_t o, ptrdiff_t lo, ptrdiff_t hi)
{
    ptrdiff_t count = 0;
    for (ptrdiff_t k = 0; k < g->kernel[dim]; ++k) {
        const ptrdiff_t i = o * g->stride[dim] + k * g->dilation[dim] - g->pad_begin[dim];
        count += i >= lo && i < hi;
    }
    return count;
}

/* One output pixel: the max or the sum of its window's pixels inside the input. */
static void pool_pixel(int is_max, const mlcc_pool_geometry *g, size_t channels, ptrdiff_t od, ptrdiff_t oh,
                       ptrdiff_t ow, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    for (size_t c = 0; c < channels; ++c) y[c] = is_max ? -INFINITY : 0.0f;
    for (ptrdiff_t kd = 0; kd < g->kernel[0]; ++kd) {
        ptrdiff_t id, ih, iw;
        if (!tap_index(g, 0, od, kd, &id)) continue;
        for (ptrdiff_t kh = 0; kh < g->kernel[1]; ++kh) {
            if (!tap_index(g, 1, oh, kh, &ih)) continue;
            for (ptrdiff_t kw = 0; kw < g->kernel[2]; ++kw) {
                if (!tap_index(g, 2, ow, kw, &iw)) continue;
                const float *MLCC_RESTRICT xp = x + (size_t)((id * g->in[1] + ih) * g->in[2] + iw) * channels;
                if (is_max) {
                    for (size_t c = 0; c < channels; ++c) y[c] = xp[c] > y[c] ? xp[c] : y[c];
                } else {
                    for (size_t c = 0; c < channels; ++c) y[c] += xp[c];
                }
            }
        }
    }
}

static void pool_nhwc(int is_max, size_t images, size_t channels, const mlcc_pool_geometry *g,
                      bool count_include_pad, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    const size_t in_image = (size_t)(g->in[0] * g->in[1] * g->in[2]) * channels;
    /* the divisor counts the taps inside [lo, hi) per dim: the input, or the input and its pads */
    ptrdiff_t lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
        lo[d] = count_include_pad ? -g->pad_begin[d] : 0;
        hi[d] = count_include_pad ? g->in[d] + g->pad_end[d] : g->in[d];
    }
    for (size_t n = 0; n < images; ++n, x += in_image) {
        for (ptrdiff_t od = 0; od < g->out[0]; ++od) {
            for (ptrdiff_t oh = 0; oh < g->out[1]; ++oh) {
                for (ptrdiff_t ow = 0; ow < g->out[2]; ++ow, y += channels) {
                    pool_pixel(is_max, g, channels, od, oh, ow, x, y);
                    if (is_max) continue;
                    const ptrdiff_t taps = taps_within(g, 0, od, lo[0], hi[0]) * taps_within(g, 1, oh, lo[1], hi[1])
                                           * taps_within(g, 2, ow, lo[2], hi[2]);
                    const float scale = taps > 0 ? 1.0f / (float)taps : 0.0f;
                    for (size_t c = 0; c < channels; ++c) y[c] *= scale;
                }
            }
        }
    }
}

void mlcc_f32_pool_max_nhwc__reference(size_t images, size_t channels, const mlcc_pool_geometry *geometry,
                                       const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    pool_nhwc(1, images, channels, geometry, false, x, y);
}

void mlcc_f32_pool_avg_nhwc__reference(size_t images, size_t channels, const mlcc_pool_geometry *geometry,
                                       bool count_include_pad, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    pool_nhwc(0, images, channels, geometry, count_include_pad, x, y);
}

static void global_nhwc(int is_max, size_t images, size_t pixels, size_t channels,
                        const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    for (size_t n = 0; n < images; ++n, y += channels) {
        for (size_t c = 0; c < channels; ++c) y[c] = is_max ? -INFINITY : 0.0f;
        for (size_t p = 0; p < pixels; ++p, x += channels) {
            if (is_max) {
                for (size_t c = 0; c < channels; ++c) y[c] = x[c] > y[c] ? x[c] : y[c];
            } else {
                for (size_t c = 0; c < channels; ++c) y[c] += x[c];
            }
        }
        if (!is_max) {
            const float scale = 1.0f / (float)pixels;
            for (size_t c = 0; c < channels; ++c) y[c] *= scale;
        }
    }
}

void mlcc_f32_pool_global_max_nhwc__reference(size_t images, size_t pixels, size_t channels,
                                              const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    global_nhwc(1, images, pixels, channels, x, y);
}

void mlcc_f32_pool_global_avg_nhwc__reference(size_t images, size_t pixels, size_t channels,
                                              const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    global_nhwc(0, images, pixels, channels, x, y);
}
