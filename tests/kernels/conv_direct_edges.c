/* Checks mlcc_f32_conv_direct_nhwc__<isa> against a naive convolution over unpacked weights: 1 to 5 and 34
 * input channels, some read from wider pixels (a group's slice), output channel counts around every vector width
 * (1 .. 33, 48, 64) with panels of 1 to 4 of the shim's vectors, and a width of 6 floats, which __<isa> hands to
 * __reference (so the oracle is checked on every target too, and alone where there is no shim), 1x1 images, pads on every side (wider than the
 * window too), strides and dilations per axis, 3x3 / 7x7 / 10x4 / 1-D / 3-D windows, with and without
 * bias, output rows wider than the channels (a slice of a Concat), channels read through a permuting table
 * (some of its offsets before x: a group reading another group's channels), and fused epilogues (vector and scalar
 * activations, a residual read per element or broadcast per pixel). Inputs are fenced with NaN, so a read
 * outside them poisons the result; outputs are fenced with a sentinel, so a write outside them is caught.
 * Prints one line per failing case and a summary; exits 1 on any failure. Built and run by
 * test_families.py (f32-conv/manifest.toml). */
#include <math.h>
#include <stdio.h>

#include "edges.h"
#include "mlcc/kernels/f32-conv.h"
#include "mlcc/simd.h"

/* nr (widths[] below): 1 to 4 of the shim's vectors (4 floats a portable build's), and 6, which every shim hands to __reference:
 * a width no shim runs would check the reference alone, as 6 does */
#if MLCC_HAVE_F32V
#define WIDTH_LANES MLCC_F32V_LANES
#else
#define WIDTH_LANES 4u
#endif

#define ELEMS 131072u

static float x_buf[ELEMS + 2 * FENCE], w_raw[ELEMS], w_buf[ELEMS + 2 * FENCE], b_buf[ELEMS + 2 * FENCE],
    r_buf[ELEMS + 2 * FENCE], got_buf[ELEMS + 2 * FENCE], want[ELEMS],
    magnitude[ELEMS];

struct shape {
    size_t in[3], kernel[3], stride[3], dilation[3], pad[3], pad_end[3];
};

/* want = the convolution over w_raw[o][t] (t = (kd, kh, kw, c)), then the epilogue, row pitch `pitch`;
 * magnitude = the sum of the absolute products: rounding in another order is bounded by a share of it */
static void naive(const struct mlcc_f32_conv_geometry *g, size_t channels, size_t xs, const size_t *source,
                  size_t out_channels, const float *x, const float *bias, size_t pitch,
                  const struct mlcc_f32_epilogue *e)
{
    const size_t k = g->kernel[0] * g->kernel[1] * g->kernel[2] * channels;
    size_t p = 0;
    for (long od = 0; od < (long)g->out[0]; ++od)
        for (long oh = 0; oh < (long)g->out[1]; ++oh)
            for (long ow = 0; ow < (long)g->out[2]; ++ow, ++p) {
                for (size_t o = 0; o < out_channels; ++o) {
                    float sum = bias == NULL ? 0.0f : bias[o], sum_abs = fabsf(sum);
                    size_t t = 0;
                    for (long kd = 0; kd < (long)g->kernel[0]; ++kd)
                        for (long kh = 0; kh < (long)g->kernel[1]; ++kh)
                            for (long kw = 0; kw < (long)g->kernel[2]; ++kw, t += channels) {
                                const long id = od * (long)g->stride[0] + kd * (long)g->dilation[0] - (long)g->pad[0];
                                const long ih = oh * (long)g->stride[1] + kh * (long)g->dilation[1] - (long)g->pad[1];
                                const long iw = ow * (long)g->stride[2] + kw * (long)g->dilation[2] - (long)g->pad[2];
                                if (id < 0 || ih < 0 || iw < 0 || id >= (long)g->in[0] || ih >= (long)g->in[1]
                                    || iw >= (long)g->in[2])
                                    continue;
                                const float *xp = x + (((size_t)id * g->in[1] + (size_t)ih) * g->in[2] + (size_t)iw) * xs;
                                for (size_t c = 0; c < channels; ++c) {
                                    const float xc = xp[source[c]];
                                    sum += xc * w_raw[o * k + t + c];
                                    sum_abs += fabsf(xc * w_raw[o * k + t + c]);
                                }
                            }
                    want[p * pitch + o] = sum;
                    magnitude[p * pitch + o] = sum_abs;
                }
                mlcc_f32_epilogue_apply(e, 1, out_channels, want + p * pitch, pitch, p, 0);
            }
}

