/* f32-vmath: exp, sigmoid, tanh, erf and the GELUs (x Phi(x), and its tanh approximation) elementwise over
 * arrays, on mlcc/simd/math.h; their accuracy is stated there. Generated elementwise loops call the inline
 * scalar forms this header brings (mlcc/simd/math-scalar.h), which the compiler vectorises. */
#ifndef MLCC_KERNELS_F32_VMATH_H
#define MLCC_KERNELS_F32_VMATH_H

#include "mlcc/runtime.h"
#include "mlcc/simd/math-scalar.h"

/* y[i] = f(x[i]) for i < n; y may be x. */
void mlcc_f32_vmath_exp(size_t n, const float *x, float *y);
void mlcc_f32_vmath_sigmoid(size_t n, const float *x, float *y);
void mlcc_f32_vmath_tanh(size_t n, const float *x, float *y);
void mlcc_f32_vmath_erf(size_t n, const float *x, float *y);
void mlcc_f32_vmath_gelu_erf(size_t n, const float *x, float *y);
void mlcc_f32_vmath_gelu_tanh(size_t n, const float *x, float *y);

#endif /* MLCC_KERNELS_F32_VMATH_H */
