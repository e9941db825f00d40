/* Checks mlcc_f32_dwconv_nhwc__<isa> against its oracle mlcc_f32_dwconv_nhwc__reference: channel counts
 * around every vector width (1 .. 33, 48, 64; 300 and 523 in blocks), 1x1 images, pads on every side (wider
 * than the window too), strides and dilations per axis, 3x3 / 5x5 / 10x4 / 1x1 / 1-D / 3-D windows, with and
 * without bias, and fused epilogues (vector and scalar activations, a residual read per element or broadcast
 * per pixel).
 * Inputs are fenced with NaN, so a read outside them poisons the result; outputs are fenced with a
 * sentinel, so a write outside them is caught. Prints one line per failing case and a summary; exits 1
 * on any failure. Built and run by test_families.py (f32-dwconv/manifest.toml). */
#include <math.h>
#include <stdio.h>

#include "edges.h"
#include "mlcc/kernels/f32-conv.h"
#include "mlcc/kernels/f32-dwconv.h"

#define ELEMS 32768u

static float x_buf[ELEMS + 2 * FENCE], w_buf[ELEMS + 2 * FENCE], b_buf[ELEMS + 2 * FENCE],
    r_buf[ELEMS + 2 * FENCE], got_buf[ELEMS + 2 * FENCE], want[ELEMS];

struct shape {
    size_t in[3], kernel[3], stride[3], dilation[3], pad[3], pad_end[3];
};

static void check(const struct shape *s, size_t channels, int with_bias, int epilogue_kind)
{
    struct mlcc_f32_conv_geometry ref;
    struct mlcc_f32_conv_geometry g;
    size_t in = 1, out = 1, taps = 1;
    for (int d = 0; d < 3; ++d) {
        const size_t span = (s->kernel[d] - 1) * s->dilation[d] + 1;
        ref.in[d] = g.in[d] = s->in[d];
        ref.out[d] = g.out[d] = (s->in[d] + s->pad[d] + s->pad_end[d] - span) / s->stride[d] + 1;
        ref.kernel[d] = g.kernel[d] = s->kernel[d];
        ref.stride[d] = g.stride[d] = s->stride[d];
        ref.dilation[d] = g.dilation[d] = s->dilation[d];
        ref.pad[d] = g.pad[d] = s->pad[d];
        in *= g.in[d];
        out *= g.out[d];
        taps *= g.kernel[d];
    }
    if (in * channels > ELEMS || out * channels > ELEMS || taps * channels > ELEMS) {
        printf("case too large: in %zu out %zu taps %zu channels %zu\n", in, out, taps, channels);
        ++failures;
        return;
    }
    const float *x = fenced_random(x_buf, in * channels), *w = fenced_random(w_buf, taps * channels);
    const float *bias = with_bias ? fenced_random(b_buf, channels) : NULL;
    const float *residual = fenced_random(r_buf, out * channels);
    const struct mlcc_f32_epilogue e = conv_epilogue(epilogue_kind, residual, channels);
    const struct mlcc_f32_epilogue *epilogue = epilogue_kind ? &e : NULL;
    float *got = fenced_sentinel(got_buf, out * channels);
    mlcc_f32_dwconv_nhwc__reference(&ref, channels, x, w, bias, want, epilogue);
    MLCC_ISA_NAME(mlcc_f32_dwconv_nhwc)(&g, channels, x, w, bias, got, epilogue);
    ++cases;
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < out * channels; ++i) {
        if (!(fabsf(got[i] - want[i]) <= 1e-5f + 1e-5f * fabsf(want[i]))) {
            if (bad++ == 0) first = i;
        }
    }
    bad += fence_damage(got, out * channels);
    if (bad) {
        ++failures;
        printf("FAIL in %zux%zux%zu k %zux%zux%zu s %zu,%zu,%zu dil %zu,%zu,%zu pad %zu,%zu,%zu/%zu,%zu,%zu "
               "channels %zu bias %d epilogue %d: %zu bad, first [%zu] got %g want %g\n",
               s->in[0], s->in[1], s->in[2], s->kernel[0], s->kernel[1], s->kernel[2], s->stride[0], s->stride[1],
               s->stride[2], s->dilation[0], s->dilation[1], s->dilation[2], s->pad[0], s->pad[1], s->pad[2],
               s->pad_end[0], s->pad_end[1], s->pad_end[2], channels, with_bias, epilogue_kind, bad, first,
               (double)got[first], (double)want[first]);
    }
}

