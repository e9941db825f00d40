/* The vector forms of activation.h's activations, on the SIMD shim the including file chose (mlcc/simd.h or
 * one mlcc/simd/<isa>.h): kernels apply them to a finished tile still in registers. The transcendental
 * ones are mlcc/simd/math.h's, lane for lane the scalar forms activation.h uses. */
#ifndef MLCC_ACTIVATION_SIMD_H
#define MLCC_ACTIVATION_SIMD_H

#include "mlcc/activation.h"
#include "mlcc/simd/math.h"

/* Applies e's activation to v[0 .. count) in place and returns 1, or returns 0 untouched for the
 * activations without a vector form here (the caller then goes through mlcc_f32_activate). */
static inline int mlcc_f32v_activate(const struct mlcc_f32_epilogue *e, mlcc_f32v *v, size_t count)
{
    const mlcc_f32v zero = mlcc_f32v_zero(), one = mlcc_f32v_splat(1.0f);
    switch (e->activation) {
    case MLCC_ACTIVATION_NONE:
        return 1;
    case MLCC_ACTIVATION_RELU:
        for (size_t j = 0; j < count; ++j) v[j] = mlcc_f32v_max(v[j], zero);
        return 1;
    case MLCC_ACTIVATION_CLIP: {
        const mlcc_f32v lo = mlcc_f32v_splat(e->a), hi = mlcc_f32v_splat(e->b);
        for (size_t j = 0; j < count; ++j) v[j] = mlcc_f32v_min(mlcc_f32v_max(v[j], lo), hi);
        return 1;
    }
    case MLCC_ACTIVATION_LEAKY_RELU: {  /* max(x, 0) + alpha * min(x, 0) */
        const mlcc_f32v alpha = mlcc_f32v_splat(e->a);
        for (size_t j = 0; j < count; ++j)
            v[j] = mlcc_f32v_fma(mlcc_f32v_max(v[j], zero), alpha, mlcc_f32v_min(v[j], zero));
        return 1;
    }
    case MLCC_ACTIVATION_HARD_SIGMOID: {
        const mlcc_f32v alpha = mlcc_f32v_splat(e->a), beta = mlcc_f32v_splat(e->b);
        for (size_t j = 0; j < count; ++j)
            v[j] = mlcc_f32v_min(mlcc_f32v_max(mlcc_f32v_fma(beta, alpha, v[j]), zero), one);
        return 1;
    }
    case MLCC_ACTIVATION_HARD_SWISH: {
        const mlcc_f32v sixth = mlcc_f32v_splat(1.0f / 6.0f), half = mlcc_f32v_splat(0.5f);
        for (size_t j = 0; j < count; ++j)
            v[j] = mlcc_f32v_mul(v[j], mlcc_f32v_min(mlcc_f32v_max(mlcc_f32v_fma(half, sixth, v[j]), zero), one));
        return 1;
    }
    case MLCC_ACTIVATION_SIGMOID:
        for (size_t j = 0; j < count; ++j) v[j] = mlcc_f32v_sigmoid(v[j]);
        return 1;
    case MLCC_ACTIVATION_SILU:
        for (size_t j = 0; j < count; ++j) v[j] = mlcc_f32v_mul(v[j], mlcc_f32v_sigmoid(v[j]));
        return 1;
    case MLCC_ACTIVATION_TANH:
        for (size_t j = 0; j < count; ++j) v[j] = mlcc_f32v_tanh(v[j]);
        return 1;
    case MLCC_ACTIVATION_GELU_ERF:
        for (size_t j = 0; j < count; ++j) v[j] = mlcc_f32v_gelu_erf(v[j]);
        return 1;
    case MLCC_ACTIVATION_GELU_TANH:
        for (size_t j = 0; j < count; ++j) v[j] = mlcc_f32v_gelu_tanh(v[j]);
        return 1;
    }
    return 0;
}

#if defined(__GNUC__) || defined(__clang__)
#define MLCC_F32V_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define MLCC_F32V_ALWAYS_INLINE inline
#endif

/* The most vectors mlcc_f32v_activate_held takes: a direct convolution's block (8 pixels x 4 vectors). */
#define MLCC_F32V_HELD_MAX 32u

/* e's activation on acc[0 .. count) (count <= MLCC_F32V_HELD_MAX), a kernel's accumulators still in registers;
 * 0 (acc untouched) when it has no vector form. ReLU and Clip inline, the others on a copy: acc's address never
 * reaches mlcc_f32v_activate (not inlined), else the compiler keeps the caller's accumulators on the stack (a
 * grouped 1x1 convolution of 34 channels spent a third of its time so, a 3136x256x64 product 15%). */
static MLCC_F32V_ALWAYS_INLINE int mlcc_f32v_activate_held(const struct mlcc_f32_epilogue *e, mlcc_f32v *acc,
                                                           size_t count)
{
    switch (e->activation) {
    case MLCC_ACTIVATION_NONE:
        return 1;
    case MLCC_ACTIVATION_RELU: {
        const mlcc_f32v zero = mlcc_f32v_zero();
        for (size_t j = 0; j < count; ++j) acc[j] = mlcc_f32v_max(acc[j], zero);
        return 1;
    }
    case MLCC_ACTIVATION_CLIP: {
        const mlcc_f32v lo = mlcc_f32v_splat(e->a), hi = mlcc_f32v_splat(e->b);
        for (size_t j = 0; j < count; ++j) acc[j] = mlcc_f32v_min(mlcc_f32v_max(acc[j], lo), hi);
        return 1;
    }
    default: {
        mlcc_f32v copy[MLCC_F32V_HELD_MAX];
        int vector;
        for (size_t j = 0; j < count; ++j) copy[j] = acc[j];
        vector = mlcc_f32v_activate(e, copy, count);
        for (size_t j = 0; j < count; ++j) acc[j] = copy[j];
        return vector;
    }
    }
}

#endif /* MLCC_ACTIVATION_SIMD_H */
