/* f32-vmath: exp, sigmoid, tanh, erf and the GELUs (x Phi(x), and its tanh approximation) elementwise over
 * arrays, on mlcc/simd/math.h; their accuracy is stated there. Generated elementwise loops call the inline
 * scalar forms this header brings (mlcc/simd/math-scalar.h), which the compiler vectorises. */
#ifndef MLCC_KERNELS_F32_VMATH_H
#define MLCC_KERNELS_F32_VMATH_H

#include "mlcc/runtime.h"
#include "mlcc/simd/math-scalar.h"

/* y[i] = f(x[i]) for i < n; y may be x. __<isa> on the SIMD shim (mlcc/isa.h names it), __reference the
 * scalar forms alone, the oracle. */
#define MLCC_F32_VMATH_DECLARE(fn)                                                   \
    void MLCC_ISA_NAME(mlcc_f32_vmath_##fn)(size_t n, const float *x, float *y);     \
    void mlcc_f32_vmath_##fn##__reference(size_t n, const float *x, float *y);
MLCC_F32_VMATH_DECLARE(exp)
MLCC_F32_VMATH_DECLARE(sigmoid)
MLCC_F32_VMATH_DECLARE(tanh)
MLCC_F32_VMATH_DECLARE(erf)
MLCC_F32_VMATH_DECLARE(gelu_erf)
MLCC_F32_VMATH_DECLARE(gelu_tanh)

#endif /* MLCC_KERNELS_F32_VMATH_H */
