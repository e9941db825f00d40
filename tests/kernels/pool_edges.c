/* Checks the f32-pool channels-last kernels on the SIMD shim (mlcc_f32_pool_*_nhwc__<isa>) against their
 * scalar forms (mlcc_f32_pool_*_nhwc__reference), which they match bit for bit: max and average (with and
 * without count_include_pad) over channel counts around every vector width, 1x1 images, pads on every side
 * (windows wholly in the padding too), strides, dilations, 1-D and 3-D windows, two images; global max and
 * average over 1 to 60 pixels. Inputs are fenced with NaN and outputs with a sentinel, so reads and writes
 * outside them are caught. Prints one line per failing case and a summary; exits 1 on any failure. Built
 * and run by test_families.py (f32-pool/manifest.toml). */
#include <math.h>
#include <stdio.h>

#include "edges.h"
#include "mlcc/kernels/f32-pool.h"

#define ELEMS 32768u

static float x_buf[ELEMS + 2 * FENCE], got_buf[ELEMS + 2 * FENCE], want[ELEMS];

/* 1 when got matches want exactly and nothing was written around it */
static int same(const float *got, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (got[i] != want[i]) return 0;
    return fence_damage(got, n) == 0;
}

struct shape {
    ptrdiff_t in[3], kernel[3], stride[3], dilation[3], pad_begin[3], pad_end[3];
};

/* kind: 0 max, 1 average, 2 average counting the pads */
static void check_window(const struct shape *s, size_t channels, int kind)
{
    const size_t images = 2;
    mlcc_pool_geometry g;
    size_t in = images, out = images;
    for (int d = 0; d < 3; ++d) {
        const ptrdiff_t span = (s->kernel[d] - 1) * s->dilation[d] + 1;
        g.in[d] = s->in[d];
        g.out[d] = (s->in[d] + s->pad_begin[d] + s->pad_end[d] - span) / s->stride[d] + 1;
        g.kernel[d] = s->kernel[d];
        g.stride[d] = s->stride[d];
        g.dilation[d] = s->dilation[d];
        g.pad_begin[d] = s->pad_begin[d];
        g.pad_end[d] = s->pad_end[d];
        in *= (size_t)g.in[d];
        out *= (size_t)g.out[d];
    }
    const float *x = fenced_random(x_buf, in * channels);
    float *got = fenced_sentinel(got_buf, out * channels);
    if (kind == 0) {
        mlcc_f32_pool_max_nhwc__reference(images, channels, &g, x, want);
        MLCC_ISA_NAME(mlcc_f32_pool_max_nhwc)(images, channels, &g, x, got);
    } else {
        mlcc_f32_pool_avg_nhwc__reference(images, channels, &g, kind == 2, x, want);
        MLCC_ISA_NAME(mlcc_f32_pool_avg_nhwc)(images, channels, &g, kind == 2, x, got);
    }
    ++cases;
    if (!same(got, out * channels)) {
        ++failures;
        printf("FAIL %s in %tdx%tdx%td k %tdx%tdx%td s %td,%td,%td dil %td,%td,%td pad %td,%td,%td/%td,%td,%td "
               "channels %zu\n", kind == 0 ? "max" : kind == 1 ? "avg" : "avg+pads", s->in[0], s->in[1], s->in[2],
               s->kernel[0], s->kernel[1], s->kernel[2], s->stride[0], s->stride[1], s->stride[2], s->dilation[0],
               s->dilation[1], s->dilation[2], s->pad_begin[0], s->pad_begin[1], s->pad_begin[2], s->pad_end[0],
               s->pad_end[1], s->pad_end[2], channels);
    }
}

static void check_global(size_t pixels, size_t channels, int is_max)
{
    const size_t images = 2;
    const float *x = fenced_random(x_buf, images * pixels * channels);
    float *got = fenced_sentinel(got_buf, images * channels);
    if (is_max) {
        mlcc_f32_pool_global_max_nhwc__reference(images, pixels, channels, x, want);
        MLCC_ISA_NAME(mlcc_f32_pool_global_max_nhwc)(images, pixels, channels, x, got);
    } else {
        mlcc_f32_pool_global_avg_nhwc__reference(images, pixels, channels, x, want);
        MLCC_ISA_NAME(mlcc_f32_pool_global_avg_nhwc)(images, pixels, channels, x, got);
    }
    ++cases;
    if (!same(got, images * channels)) {
        ++failures;
        printf("FAIL global %s pixels %zu channels %zu\n", is_max ? "max" : "avg", pixels, channels);
    }
}

static const struct shape shapes[] = {
    /* in            kernel     stride     dilation   pad_begin  pad_end */
    {{1, 1, 1}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},     /* 1x1 image */
    {{1, 7, 9}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 8, 8}, {1, 2, 2}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},
    {{1, 6, 10}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 2, 0}, {0, 0, 2}},    /* one side each */
    {{1, 7, 7}, {1, 7, 7}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},     /* the whole image */
    {{1, 9, 11}, {1, 3, 3}, {1, 1, 2}, {1, 2, 2}, {0, 2, 1}, {0, 2, 2}},    /* dilation */
    {{1, 4, 5}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 3, 3}, {1, 3, 3}, {1, 2, 2}, {1, 3, 3}, {0, 2, 2}, {0, 2, 2}},     /* taps mostly in the padding */
    {{1, 1, 1}, {1, 2, 2}, {1, 1, 1}, {1, 2, 2}, {0, 1, 1}, {0, 1, 1}},     /* wholly in the padding */
    {{1, 1, 20}, {1, 1, 5}, {1, 1, 3}, {1, 1, 1}, {0, 0, 2}, {0, 0, 1}},    /* 1-D */
    {{4, 5, 6}, {2, 3, 3}, {2, 1, 2}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}},     /* 3-D */
};

static const size_t channel_counts[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 24, 31, 32, 33, 48, 68};
static const size_t pixel_counts[] = {1, 2, 7, 49, 60};

int main(void)
{
    const size_t nshapes = sizeof shapes / sizeof shapes[0], ncounts = sizeof channel_counts / sizeof channel_counts[0];
    for (size_t i = 0; i < nshapes; ++i)
        for (size_t j = 0; j < ncounts; ++j)
            for (int kind = 0; kind < 3; ++kind) check_window(&shapes[i], channel_counts[j], kind);
    for (size_t i = 0; i < sizeof pixel_counts / sizeof pixel_counts[0]; ++i)
        for (size_t j = 0; j < ncounts; ++j)
            for (int is_max = 0; is_max < 2; ++is_max) check_global(pixel_counts[i], channel_counts[j], is_max);
    printf("%d of %d cases differ\n", failures, cases);
    return failures != 0;
}
