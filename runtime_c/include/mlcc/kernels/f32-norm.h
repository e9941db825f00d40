/* f32 normalisations: per-channel affine (inference batch norm), instance, layer and local response
 * normalisation. Tensors are viewed as [batch, channels, inner] or [rows, n], contiguous. */
#ifndef MLCC_KERNELS_F32_NORM_H
#define MLCC_KERNELS_F32_NORM_H

#include "mlcc/runtime.h"

/* y[b, c, i] = x[b, c, i] * scale[c] + shift[c]. */
void mlcc_f32_norm_channel_affine__reference(size_t batch, size_t channels, size_t inner, const float *MLCC_RESTRICT x,
                                             const float *MLCC_RESTRICT scale, const float *MLCC_RESTRICT shift,
                                             float *MLCC_RESTRICT y);

/* Batch norm's statistics folded into an affine map: scale = gamma / sqrt(var + epsilon),
 * shift = beta - mean * scale, per channel. */
void mlcc_f32_norm_batch_fold__reference(size_t channels, const float *gamma, const float *beta, const float *mean,
                                         const float *var, float epsilon, float *MLCC_RESTRICT scale,
                                         float *MLCC_RESTRICT shift);

/* Each (b, c) plane normalised to zero mean and unit variance, then y = that * scale[c] + bias[c]. */
void mlcc_f32_norm_instance__reference(size_t batch, size_t channels, size_t inner, const float *MLCC_RESTRICT x,
                                       const float *MLCC_RESTRICT scale, const float *MLCC_RESTRICT bias, float epsilon,
                                       float *MLCC_RESTRICT y);

/* Each row normalised to zero mean and unit variance, then y = that * scale[i] + bias[i]; bias may be NULL.
 * mlcc_f32_norm_layer__<isa> runs in the vectors of the target's SIMD shim (mlcc/simd.h), the scalar reference
 * is the test oracle. */
void MLCC_ISA_NAME(mlcc_f32_norm_layer)(size_t rows, size_t n, const float *MLCC_RESTRICT x, const float *MLCC_RESTRICT scale,
                                        const float *MLCC_RESTRICT bias, float epsilon, float *MLCC_RESTRICT y);
void mlcc_f32_norm_layer__reference(size_t rows, size_t n, const float *MLCC_RESTRICT x, const float *MLCC_RESTRICT scale,
                                    const float *MLCC_RESTRICT bias, float epsilon, float *MLCC_RESTRICT y);

#endif /* MLCC_KERNELS_F32_NORM_H */
