/* Checks f32-winograd's factored transforms (mlcc_f32_winograd_{input,output}__<isa>) against the matrix
 * oracles (__reference): channel counts around every vector width (1 .. 33, 64), images smaller than a
 * tile and not a multiple of 4, pads on every side, 3x3 kernels and each piece of a 5x5 one, a range of
 * tiles from the middle, with and without bias, input and output row pitches wider than the channels (a
 * group's channels: the others are NaN), and fused epilogues (vector and scalar activations, a
 * residual read per element, broadcast per pixel, or the output itself). Inputs are fenced with NaN, so a
 * read outside them poisons the result; outputs are fenced with a sentinel, so a write outside them is
 * caught. Prints one line per failing case and a summary; exits 1 on any failure. Built and run by
 * test_families.py (f32-winograd/manifest.toml). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "edges.h"
#include "mlcc/kernels/f32-winograd.h"

#define ELEMS 65536u

static float x_buf[ELEMS + 2 * FENCE], m_buf[ELEMS + 2 * FENCE], b_buf[ELEMS + 2 * FENCE],
    r_buf[ELEMS + 2 * FENCE], got_buf[ELEMS + 2 * FENCE], want_buf[ELEMS + 2 * FENCE];

/* The factored and matrix forms round differently: a few ulp of the values summed (up to about 100). */
static int differs(float got, float want)
{
    if (isnan(want)) return !isnan(got);
    return !(fabsf(got - want) <= 1e-4f * (1.0f + fabsf(want)));
}

static int compare(const char *what, const float *got, const float *want, size_t n, const char *label)
{
    for (size_t i = 0; i < n + 2 * FENCE; ++i) {
        if (differs(got[i], want[i])) {
            printf("%s %s: element %ld got %g want %g\n", label, what, (long)i - (long)FENCE, got[i], want[i]);
            return 1;
        }
    }
    return 0;
}

