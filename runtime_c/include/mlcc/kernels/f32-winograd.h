/* f32-winograd: the transforms around f32-gemm for Winograd F(4x4, 3x3) convolution of channels-last
 * (NHWC) float32 images, stride 1, no dilation (Lavin & Gray, "Fast Algorithms for Convolutional Neural
 * Networks", 2016). Each 4x4 block of output pixels (a tile) is computed from the 6x6 input patch around it
 * in 36 transformed points: V = B^T d B per input channel, M[point] = V[point] * U[point] summed over input
 * channels (36 GEMMs: rows are tiles, k the input channels, columns the output channels, U = G g G^T the
 * weights transformed and packed at build time), then Y = A^T M A. That is 36 multiply-adds per tile and
 * channel pair where direct convolution takes 144: four times fewer.
 *
 * Tiles are numbered row-major over the output: tile t covers output rows 4 * (t / tiles_w) .. + 4 and
 * columns 4 * (t % tiles_w) .. + 4, tiles_w = ceil(out_w / 4); the parts past the output are computed
 * and dropped, input read past the image (or in the padding) is zero.
 *
 * The geometry is f32-conv's with kernel 1x3x3 or 1x5x5, stride and dilation 1 (a 2-D convolution: in[0] = 1);
 * a 5x5 stride-2 convolution runs on its phases (mlcc_f32_winograd_phase).
 * Transformed matrices are point-major: point p of tile t, channel c at p * point_stride + t * channels + c
 * (the input's at p * point_stride + t * tile_stride + c: a 5x5 kernel, zero-padded to 6x6, is four 3x3
 * pieces 3 taps apart, whose inputs are transformed side by side, so that one product per point sums all
 * four).
 */
#ifndef MLCC_KERNELS_F32_WINOGRAD_H
#define MLCC_KERNELS_F32_WINOGRAD_H

#include "mlcc/activation.h"
#include "mlcc/kernels/f32-conv.h"  /* struct mlcc_f32_conv_geometry */
#include "mlcc/kernels/f32-gemm.h"  /* struct mlcc_f32_gemm_config */
#include "mlcc/parallel.h"
#include "mlcc/runtime.h"

/* Transformed points per tile. */
#define MLCC_F32_WINOGRAD_POINTS 36u

/* Transforms the input patches of tiles t0 .. t0 + nt of one image (channels floats of each pixel, pixels
 * x_pitch floats apart: more than channels for a group of a grouped convolution) into v, tiles tile_stride
 * floats apart. piece: 0 for a 3x3 kernel; for a 5x5 one, which 3x3 piece (0 top-left, 1 top-right, 2
 * bottom-left, 3 bottom-right), its patches 3 taps further right (1, 3) and down (2, 3). */
void MLCC_ISA_NAME(mlcc_f32_winograd_input)(const struct mlcc_f32_conv_geometry *g, size_t piece, size_t channels,
                                            const float *x, size_t x_pitch, size_t t0, size_t nt, float *MLCC_RESTRICT v,
                                            size_t point_stride, size_t tile_stride);

/* A 5x5 stride-2 convolution is four 3x3 stride-1 ones over its input's phases (polyphase
 * decomposition): phase p holds the padded input's pixels at even or odd rows (p / 2) and columns (p % 2), out + 2
 * of each a side, and convolves with the taps of the same parities (the kernel zero-padded to 6x6). Writes
 * phase p of one image (channels floats of each pixel, x_pitch apart) to dst, channels floats a pixel, zero
 * in the padding; g is the stride-2 geometry. */
void mlcc_f32_winograd_phase(const struct mlcc_f32_conv_geometry *g, size_t phase, size_t channels, const float *x,
                             size_t x_pitch, float *MLCC_RESTRICT dst);

/* Transforms the products m of tiles t0 .. t0 + nt back into output pixels of one image: y[pixel * y_pitch
 * + c] = bias[c] + (A^T M A)[pixel], then the epilogue (NULL: none; rows are the image's output pixels,
 * columns channels). bias may be NULL. y must not overlap m; it may be the residual (read before y is
 * written). */
