/* f32 pooling over channels-last (N[D]HWC) tensors on the SIMD shim: the channels are the vector lanes.
 * Each output pixel works out once which of its window's taps are inside the input (a range per dim, so
 * interior pixels and border pixels run the same unchecked loops, the border ones over fewer taps), then
 * folds every vector of channels over them; a channel count that is not a multiple of the vector width is
 * finished by one vector overlapping the one before it (x and y must not overlap). Targets without a
 * shim, and fewer channels than one vector, take the same loops one channel at a time. Results match the
 * __reference forms (pool-nhwc-reference.c) bit for bit: same taps, same order. */
#include <math.h>

#include "mlcc/kernels/f32-pool.h"
#include "mlcc/simd.h"

/* The loops take is_max and a vector count as parameters: inlined where they are constants, each entry
 * point gets its own straight-line code. */
#if defined(__GNUC__)
#define FORCE_INLINE inline __attribute__((always_inline))
#else
#define FORCE_INLINE inline
#endif

/* The taps k of output o's window along `dim` whose input index lies in [lo, hi), as [*k_lo, *k_hi); no
 * division without dilation. Returns their count. */
static ptrdiff_t taps_between(const mlcc_pool_geometry *g, int dim, ptrdiff_t o, ptrdiff_t lo, ptrdiff_t hi,
                              ptrdiff_t *k_lo, ptrdiff_t *k_hi)
{
    const ptrdiff_t start = o * g->stride[dim] - g->pad_begin[dim], step = g->dilation[dim];
    ptrdiff_t first, end;
    if (step == 1) {
        first = start < lo ? lo - start : 0;
        end = hi - start;
    } else {
        first = start < lo ? (lo - start + step - 1) / step : 0;
        end = start < hi ? (hi - 1 - start) / step + 1 : 0;
    }
    *k_hi = end < g->kernel[dim] ? end : g->kernel[dim];
    *k_lo = first < *k_hi ? first : *k_hi;
    return *k_hi - *k_lo;
}

/* One output pixel's window: its taps inside the input. */
struct window {
    const float *x;         /* the image */
    ptrdiff_t start[3];     /* input index of tap 0 per dim */
    ptrdiff_t k_lo[3], k_hi[3];
};

static inline const float *tap(const mlcc_pool_geometry *g, const struct window *win, size_t channels, ptrdiff_t kd,
                               ptrdiff_t kh, ptrdiff_t kw)
{
    const ptrdiff_t id = win->start[0] + kd * g->dilation[0], ih = win->start[1] + kh * g->dilation[1];
    const ptrdiff_t iw = win->start[2] + kw * g->dilation[2];
    return win->x + (size_t)((id * g->in[1] + ih) * g->in[2] + iw) * channels;
}

/* Channels [c0, c1) of one pixel, one channel at a time. */
static FORCE_INLINE void pixel_portable(int is_max, const mlcc_pool_geometry *g, const struct window *win,
                                        size_t channels, float scale, size_t c0, size_t c1, float *MLCC_RESTRICT y)
{
    for (size_t c = c0; c < c1; ++c) y[c] = is_max ? -INFINITY : 0.0f;
    for (ptrdiff_t kd = win->k_lo[0]; kd < win->k_hi[0]; ++kd) {
        for (ptrdiff_t kh = win->k_lo[1]; kh < win->k_hi[1]; ++kh) {
            for (ptrdiff_t kw = win->k_lo[2]; kw < win->k_hi[2]; ++kw) {
                const float *MLCC_RESTRICT xp = tap(g, win, channels, kd, kh, kw);
                if (is_max) {
                    for (size_t c = c0; c < c1; ++c) y[c] = xp[c] > y[c] ? xp[c] : y[c];
                } else {
                    for (size_t c = c0; c < c1; ++c) y[c] += xp[c];
                }
            }
        }
    }
    if (!is_max)
        for (size_t c = c0; c < c1; ++c) y[c] *= scale;
}

#if MLCC_HAVE_F32V
#define LANES MLCC_F32V_LANES
#define BLOCK 4u  /* vectors of channels folded per sweep over a window's taps */


/* Vectors of channels c, c + LANES, ... (count of them, a constant once inlined) of one pixel, over kw taps
 * along w (a constant for whole 3-wide windows). */