static void check(size_t h, size_t w, const size_t pad[4], size_t side, size_t piece, size_t channels,
                  int with_bias, int epilogue_kind, size_t extra_pitch, int sub_range)
{
    struct mlcc_f32_conv_geometry g = {{1, h, w}, {1, h + pad[0] + pad[2] + 1 - side, w + pad[1] + pad[3] + 1 - side},
                                       {1, side, side}, {1, 1, 1}, {1, 1, 1}, {0, pad[0], pad[1]}};
    const size_t tiles = (g.out[1] + 3) / 4 * ((g.out[2] + 3) / 4);
    const size_t t0 = sub_range && tiles > 2 ? 1 : 0, nt = sub_range && tiles > 2 ? tiles - 2 : tiles;
    /* a tile stride past the channels: a 5x5 kernel's four 3x3 inputs side by side */
    const size_t tile_stride = channels + extra_pitch, point_stride = nt * tile_stride + 3;
    const size_t y_pitch = channels + extra_pitch, x_pitch = channels + extra_pitch;
    const size_t pixels = g.out[1] * g.out[2], y_elems = (pixels - 1) * y_pitch + channels;
    const size_t x_elems = (h * w - 1) * x_pitch + channels;
    char label[160];
    snprintf(label, sizeof label, "in %zux%zu pads %zu,%zu,%zu,%zu kernel %zu piece %zu channels %zu bias %d epilogue %d pitch +%zu tiles %zu+%zu",
             h, w, pad[0], pad[1], pad[2], pad[3], side, piece, channels, with_bias, epilogue_kind, extra_pitch, t0, nt);
    if (x_elems > ELEMS || 36 * point_stride > ELEMS || y_elems > ELEMS) {
        printf("case too large: %s\n", label);
        ++failures;
        return;
    }
    ++cases;
    float *x = fenced_random(x_buf, x_elems);
    for (size_t i = 0; i < x_elems; ++i)
        if (i % x_pitch >= channels) x[i] = NAN;  /* the other groups' channels: never read */
    /* input transform: unwritten gaps between points stay sentinels in both */
    float *got = fenced_sentinel(got_buf, 36 * point_stride), *want = fenced_sentinel(want_buf, 36 * point_stride);
    MLCC_ISA_NAME(mlcc_f32_winograd_input)(&g, piece, channels, x, x_pitch, t0, nt, got, point_stride, tile_stride);
    mlcc_f32_winograd_input__reference(&g, piece, channels, x, x_pitch, t0, nt, want, point_stride, tile_stride);
    failures += compare("input", got - FENCE, want - FENCE, 36 * point_stride, label);

    /* output transform, from random products */
    const float *m = fenced_random(m_buf, 36 * point_stride);
    const float *bias = with_bias ? fenced_random(b_buf, channels) : NULL;
    float *residual = fenced_random(r_buf, pixels * channels);
    struct mlcc_f32_epilogue e = {MLCC_ACTIVATION_NONE, 0.0f, 0.0f, NULL, 0, 0};
    switch (epilogue_kind) {
    case 1: e.activation = MLCC_ACTIVATION_RELU; break;
    case 2: e.activation = MLCC_ACTIVATION_CLIP; e.a = -0.5f; e.b = 0.5f; e.residual = residual;
            e.residual_rs = channels; e.residual_cs = 1; break;
    case 3: e.activation = MLCC_ACTIVATION_SIGMOID; e.residual = residual; e.residual_rs = 1; e.residual_cs = 0; break;
    case 4: e.activation = MLCC_ACTIVATION_HARD_SWISH; break;
    default: break;
    }
    const struct mlcc_f32_epilogue *epilogue = epilogue_kind ? &e : NULL;
    if (epilogue_kind == 5) {  /* y is the residual: each element read before it is overwritten */
        float *y_got = fenced_random(got_buf, y_elems);
        memcpy(want_buf, got_buf, sizeof(float) * (y_elems + 2 * FENCE));
        float *y_want = want_buf + FENCE;
        struct mlcc_f32_epilogue in_place = {MLCC_ACTIVATION_RELU, 0.0f, 0.0f, y_got, y_pitch, 1};
        MLCC_ISA_NAME(mlcc_f32_winograd_output)(&g, channels, m, point_stride, t0, nt, bias, y_got, y_pitch, &in_place);
        in_place.residual = y_want;
        mlcc_f32_winograd_output__reference(&g, channels, m, point_stride, t0, nt, bias, y_want, y_pitch, &in_place);
        failures += compare("output in place", y_got - FENCE, y_want - FENCE, y_elems, label);
        return;
    }
    got = fenced_sentinel(got_buf, y_elems);
    want = fenced_sentinel(want_buf, y_elems);
    MLCC_ISA_NAME(mlcc_f32_winograd_output)(&g, channels, m, point_stride, t0, nt, bias, got, y_pitch, epilogue);
    mlcc_f32_winograd_output__reference(&g, channels, m, point_stride, t0, nt, bias, want, y_pitch, epilogue);
    failures += compare("output", got - FENCE, want - FENCE, y_elems, label);
}

int main(void)
{
    static const size_t sizes[][2] = {{3, 3}, {4, 5}, {8, 8}, {9, 13}, {14, 14}, {17, 6}};
    static const size_t pads[][4] = {{1, 1, 1, 1}, {0, 0, 0, 0}, {2, 0, 1, 2}, {0, 2, 2, 0}};
    static const size_t channel_counts[] = {1, 3, 4, 5, 8, 15, 16, 17, 31, 33, 64};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s)
        for (size_t p = 0; p < sizeof pads / sizeof pads[0]; ++p)
            for (size_t c = 0; c < sizeof channel_counts / sizeof channel_counts[0]; ++c) {
                const size_t h = sizes[s][0], w = sizes[s][1], channels = channel_counts[c];
                /* every other case a 5x5 kernel's piece (c + s) % 4 */
                const size_t side = (s + p + c) % 2 ? 5 : 3, piece = side == 5 ? (c + s) % 4 : 0;
                if (h + pads[p][0] + pads[p][2] < side || w + pads[p][1] + pads[p][3] < side) continue;
                const int variant = (int)((s + p + c) % 6);
                check(h, w, pads[p], side, piece, channels, variant % 2 == 0, variant, (s + c) % 3 == 0 ? 5 : 0,
                      (p + c) % 2);
            }
    printf("%d of %d cases differ\n", failures, cases);
    return failures != 0;
}