void MLCC_ISA_NAME(mlcc_f32_winograd_output)(const struct mlcc_f32_conv_geometry *g, size_t channels, const float *m,
                                             size_t point_stride, size_t t0, size_t nt, const float *bias,
                                             float *MLCC_RESTRICT y, size_t y_pitch, const struct mlcc_f32_epilogue *epilogue);

/* The weight transform, for weights prepared at load time (the same as mlcc/ops/_winograd.py's at build
 * time, within an ulp): w [groups * out_channels][in_channels][kernel][kernel] (ONNX's layout; kernel 3, or 5
 * at stride 1 or 2) -> U = G g G^T per channel pair and 3x3 piece, packed for f32-gemm's B in panels of nr
 * columns: u[group][point][panel][k][nr], k = pieces * in_channels (a 5x5 kernel's four pieces side by side),
 * the last panel's columns past out_channels zero. u holds groups * 36 * k * ceil(out / nr) * nr floats. */
void mlcc_f32_winograd_transform_weights(const float *w, size_t groups, size_t out_channels, size_t in_channels,
                                         size_t kernel, size_t stride, size_t nr, float *MLCC_RESTRICT u);

/* The oracles: the same contracts, computed from the transform matrices one channel at a time. */
void mlcc_f32_winograd_input__reference(const struct mlcc_f32_conv_geometry *g, size_t piece, size_t channels,
                                        const float *x, size_t x_pitch, size_t t0, size_t nt,
                                        float *MLCC_RESTRICT v, size_t point_stride, size_t tile_stride);
void mlcc_f32_winograd_output__reference(const struct mlcc_f32_conv_geometry *g, size_t channels, const float *m,
                                         size_t point_stride, size_t t0, size_t nt, const float *bias,
                                         float *MLCC_RESTRICT y, size_t y_pitch,
                                         const struct mlcc_f32_epilogue *epilogue);

/* The transforms' signatures, for the parallel forms below. */
typedef void (*mlcc_f32_winograd_input_fn)(const struct mlcc_f32_conv_geometry *g, size_t piece, size_t channels,
                                           const float *x, size_t x_pitch, size_t t0, size_t nt, float *MLCC_RESTRICT v,
                                           size_t point_stride, size_t tile_stride);
typedef void (*mlcc_f32_winograd_output_fn)(const struct mlcc_f32_conv_geometry *g, size_t channels, const float *m,
                                            size_t point_stride, size_t t0, size_t nt, const float *bias,
                                            float *MLCC_RESTRICT y, size_t y_pitch,
                                            const struct mlcc_f32_epilogue *epilogue);

/* A chunk's steps cut into tasks for the caller's parallel-for (mlcc/parallel.h), each inline when small or
 * without one: `kernel`'s transform over ranges of the nt tiles; the 36 points' products
 * m[point] = v[point] (nt x k) * u[point] (packed B of k x out_channels) over ranges of points. Each task
 * runs the single-threaded kernel on its part, so the results do not depend on the threads. */
void mlcc_f32_winograd_input_parallel(const mlcc_parallel *parallel, mlcc_f32_winograd_input_fn kernel,
                                      const struct mlcc_f32_conv_geometry *g, size_t piece, size_t channels,
                                      const float *x, size_t x_pitch, size_t t0, size_t nt, float *v,
                                      size_t point_stride, size_t tile_stride);
void mlcc_f32_winograd_points(const mlcc_parallel *parallel, const struct mlcc_f32_gemm_config *config, size_t nt,
                              size_t out_channels, size_t k, const float *v, size_t v_point, const float *u,
                              size_t u_point, float *m, size_t m_point);
void mlcc_f32_winograd_output_parallel(const mlcc_parallel *parallel, mlcc_f32_winograd_output_fn kernel,
                                       const struct mlcc_f32_conv_geometry *g, size_t channels, const float *m,
                                       size_t point_stride, size_t t0, size_t nt, const float *bias, float *y,
                                       size_t y_pitch, const struct mlcc_f32_epilogue *epilogue);

#endif /* MLCC_KERNELS_F32_WINOGRAD_H */
