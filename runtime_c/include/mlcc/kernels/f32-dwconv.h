/* f32-dwconv: depthwise convolution of channels-last (N[D]HWC) float32 images, one filter per channel (a
 * channel multiplier of 1), written once on the SIMD shim (mlcc/simd.h): the channels are the vector lanes.
 * A target without a shim builds the portable loop instead (__scalar, see mlcc/isa.h). mlcc_f32_dwconv_nhwc__reference
 * (dwconv-nhwc-reference.c) is the oracle the tests compare against.
 *
 * The geometry is f32-conv's (struct mlcc_f32_conv_geometry: every convolution seen as 3-D).
 */
#ifndef MLCC_KERNELS_F32_DWCONV_H
#define MLCC_KERNELS_F32_DWCONV_H

#include "mlcc/activation.h"
#include "mlcc/kernels/f32-conv.h"  /* struct mlcc_f32_conv_geometry */
#include "mlcc/parallel.h"
#include "mlcc/runtime.h"

/* One image: y[pixel][c] = bias[c] + sum over the taps t inside the input of x[source][c] * w[t][c].
 * w is taps x channels (taps in (kd, kh, kw) order, each a run of `channels` floats: the vector of weights
 * a channel block needs at one tap); bias may be NULL. The epilogue (NULL: none) sees rows = output
 * pixels, columns = channels. y must not overlap x or the residual: a channel count that is not a multiple
 * of the vector width is finished by one vector overlapping the previous one, written twice. */
void MLCC_ISA_NAME(mlcc_f32_dwconv_nhwc)(const struct mlcc_f32_conv_geometry *g, size_t channels,
                                         const float *x, const float *w, const float *bias,
                                         float *MLCC_RESTRICT y, const struct mlcc_f32_epilogue *epilogue);
/* Output rows [row0, row1) of the same (numbered od * out[1] + oh), each computed as the whole image
 * computes it. */
void MLCC_ISA_NAME(mlcc_f32_dwconv_nhwc_rows)(const struct mlcc_f32_conv_geometry *g, size_t channels,
                                              const float *x, const float *w, const float *bias,
                                              float *MLCC_RESTRICT y, const struct mlcc_f32_epilogue *epilogue,
                                              size_t row0, size_t row1);

/* The same, its output rows cut into tasks for the caller's parallel-for (mlcc/parallel.h) when large:
 * every row is computed as the single-threaded kernel computes it. */
void MLCC_ISA_NAME(mlcc_f32_dwconv_nhwc_parallel)(const mlcc_parallel *parallel,
                                                  const struct mlcc_f32_conv_geometry *g, size_t channels,
                                                  const float *x, const float *w, const float *bias,
                                                  float *MLCC_RESTRICT y, const struct mlcc_f32_epilogue *epilogue);
void mlcc_f32_dwconv_nhwc__reference(const struct mlcc_f32_conv_geometry *g, size_t channels,
                                     const float *x, const float *w, const float *bias,
                                     float *MLCC_RESTRICT y, const struct mlcc_f32_epilogue *epilogue);

#endif /* MLCC_KERNELS_F32_DWCONV_H */
