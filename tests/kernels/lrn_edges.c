/* Checks the f32-lrn kernels on the SIMD shim (mlcc_f32_lrn_*__<isa>) against their scalar forms
 * (mlcc_f32_lrn_*__reference), which they match bit for bit (Armv7 NEON: within 6 ulp, see MAX_ULP): channels-last and channels-first, channel and
 * inner counts around every vector width, windows of 1 to 9 channels (odd and even, wider than the
 * channels, and one wider than the padded copy holds), beta 0.75 and others, bias and alpha from the zoo's
 * and larger. Inputs are fenced with NaN and outputs with a sentinel, so reads and writes outside them are
 * caught. Prints one line per failing case and a summary; exits 1 on any failure. Built and run by
 * test_families.py (f32-lrn/manifest.toml). */
#include <math.h>
#include <stdio.h>

#include "edges.h"
#include "mlcc/kernels/f32-lrn.h"

#define ELEMS 16384u

static float x_buf[ELEMS + 2 * FENCE], got_buf[ELEMS + 2 * FENCE], want[ELEMS];

/* n random values in [-4, 4) fenced by NaN on both sides; returns the first */
static const float *fenced_input(size_t n)
{
    float *x = fenced_random(x_buf, n);
    for (size_t i = 0; i < n; ++i) x[i] *= 4.0f;
    return x;
}

/* Armv7: NEON fuses the window's multiply-adds where the scalar code (VFP) rounds twice, and has no vector
 * division (mlcc_f32v_div is a refined reciprocal, measured within 3 ulp of a / b): 5 ulp measured */
#if defined(__ARM_NEON) && !defined(__aarch64__)
#define MAX_ULP 6.0f
#else
#define MAX_ULP 0.0f
#endif
static float worst_ulp;

/* 1 when got matches want (bit for bit, or within MAX_ULP) and nothing was written around it */
static int same(const float *got, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        if (got[i] == want[i]) continue;
        const float ulp = nextafterf(fabsf(want[i]), INFINITY) - fabsf(want[i]);
        const float err = fabsf(got[i] - want[i]) / ulp;
        if (!(err <= MAX_ULP)) return 0;
        if (err > worst_ulp) worst_ulp = err;
    }
    return fence_damage(got, n) == 0;
}

struct params {
    size_t size;
    float alpha, beta, bias;
};

static void check_nhwc(size_t pixels, size_t channels, const struct params *q)
{
    const size_t n = pixels * channels;
    const float alpha_over_size = q->alpha / (float)q->size;
    const float *x = fenced_input(n);
    float *got = fenced_sentinel(got_buf, n);
    mlcc_f32_lrn_nhwc__reference(pixels, channels, q->size, alpha_over_size, q->beta, q->bias, x, want);
    MLCC_ISA_NAME(mlcc_f32_lrn_nhwc)(pixels, channels, q->size, alpha_over_size, q->beta, q->bias, x, got);
    ++cases;
    if (!same(got, n)) {
        ++failures;
        printf("nhwc pixels %zu channels %zu size %zu alpha %g beta %g bias %g differs\n", pixels, channels,
               q->size, (double)q->alpha, (double)q->beta, (double)q->bias);
    }
}

static void check_nchw(size_t batch, size_t channels, size_t inner, const struct params *q)
{
    const size_t n = batch * channels * inner;
    const float alpha_over_size = q->alpha / (float)q->size;
    const float *x = fenced_input(n);
    float *got = fenced_sentinel(got_buf, n);
    mlcc_f32_lrn_nchw__reference(batch, channels, inner, q->size, alpha_over_size, q->beta, q->bias, x, want);
    MLCC_ISA_NAME(mlcc_f32_lrn_nchw)(batch, channels, inner, q->size, alpha_over_size, q->beta, q->bias, x, got);
    ++cases;
    if (!same(got, n)) {
        ++failures;
        printf("nchw batch %zu channels %zu inner %zu size %zu alpha %g beta %g bias %g differs\n", batch, channels,
               inner, q->size, (double)q->alpha, (double)q->beta, (double)q->bias);
    }
}

int main(void)
{
    static const struct params params[] = {
        {5, 1e-4f, 0.75f, 1.0f},  /* AlexNet, ZFNet, GoogLeNet */
        {5, 0.5f, 0.75f, 2.0f},
        {3, 0.3f, 0.75f, 0.5f},
        {1, 2.0f, 0.75f, 1.0f},
        {2, 0.4f, 0.75f, 1.0f},
        {4, 0.4f, 0.6f, 1.5f},
        {7, 0.2f, 0.5f, 1.0f},
        {9, 1.0f, 0.75f, 1.0f},
        {6, 0.1f, 1.0f, 0.25f},
        {67, 0.5f, 0.75f, 1.0f},  /* a halo wider than lrn-simd.c's padded copy */
    };
    static const size_t channels[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 40, 47, 48, 49, 64, 96, 100};
    for (size_t p = 0; p < sizeof params / sizeof params[0]; ++p) {
        for (size_t c = 0; c < sizeof channels / sizeof channels[0]; ++c) {
            check_nhwc(3, channels[c], &params[p]);
            check_nchw(2, channels[c] % 13 + 1, channels[c], &params[p]);
        }
        check_nhwc(1, 256, &params[p]);
        check_nchw(1, 20, 97, &params[p]);
    }
    printf("worst %g ulp\n%d of %d cases differ\n", (double)worst_ulp, failures, cases);
    return failures != 0;
}