static size_t compare(const float *got, size_t pixels, size_t pitch, size_t out_channels, size_t *first)
{
    size_t bad = 0;
    for (size_t p = 0; p < pixels; ++p)
        for (size_t i = p * pitch; i < p * pitch + pitch; ++i) {
            const int live = i - p * pitch < out_channels;
            if (live ? !(fabsf(got[i] - want[i]) <= 1e-5f * (1.0f + magnitude[i])) : got[i] != SENTINEL) {
                if (bad++ == 0) *first = i;
            }
        }
    return bad + fence_damage(got, pixels * pitch);
}

/* permuted: channel c read at a shuffled place among the pixel's xs, through offsets from x + 1 (so some are
 * negative) */
static void check(const struct shape *s, size_t channels, size_t xs, size_t out_channels, size_t nr,
                  size_t extra_pitch, int with_bias, int epilogue_kind, int permuted)
{
    struct mlcc_f32_conv_geometry g;
    size_t in = 1, out = 1, taps = 1;
    for (int d = 0; d < 3; ++d) {
        const size_t span = (s->kernel[d] - 1) * s->dilation[d] + 1;
        g.in[d] = s->in[d];
        g.out[d] = (s->in[d] + s->pad[d] + s->pad_end[d] - span) / s->stride[d] + 1;
        g.kernel[d] = s->kernel[d];
        g.stride[d] = s->stride[d];
        g.dilation[d] = s->dilation[d];
        g.pad[d] = s->pad[d];
        in *= g.in[d];
        out *= g.out[d];
        taps *= g.kernel[d];
    }
    const size_t k = taps * channels, panels = (out_channels + nr - 1) / nr, pitch = out_channels + extra_pitch;
    if (in * xs > ELEMS || out * pitch > ELEMS || panels * nr * k > ELEMS) {
        printf("case too large: in %zu out %zu k %zu channels %zu\n", in, out, k, out_channels);
        ++failures;
        return;
    }
    const float *x = fenced_random(x_buf, in * xs);
    size_t source[64], order[64];
    int32_t offsets[64];
    for (size_t c = 0; c < xs; ++c) order[c] = c;
    for (size_t c = xs; permuted && c > 1; --c) {  /* Fisher-Yates on the harness's seeded generator */
        const size_t pick = (size_t)((uniform() * 0.5f + 0.5f) * (float)c) % c, kept = order[c - 1];
        order[c - 1] = order[pick];
        order[pick] = kept;
    }
    for (size_t c = 0; c < channels; ++c) {
        source[c] = order[c];
        offsets[c] = (int32_t)order[c] - 1;
    }
    for (size_t i = 0; i < out_channels * k; ++i) w_raw[i] = uniform();
    float *w = w_buf + FENCE;  /* packed: panel j, row t, column o % nr; zeros past out_channels */
    for (size_t i = 0; i < panels * nr * k + 2 * FENCE; ++i) w_buf[i] = NAN;
    for (size_t j = 0; j < panels; ++j)
        for (size_t t = 0; t < k; ++t)
            for (size_t o = 0; o < nr; ++o)
                w[(j * k + t) * nr + o] = j * nr + o < out_channels ? w_raw[(j * nr + o) * k + t] : 0.0f;
    const float *bias = with_bias ? fenced_random(b_buf, out_channels) : NULL;
    const float *residual = fenced_random(r_buf, out * pitch);
    const struct mlcc_f32_epilogue e = conv_epilogue(epilogue_kind, residual, pitch);
    const struct mlcc_f32_epilogue *epilogue = epilogue_kind ? &e : NULL;
    naive(&g, channels, xs, source, out_channels, x, bias, pitch, epilogue);
    const int32_t *x_channels = permuted ? offsets : NULL;
    const float *x_at = permuted ? x + 1 : x;
    {
        float *got = fenced_sentinel(got_buf, out * pitch);
        MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc)(&g, channels, xs, x_channels, out_channels, nr, x_at, w, bias, got,
                                                 pitch, epilogue);
        ++cases;
        size_t first = 0;
        const size_t bad = compare(got, out, pitch, out_channels, &first);
        if (bad) {
            ++failures;
            printf("FAIL %s in %zux%zux%zu k %zux%zux%zu s %zu,%zu,%zu dil %zu,%zu,%zu pad %zu,%zu,%zu/%zu,%zu,%zu "
                   "channels %zu (of %zu%s) -> %zu nr %zu pitch %zu bias %d epilogue %d: %zu bad, first [%zu] got %g want %g\n",
                   MLCC_HAVE_F32V && nr % WIDTH_LANES == 0 ? "simd" : "reference", s->in[0], s->in[1], s->in[2], s->kernel[0], s->kernel[1], s->kernel[2],
                   s->stride[0], s->stride[1], s->stride[2], s->dilation[0], s->dilation[1], s->dilation[2],
                   s->pad[0], s->pad[1], s->pad[2], s->pad_end[0], s->pad_end[1], s->pad_end[2], channels,
                   xs, permuted ? ", permuted" : "", out_channels, nr, pitch, with_bias, epilogue_kind, bad, first, (double)got[first],
                   (double)want[first]);
        }
    }
}

