/* f32 exp, sigmoid, tanh, erf and the GELUs over arrays, in the vectors of the target's SIMD shim
 * (mlcc/simd.h) with mlcc/simd/math.h, the tail (or a whole array without a shim) with the scalar forms;
 * and the __reference forms, the scalar forms alone, the oracle of the tests. */
#include "mlcc/kernels/f32-vmath.h"
#include "mlcc/simd.h"
#if MLCC_HAVE_F32V
#include "mlcc/simd/math.h"
#define VECTOR_LOOP(fn)                                                                 \
    for (; i + MLCC_F32V_LANES <= n; i += MLCC_F32V_LANES)                              \
        mlcc_f32v_store(y + i, mlcc_f32v_##fn(mlcc_f32v_load(x + i)))
#else
#define VECTOR_LOOP(fn) ((void)0)
#endif

/* x and y may be the same array: each element is read before it is written */
#define ARRAY_FUNCTION(fn)                                                              \
    void MLCC_ISA_NAME(mlcc_f32_vmath_##fn)(size_t n, const float *x, float *y)         \
    {                                                                                   \
        size_t i = 0;                                                                   \
        VECTOR_LOOP(fn);                                                                \
        for (; i < n; ++i) y[i] = mlcc_f32_##fn(x[i]);                                  \
    }                                                                                   \
    void mlcc_f32_vmath_##fn##__reference(size_t n, const float *x, float *y)           \
    {                                                                                   \
        for (size_t i = 0; i < n; ++i) y[i] = mlcc_f32_##fn(x[i]);                      \
    }

ARRAY_FUNCTION(exp)
ARRAY_FUNCTION(sigmoid)
ARRAY_FUNCTION(tanh)
ARRAY_FUNCTION(erf)
ARRAY_FUNCTION(gelu_erf)
ARRAY_FUNCTION(gelu_tanh)
