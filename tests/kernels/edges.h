/* What the kernel edge harnesses (tests/kernels/<family>_edges.c) share: a pass/fail tally, one pseudo-random
 * sequence (the same on every target), and buffers fenced by FENCE floats on both sides: NaN around
 * inputs, so a read outside them poisons the result; SENTINEL around outputs, so a write outside them is
 * caught. Each harness is one translation unit: everything here is static. */
#ifndef MLCC_TESTS_KERNELS_EDGES_H
#define MLCC_TESTS_KERNELS_EDGES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "mlcc/activation.h"

#define FENCE 64u
#define SENTINEL 12345.0f

static uint32_t rng_state = 12345u;
static int failures, cases;

/* uniform in [-1, 1), from a linear congruential generator */
static inline float uniform(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 8388608.0f - 1.0f;
}

/* n random values fenced by NaN on both sides; returns the first */
static inline float *fenced_random(float *buf, size_t n)
{
    for (size_t i = 0; i < n + 2 * FENCE; ++i) buf[i] = (i < FENCE || i >= FENCE + n) ? NAN : uniform();
    return buf + FENCE;
}

/* n sentinels fenced by sentinels; returns the first */
static inline float *fenced_sentinel(float *buf, size_t n)
{
    for (size_t i = 0; i < n + 2 * FENCE; ++i) buf[i] = SENTINEL;
    return buf + FENCE;
}

/* how many of the FENCE positions either side of got[0, n) (from fenced_sentinel) were written */
static inline size_t fence_damage(const float *got, size_t n)
{
    size_t bad = 0;
    for (size_t i = 0; i < FENCE; ++i)
        if (got[-(long)FENCE + (long)i] != SENTINEL || got[n + i] != SENTINEL) ++bad;
    return bad;
}

/* The convolution harnesses' epilogue cases: 0 none, 1 relu, 2 clip, 3 residual + hard-swish (residual
 * rows residual_rs apart), 4 sigmoid (no vector form), 5 residual per pixel. */
static inline struct mlcc_f32_epilogue conv_epilogue(int kind, const float *residual, size_t residual_rs)
{
    struct mlcc_f32_epilogue e = {MLCC_ACTIVATION_NONE, 0.0f, 0.0f, NULL, 0u, 0u};
    if (kind == 1) e.activation = MLCC_ACTIVATION_RELU;
    if (kind == 2) {
        e.activation = MLCC_ACTIVATION_CLIP;
        e.a = -0.5f;
        e.b = 0.75f;
    }
    if (kind == 3) {
        e.activation = MLCC_ACTIVATION_HARD_SWISH;
        e.residual = residual;
        e.residual_rs = residual_rs;
        e.residual_cs = 1u;
    }
    if (kind == 4) e.activation = MLCC_ACTIVATION_SIGMOID;
    if (kind == 5) {
        e.activation = MLCC_ACTIVATION_RELU;
        e.residual = residual;
        e.residual_rs = 1u;
        e.residual_cs = 0u;
    }
    return e;
}

#endif /* MLCC_TESTS_KERNELS_EDGES_H */
