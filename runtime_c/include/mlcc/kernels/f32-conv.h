/* f32-conv: the data movement around f32-gemm for convolutions (NC[D]HW layout, float32), and a direct
 * depthwise kernel. Every convolution is seen as 3-D: 1-D and 2-D ones have leading extents of 1.
 *
 * Coordinates follow the forward convolution: input index = output index * stride + tap * dilation - pad.
 * A transposed convolution is the adjoint of a forward one, so col2im takes the same geometry with the
 * transposed convolution's output as `in` and its input as `out`.
 */
#ifndef MLCC_KERNELS_F32_CONV_H
#define MLCC_KERNELS_F32_CONV_H

#include "mlcc/activation.h"
#include "mlcc/parallel.h"
#include "mlcc/runtime.h"

/* The widest panel im2col and col2im handle (f32-gemm's nr). */
#define MLCC_F32_CONV_MAX_NR 64u

struct mlcc_f32_conv_geometry {
    size_t in[3];        /* input extents (d, h, w) */
    size_t out[3];       /* output extents */
    size_t kernel[3];
    size_t stride[3];
    size_t dilation[3];
    size_t pad[3];       /* padding before each axis; padding after is implied by `out` */
};

/* Packs im2col columns p0 .. p0+np of a channels-deep input into f32-gemm's B panels of nr floats:
 * row (c, kd, kh, kw), column p = output pixel; taps in the padding read 0. */
void mlcc_f32_conv_im2col_packed(const struct mlcc_f32_conv_geometry *g, size_t channels,
                                 const float *x, size_t p0, size_t np, size_t nr,
                                 float *MLCC_RESTRICT packed);

/* The adjoint of im2col: y[c][input pixel] += col[(c, kd, kh, kw)][p - p0] for output pixels
 * p0 .. p0+np (row stride ldcol); taps that land in the padding are dropped. */
void mlcc_f32_conv_col2im_add(const struct mlcc_f32_conv_geometry *g, size_t channels,
                              const float *col, size_t ldcol, size_t p0, size_t np,
                              float *MLCC_RESTRICT y);

/* Depthwise convolution of one image: output channel o reads input channel o / multiplier with filter
 * w[o] (kd x kh x kw); bias may be NULL. The epilogue (NULL: none) sees the output as a matrix of
 * channels x pixels: its residual is read at o * residual_rs + pixel * residual_cs. */
void mlcc_f32_conv_depthwise__reference(const struct mlcc_f32_conv_geometry *g, size_t channels, size_t multiplier,
                                        const float *x, const float *w, const float *bias,
                                        float *MLCC_RESTRICT y, const struct mlcc_f32_epilogue *epilogue);

/* Channels-last (N[D]HWC) forms. im2col_nhwc writes rows p0 .. p0+np of one image's column matrix, row =
 * output pixel, column (kd, kh, kw, c) for the `channels` channels starting at x, whose pixels lie
 * x_pixel_stride floats apart (a group's slice of a wider tensor); taps in the padding read 0. */
void mlcc_f32_conv_im2col_nhwc(const struct mlcc_f32_conv_geometry *g, size_t channels, size_t x_pixel_stride,
                               const float *x, size_t p0, size_t np, float *MLCC_RESTRICT a);

/* The same, its rows cut into tasks for the caller's parallel-for when there are many (mlcc/parallel.h). */
void mlcc_f32_conv_im2col_nhwc_parallel(const mlcc_parallel *parallel, const struct mlcc_f32_conv_geometry *g,
                                        size_t channels, size_t x_pixel_stride, const float *x, size_t p0,
                                        size_t np, float *MLCC_RESTRICT a);

/* Direct convolution of one channels-last image (or one group of it) for few input channels, where im2col
 * would copy runs of a channel or three, or a group's few channels: y[pixel][o] = bias[o] + sum over the
 * taps t = (kd, kh, kw, c) inside the input of x[source][c] * w[t][o], the `channels` channels at x whose
 * pixels lie x_pixel_stride floats apart; channel c at x[source][x_channels[c]] when x_channels is not NULL
 * (a channel permutation folded into the reads: passes/fold_channel_permutations). w is f32-gemm's packed B of (taps * channels) x out_channels: panels of
 * nr output channels (zeros past out_channels), each k rows of nr floats. bias may be NULL; output pixels
 * lie y_pitch floats apart (a channel slice of a wider tensor); y must not overlap x or the residual. The
 * epilogue (NULL: none) sees rows = output pixels, columns = channels. __<isa> (on the SIMD shim, named by
 * mlcc/isa.h) takes nr a multiple of the vector width, at most 4 vectors (other widths run __reference);
 * _Nv__<isa> takes nr = N vectors (any nr on targets without a SIMD shim, where it runs __reference): a
 * model links only the panel width it runs. */
void mlcc_f32_conv_direct_nhwc__reference(const struct mlcc_f32_conv_geometry *g, size_t channels,
                                          size_t x_pixel_stride, const int32_t *x_channels, size_t out_channels,
                                          size_t nr, const float *x, const float *w,
                                          const float *bias, float *MLCC_RESTRICT y, size_t y_pitch,
                                          const struct mlcc_f32_epilogue *epilogue);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc)(const struct mlcc_f32_conv_geometry *g, size_t channels,
                                              size_t x_pixel_stride, const int32_t *x_channels, size_t out_channels,
                                              size_t nr, const float *x, const float *w,
                                              const float *bias, float *MLCC_RESTRICT y, size_t y_pitch,
                                              const struct mlcc_f32_epilogue *epilogue);
/* the parameters of every entry point above, for the per-width ones */
#define MLCC_F32_CONV_DIRECT_NHWC_PARAMS                                                                      \
    const struct mlcc_f32_conv_geometry *g, size_t channels, size_t x_pixel_stride,                         \
        const int32_t *x_channels, size_t out_channels, size_t nr, const float *x, const float *w,            \
        const float *bias, float *MLCC_RESTRICT y, size_t y_pitch, const struct mlcc_f32_epilogue *epilogue
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_1v)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_2v)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_3v)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_4v)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
/* The same reading channel c at x + x_channels[c] (not NULL: any offsets, e.g. a channel shuffle's). */
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_1v_permuted)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_2v_permuted)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_3v_permuted)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_4v_permuted)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);

/* `kernel` (one of the above) over `groups` groups (group g: channels and out_channels are per group, x, bias,
 * y and the epilogue's residual advanced by g of them, w by g * w_group floats), with a 2-D image's output
 * rows cut into tasks for the caller's parallel-for (mlcc/parallel.h) when large: each task takes its rows
 * in every group, each row range run as a convolution of its own that sums every pixel's taps as the whole
 * does. x_channels (NULL, or `channels` offsets per group, relative to the group's x) is advanced by g of
 * them too. */
typedef void (*mlcc_f32_conv_direct_nhwc_fn)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void mlcc_f32_conv_direct_nhwc_parallel(const mlcc_parallel *parallel, mlcc_f32_conv_direct_nhwc_fn kernel,
                                        size_t groups, size_t w_group, MLCC_F32_CONV_DIRECT_NHWC_PARAMS);

#endif /* MLCC_KERNELS_F32_CONV_H */
