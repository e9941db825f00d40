/* f32-lrn: local response normalisation across channels, float32.
 *
 * y[c] = x[c] * (bias + alpha_over_size * sum of x[c']^2 over the window of c)^-beta, the window being
 * c - (size - 1) / 2 .. c + size / 2 clipped to the channels. beta = 0.75 (AlexNet, GoogLeNet, ZFNet) takes
 * t^-0.75 = 1 / sqrt(t * sqrt(t)) instead of powf. The __reference forms (lrn-reference.c) are the oracle,
 * their loops along contiguous memory; the forms on the SIMD shim (lrn-simd.c, named for the ISA: mlcc/isa.h) match them bit for bit
 * and are what models call (on a target without a shim they run the reference forms).
 */
#ifndef MLCC_KERNELS_F32_LRN_H
#define MLCC_KERNELS_F32_LRN_H

#include "mlcc/runtime.h"

/* Channels-first: `batch` images of `channels` planes of `inner` contiguous elements. */
void mlcc_f32_lrn_nchw__reference(size_t batch, size_t channels, size_t inner, size_t size, float alpha_over_size,
                                  float beta, float bias, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);

/* Channels-last: `pixels` runs of `channels` contiguous elements. */
void mlcc_f32_lrn_nhwc__reference(size_t pixels, size_t channels, size_t size, float alpha_over_size,
                                  float beta, float bias, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);

void MLCC_ISA_NAME(mlcc_f32_lrn_nchw)(size_t batch, size_t channels, size_t inner, size_t size, float alpha_over_size,
                                      float beta, float bias, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void MLCC_ISA_NAME(mlcc_f32_lrn_nhwc)(size_t pixels, size_t channels, size_t size, float alpha_over_size,
                                      float beta, float bias, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);

#endif /* MLCC_KERNELS_F32_LRN_H */