static const struct shape shapes[] = {
    /* in            kernel     stride     dilation   pad        pad_end */
    {{1, 1, 1}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},     /* 1x1 image */
    {{1, 2, 2}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 5, 7}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 6, 5}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},     /* narrow rows: one tile each */
    {{1, 3, 4}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 4, 6}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},     /* border tiles 3 + 3, 4 + 4 */
    {{1, 3, 8}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 9, 13}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},    /* tiles and a remainder */
    {{1, 6, 11}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},    /* no padding */
    {{1, 6, 10}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 2, 0}, {0, 0, 2}},    /* one side each */
    {{1, 9, 13}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 10, 14}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 1, 1}},   /* SAME_UPPER, stride 2 */
    {{1, 8, 12}, {1, 3, 3}, {1, 1, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 8, 12}, {1, 3, 3}, {1, 2, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 10, 17}, {1, 3, 3}, {1, 3, 3}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 9, 14}, {1, 3, 3}, {1, 1, 1}, {1, 2, 2}, {0, 2, 2}, {0, 2, 2}},    /* dilation 2 */
    {{1, 9, 14}, {1, 3, 3}, {1, 1, 1}, {1, 2, 1}, {0, 2, 1}, {0, 2, 1}},    /* dilation along h only */
    {{1, 4, 5}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 3, 3}, {0, 3, 3}},     /* windows wholly in the padding */
    {{1, 11, 12}, {1, 5, 5}, {1, 1, 1}, {1, 1, 1}, {0, 2, 2}, {0, 2, 2}},
    {{1, 11, 12}, {1, 5, 5}, {1, 2, 2}, {1, 1, 1}, {0, 2, 2}, {0, 1, 1}},
    {{1, 25, 9}, {1, 10, 4}, {1, 1, 1}, {1, 1, 1}, {0, 4, 1}, {0, 5, 2}},   /* DS-CNN style */
    {{1, 7, 9}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},
    {{1, 1, 20}, {1, 1, 5}, {1, 1, 2}, {1, 1, 1}, {0, 0, 2}, {0, 0, 2}},    /* 1-D */
    {{4, 5, 6}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},     /* 3-D */
    {{5, 6, 7}, {3, 1, 3}, {2, 1, 2}, {1, 1, 1}, {1, 0, 1}, {0, 0, 1}},
};

static const size_t channel_counts[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 15, 16, 17, 20, 24, 31, 32, 33, 48};

int main(void)
{
    const size_t nshapes = sizeof shapes / sizeof shapes[0], ncounts = sizeof channel_counts / sizeof channel_counts[0];
    for (size_t i = 0; i < nshapes; ++i) {
        for (size_t j = 0; j < ncounts; ++j) {
            check(&shapes[i], channel_counts[j], 1, 0);
            check(&shapes[i], channel_counts[j], (int)(j & 1u), 1 + (int)((i + j) % 5u));
        }
    }
    /* channels split into blocks (AVX2's channels-innermost rows), the last block taking a short rest */
    static const struct shape wide = {{1, 4, 9}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}};
    static const size_t wide_counts[] = {300, 523};
    for (size_t j = 0; j < 2; ++j) {
        check(&wide, wide_counts[j], 1, 0);
        check(&wide, wide_counts[j], (int)j, 2 + (int)j);  /* Clip; a residual, then HardSwish */
    }
    /* DS-CNN's 5-wide rows at 64 channels: the whole row one tile (AVX2's channels-innermost narrow rows) */
    static const struct shape narrow = {{1, 6, 5}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}};
    check(&narrow, 64, 1, 0);
    check(&narrow, 64, 0, 2);  /* Clip */
    check(&narrow, 64, 1, 3);  /* a residual, then HardSwish (a pass over the stored row) */
    printf("%d of %d cases differ\n", failures, cases);
    return failures != 0;
}