static FORCE_INLINE void block_taps(int is_max, const mlcc_pool_geometry *g, const struct window *win,
                                    size_t channels, float scale, size_t c, size_t count, ptrdiff_t kw_n,
                                    float *MLCC_RESTRICT y)
{
    mlcc_f32v acc[BLOCK];
    for (size_t j = 0; j < count; ++j) acc[j] = is_max ? mlcc_f32v_splat(-INFINITY) : mlcc_f32v_zero();
    const size_t step = (size_t)g->dilation[2] * channels;
    for (ptrdiff_t kd = win->k_lo[0]; kd < win->k_hi[0]; ++kd) {
        for (ptrdiff_t kh = win->k_lo[1]; kh < win->k_hi[1]; ++kh) {
            if (kw_n == 0) continue;
            const float *xr = tap(g, win, channels, kd, kh, win->k_lo[2]) + c;
            for (ptrdiff_t kw = 0; kw < kw_n; ++kw) {
                const float *xp = xr + (size_t)kw * step;
                for (size_t j = 0; j < count; ++j) {
                    const mlcc_f32v v = mlcc_f32v_load(xp + j * LANES);
                    /* max(v, acc): acc stays when v is NaN on x86, like the scalar form's v > acc ? v : acc */
                    acc[j] = is_max ? mlcc_f32v_max(v, acc[j]) : mlcc_f32v_add(acc[j], v);
                }
            }
        }
    }
    const mlcc_f32v s = mlcc_f32v_splat(scale);
    for (size_t j = 0; j < count; ++j) mlcc_f32v_store(y + c + j * LANES, is_max ? acc[j] : mlcc_f32v_mul(acc[j], s));
}

/* block_taps with a copy for three taps along w (a whole 3-wide window): its loop unrolled, no count kept */
static FORCE_INLINE void block_vector(int is_max, const mlcc_pool_geometry *g, const struct window *win,
                                      size_t channels, float scale, size_t c, size_t count, float *MLCC_RESTRICT y)
{
    const ptrdiff_t kw_n = win->k_hi[2] - win->k_lo[2];
    if (kw_n == 3)
        block_taps(is_max, g, win, channels, scale, c, count, 3, y);
    else
        block_taps(is_max, g, win, channels, scale, c, count, kw_n, y);
}

/* Every channel of one pixel (channels >= LANES): blocks of vectors, a pair, then single ones, then a last
 * partial vector overlapping the one before it. */
static FORCE_INLINE void pixel_vector(int is_max, const mlcc_pool_geometry *g, const struct window *win,
                                      size_t channels, float scale, float *MLCC_RESTRICT y)
{
    size_t c = 0;
    for (; c + BLOCK * LANES <= channels; c += BLOCK * LANES)
        block_vector(is_max, g, win, channels, scale, c, BLOCK, y);
    if (c + 2 * LANES <= channels) {  /* 24 channels in SIMD128: 4 + 2 vectors, not 4 + 1 + 1 */
        block_vector(is_max, g, win, channels, scale, c, 2, y);
        c += 2 * LANES;
    }
    for (; c + LANES <= channels; c += LANES) block_vector(is_max, g, win, channels, scale, c, 1, y);
    if (c < channels) block_vector(is_max, g, win, channels, scale, channels - LANES, 1, y);
}
#endif

/* Output rows [row0, row1) of every image together (row n * out[0] * out[1] + o0 * out[1] + o1). */
static FORCE_INLINE void pool_nhwc(int is_max, size_t channels, const mlcc_pool_geometry *g,
                                   bool count_include_pad, const float *x, float *MLCC_RESTRICT y, size_t row0,
                                   size_t row1)
{
    const size_t in_image = (size_t)(g->in[0] * g->in[1] * g->in[2]) * channels;
    /* the divisor counts the taps inside [lo, hi) per dim: the input, or the input and its pads */
    ptrdiff_t lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
        lo[d] = count_include_pad ? -g->pad_begin[d] : 0;
        hi[d] = count_include_pad ? g->in[d] + g->pad_end[d] : g->in[d];
    }
    struct window win;
    ptrdiff_t unused_lo, unused_hi, counted[3];  /* taps counted by the divisor per dim */
    const size_t rows = (size_t)(g->out[0] * g->out[1]);
    y += row0 * (size_t)g->out[2] * channels;
    for (size_t row = row0; row < row1; ++row) {
        const size_t n = row / rows;
        const ptrdiff_t o0 = (ptrdiff_t)(row % rows) / g->out[1], o1 = (ptrdiff_t)(row % rows) % g->out[1];
        win.x = x + n * in_image;
        {
            win.start[0] = o0 * g->stride[0] - g->pad_begin[0];
            taps_between(g, 0, o0, 0, g->in[0], &win.k_lo[0], &win.k_hi[0]);
            counted[0] = taps_between(g, 0, o0, lo[0], hi[0], &unused_lo, &unused_hi);
            {
                win.start[1] = o1 * g->stride[1] - g->pad_begin[1];
                taps_between(g, 1, o1, 0, g->in[1], &win.k_lo[1], &win.k_hi[1]);
                counted[1] = taps_between(g, 1, o1, lo[1], hi[1], &unused_lo, &unused_hi);
                for (ptrdiff_t o2 = 0; o2 < g->out[2]; ++o2, y += channels) {
                    win.start[2] = o2 * g->stride[2] - g->pad_begin[2];
                    taps_between(g, 2, o2, 0, g->in[2], &win.k_lo[2], &win.k_hi[2]);
                    float scale = 1.0f;
                    if (!is_max) {
                        counted[2] = taps_between(g, 2, o2, lo[2], hi[2], &unused_lo, &unused_hi);
                        const ptrdiff_t taps = counted[0] * counted[1] * counted[2];
                        scale = taps > 0 ? 1.0f / (float)taps : 0.0f;
                    }
#if MLCC_HAVE_F32V
                    if (channels >= LANES) {
                        pixel_vector(is_max, g, &win, channels, scale, y);
                        continue;
                    }
#endif
                    pixel_portable(is_max, g, &win, channels, scale, 0, channels, y);
                }
            }
        }
    }
}

