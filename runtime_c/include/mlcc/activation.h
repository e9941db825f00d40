/* Fused epilogues: what a kernel applies to each output element once its sum is complete,
 * y = activation(sum + residual), with the ONNX definitions of each activation. */
#ifndef MLCC_ACTIVATION_H
#define MLCC_ACTIVATION_H

#include <math.h>

#include "mlcc/runtime.h"
#include "mlcc/simd/math-scalar.h"

/* activation kinds; a and b are the activation's parameters */
enum mlcc_activation {
    MLCC_ACTIVATION_NONE,
    MLCC_ACTIVATION_RELU,
    MLCC_ACTIVATION_CLIP,          /* a = min, b = max */
    MLCC_ACTIVATION_LEAKY_RELU,    /* a = alpha */
    MLCC_ACTIVATION_SIGMOID,
    MLCC_ACTIVATION_HARD_SIGMOID,  /* a = alpha, b = beta */
    MLCC_ACTIVATION_HARD_SWISH,
    MLCC_ACTIVATION_SILU,
    MLCC_ACTIVATION_TANH,
    MLCC_ACTIVATION_GELU_ERF,
    MLCC_ACTIVATION_GELU_TANH
};

struct mlcc_f32_epilogue {
    enum mlcc_activation activation;
    float a, b;
    const float *residual;             /* NULL: none; added before the activation */
    size_t residual_rs, residual_cs;   /* element strides of the residual; 0 broadcasts it */
};

/* The activation alone (the residual is the caller's: it depends on the element's position); the
 * transcendental ones are mlcc/simd/math-scalar.h's, as the vector epilogues compute them. */
static inline float mlcc_f32_activate(const struct mlcc_f32_epilogue *e, float x)
{
    switch (e->activation) {
    case MLCC_ACTIVATION_RELU:
        return x > 0.0f ? x : 0.0f;
    case MLCC_ACTIVATION_CLIP:
        return x < e->a ? e->a : (x > e->b ? e->b : x);
    case MLCC_ACTIVATION_LEAKY_RELU:
        return x < 0.0f ? e->a * x : x;
    case MLCC_ACTIVATION_SIGMOID:
        return mlcc_f32_sigmoid(x);
    case MLCC_ACTIVATION_HARD_SIGMOID:
        return fmaxf(0.0f, fminf(1.0f, e->a * x + e->b));
    case MLCC_ACTIVATION_HARD_SWISH:
        return x * fmaxf(0.0f, fminf(1.0f, x * (1.0f / 6.0f) + 0.5f));
    case MLCC_ACTIVATION_SILU:
        return x * mlcc_f32_sigmoid(x);
    case MLCC_ACTIVATION_TANH:
        return mlcc_f32_tanh(x);
    case MLCC_ACTIVATION_GELU_ERF:
        return mlcc_f32_gelu_erf(x);
    case MLCC_ACTIVATION_GELU_TANH:
        return mlcc_f32_gelu_tanh(x);
    case MLCC_ACTIVATION_NONE:
        break;
    }
    return x;
}

/* Applies the epilogue in place to an m x n block of c (leading dimension ldc) whose first element is
 * output (row0, col0) of the whole product; e may be NULL. */
static inline void mlcc_f32_epilogue_apply(const struct mlcc_f32_epilogue *e, size_t m, size_t n,
                                           float *c, size_t ldc, size_t row0, size_t col0)
{
    if (e == NULL) return;
    for (size_t i = 0; i < m; ++i) {
        float *ci = c + i * ldc;
        if (e->residual != NULL) {
            const float *r = e->residual + (row0 + i) * e->residual_rs + col0 * e->residual_cs;
            for (size_t j = 0; j < n; ++j) ci[j] += r[j * e->residual_cs];
        }
        if (e->activation != MLCC_ACTIVATION_NONE)
            for (size_t j = 0; j < n; ++j) ci[j] = mlcc_f32_activate(e, ci[j]);
    }
}

#endif /* MLCC_ACTIVATION_H */