static const struct shape shapes[] = {
    /* in            kernel     stride     dilation   pad        pad_end */
    {{1, 1, 1}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},     /* 1x1 image */
    {{1, 2, 3}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 9, 13}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},    /* blocks and an overlapping one */
    {{1, 12, 31}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},   /* a stem, stride 2 */
    {{1, 12, 31}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}},   /* unpadded, the last column unread */
    {{1, 10, 34}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 1, 1}},   /* SAME_UPPER, stride 2 */
    {{1, 6, 20}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 2, 0}, {0, 0, 2}},    /* one side each */
    {{1, 8, 22}, {1, 3, 3}, {1, 1, 3}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}},
    {{1, 9, 20}, {1, 3, 3}, {1, 1, 1}, {1, 2, 2}, {0, 2, 2}, {0, 2, 2}},    /* dilation 2 */
    {{1, 4, 5}, {1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 3, 3}, {0, 3, 3}},     /* windows wholly in the padding */
    {{1, 15, 29}, {1, 7, 7}, {1, 2, 2}, {1, 1, 1}, {0, 3, 3}, {0, 3, 3}},   /* a 7x7 stem */
    {{1, 49, 10}, {1, 10, 4}, {1, 2, 2}, {1, 1, 1}, {0, 4, 1}, {0, 5, 2}},  /* DS-CNN's stem */
    {{1, 1, 40}, {1, 1, 5}, {1, 1, 2}, {1, 1, 1}, {0, 0, 2}, {0, 0, 2}},    /* 1-D */
    {{4, 5, 12}, {3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}},    /* 3-D */
    {{5, 6, 14}, {3, 1, 3}, {2, 1, 2}, {1, 1, 1}, {1, 0, 1}, {0, 0, 1}},
};

static const size_t channel_counts[] = {1, 2, 3, 4, 5, 34};
static const size_t out_counts[] = {1, 3, 4, 7, 8, 9, 16, 17, 24, 32, 33, 48, 64};
static const size_t widths[] = {WIDTH_LANES, 2 * WIDTH_LANES, 3 * WIDTH_LANES, 4 * WIDTH_LANES, 6};

int main(void)
{
    const size_t nshapes = sizeof shapes / sizeof shapes[0];
    const size_t nchannels = sizeof channel_counts / sizeof channel_counts[0];
    const size_t nouts = sizeof out_counts / sizeof out_counts[0], nwidths = sizeof widths / sizeof widths[0];
    size_t turn = 0;
    for (size_t i = 0; i < nshapes; ++i)
        for (size_t c = 0; c < nchannels; ++c)
            for (size_t o = 0; o < nouts; ++o, ++turn) {
                /* the widest channel count costs most and walks the same edges: a third of the output counts */
                if (channel_counts[c] > 8 && o % 3 != i % 3) continue;
                const size_t nr = widths[turn % nwidths];
                /* pixels wider than the channels read: one group of a grouped convolution */
                const size_t xs = channel_counts[c] + (turn % 4 == 1 ? 3 : 0);
                check(&shapes[i], channel_counts[c], channel_counts[c], out_counts[o], nr, 0, 1, 0, turn % 7 == 3);
                check(&shapes[i], channel_counts[c], xs, out_counts[o], widths[(turn + 3) % nwidths],
                      turn % 3 == 0 ? 5 : 0, (int)(turn & 1u), 1 + (int)(turn % 5u), turn % 4 == 1);
            }
    printf("%d of %d cases differ\n", failures, cases);
    return failures != 0;
}