void MLCC_ISA_NAME(mlcc_f32_pool_max_nhwc)(size_t images, size_t channels, const mlcc_pool_geometry *geometry,
                                           const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    pool_nhwc(1, channels, geometry, false, x, y, 0u, images * (size_t)(geometry->out[0] * geometry->out[1]));
}

void MLCC_ISA_NAME(mlcc_f32_pool_avg_nhwc)(size_t images, size_t channels, const mlcc_pool_geometry *geometry,
                                           bool count_include_pad, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    pool_nhwc(0, channels, geometry, count_include_pad, x, y, 0u,
              images * (size_t)(geometry->out[0] * geometry->out[1]));
}

void MLCC_ISA_NAME(mlcc_f32_pool_nhwc_rows)(bool is_max, size_t channels, const mlcc_pool_geometry *geometry,
                                            bool count_include_pad, const float *x, float *MLCC_RESTRICT y,
                                            size_t row0, size_t row1)
{
    if (is_max)
        pool_nhwc(1, channels, geometry, false, x, y, row0, row1);
    else
        pool_nhwc(0, channels, geometry, count_include_pad, x, y, row0, row1);
}

#if MLCC_HAVE_F32V
/* Vectors of channels c, c + LANES, ... (count of them, at most BLOCK) folded over every pixel of one image. */
static FORCE_INLINE void global_block(int is_max, size_t pixels, size_t channels, const float *x, float *y,
                                      size_t c, size_t count)
{
    mlcc_f32v acc[BLOCK];
    for (size_t j = 0; j < count; ++j) acc[j] = is_max ? mlcc_f32v_splat(-INFINITY) : mlcc_f32v_zero();
    for (size_t p = 0; p < pixels; ++p) {
        const float *xp = x + p * channels + c;
        for (size_t j = 0; j < count; ++j) {
            const mlcc_f32v v = mlcc_f32v_load(xp + j * LANES);
            acc[j] = is_max ? mlcc_f32v_max(v, acc[j]) : mlcc_f32v_add(acc[j], v);
        }
    }
    const mlcc_f32v scale = mlcc_f32v_splat(1.0f / (float)pixels);
    for (size_t j = 0; j < count; ++j)
        mlcc_f32v_store(y + c + j * LANES, is_max ? acc[j] : mlcc_f32v_mul(acc[j], scale));
}
#endif

static FORCE_INLINE void global_nhwc(int is_max, size_t images, size_t pixels, size_t channels, const float *x,
                                     float *MLCC_RESTRICT y)
{
    for (size_t n = 0; n < images; ++n, x += pixels * channels, y += channels) {
#if MLCC_HAVE_F32V
        if (channels >= LANES) {
            size_t c = 0;
            for (; c + BLOCK * LANES <= channels; c += BLOCK * LANES)
                global_block(is_max, pixels, channels, x, y, c, BLOCK);
            for (; c + LANES <= channels; c += LANES) global_block(is_max, pixels, channels, x, y, c, 1);
            if (c < channels) global_block(is_max, pixels, channels, x, y, channels - LANES, 1);  /* overlapping */
            continue;
        }
#endif
        for (size_t c = 0; c < channels; ++c) y[c] = is_max ? -INFINITY : 0.0f;
        for (size_t p = 0; p < pixels; ++p) {
            const float *MLCC_RESTRICT xp = x + p * channels;
            if (is_max) {
                for (size_t c = 0; c < channels; ++c) y[c] = xp[c] > y[c] ? xp[c] : y[c];
            } else {
                for (size_t c = 0; c < channels; ++c) y[c] += xp[c];
            }
        }
        if (!is_max) {
            const float scale = 1.0f / (float)pixels;
            for (size_t c = 0; c < channels; ++c) y[c] *= scale;
        }
    }
}

void MLCC_ISA_NAME(mlcc_f32_pool_global_max_nhwc)(size_t images, size_t pixels, size_t channels,
                                                  const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    global_nhwc(1, images, pixels, channels, x, y);
}

void MLCC_ISA_NAME(mlcc_f32_pool_global_avg_nhwc)(size_t images, size_t pixels, size_t channels,
                                                  const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    global_nhwc(0, images, pixels, channels, x, y);
}
