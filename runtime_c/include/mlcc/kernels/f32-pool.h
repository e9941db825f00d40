/* f32 pooling over NC[D][H]W tensors: windowed max/average and global max/average per (n, c) plane. */
#ifndef MLCC_KERNELS_F32_POOL_H
#define MLCC_KERNELS_F32_POOL_H

#include "mlcc/parallel.h"
#include "mlcc/runtime.h"

/* A pooling window over one (n, c) plane of up to three spatial dims, outermost first (d, h, w); lower
 * ranks set the leading dims to extent 1, kernel 1, stride 1, dilation 1, pads 0. Window o of a dim
 * starts at o * stride - pad_begin and taps every dilation-th element, kernel taps in all. */
typedef struct mlcc_pool_geometry {
    ptrdiff_t in[3];
    ptrdiff_t out[3];
    ptrdiff_t kernel[3];
    ptrdiff_t stride[3];
    ptrdiff_t dilation[3];
    ptrdiff_t pad_begin[3];
    ptrdiff_t pad_end[3];
} mlcc_pool_geometry;

/* y[p] = max over each window of x[p], for planes p; taps in the padding are ignored. */
void mlcc_f32_pool_max__reference(size_t planes, const mlcc_pool_geometry *geometry,
                                  const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);

/* y[p] = mean over each window of x[p]. The divisor counts the taps inside the input, or with
 * count_include_pad the taps inside the padded input [-pad_begin, in + pad_end). */
void mlcc_f32_pool_avg__reference(size_t planes, const mlcc_pool_geometry *geometry, bool count_include_pad,
                                  const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);

/* y[p] = max / mean of the `size` contiguous elements of plane p of x. */
void mlcc_f32_pool_global_max__reference(size_t planes, size_t size, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void mlcc_f32_pool_global_avg__reference(size_t planes, size_t size, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);

/* Channels-last (N[D][H]WC) forms over `images` images of `channels` channels: windows as above, global
 * pools over each image's `pixels` pixels (y is images x channels). */
void mlcc_f32_pool_max_nhwc__reference(size_t images, size_t channels, const mlcc_pool_geometry *geometry,
                                       const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void mlcc_f32_pool_avg_nhwc__reference(size_t images, size_t channels, const mlcc_pool_geometry *geometry,
                                       bool count_include_pad, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void mlcc_f32_pool_global_max_nhwc__reference(size_t images, size_t pixels, size_t channels,
                                              const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void mlcc_f32_pool_global_avg_nhwc__reference(size_t images, size_t pixels, size_t channels,
                                              const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);

/* The same channels-last forms on the SIMD shim (mlcc/simd.h; the channels are the vector lanes), the
 * scalar ones their oracle; the loops one channel at a time on targets without a shim. x and y must not
 * overlap. */
void MLCC_ISA_NAME(mlcc_f32_pool_max_nhwc)(size_t images, size_t channels, const mlcc_pool_geometry *geometry,
                                           const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void MLCC_ISA_NAME(mlcc_f32_pool_avg_nhwc)(size_t images, size_t channels, const mlcc_pool_geometry *geometry,
                                           bool count_include_pad, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void MLCC_ISA_NAME(mlcc_f32_pool_global_max_nhwc)(size_t images, size_t pixels, size_t channels,
                                                  const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void MLCC_ISA_NAME(mlcc_f32_pool_global_avg_nhwc)(size_t images, size_t pixels, size_t channels,
                                                  const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);

/* Output rows [row0, row1) of the windowed forms above (max, or average with count_include_pad), the rows of
 * every image numbered together (n * out[0] * out[1] + o0 * out[1] + o1), each pixel computed as the whole
 * call computes it. */
void MLCC_ISA_NAME(mlcc_f32_pool_nhwc_rows)(bool is_max, size_t channels, const mlcc_pool_geometry *geometry,
                                            bool count_include_pad, const float *x, float *MLCC_RESTRICT y,
                                            size_t row0, size_t row1);

/* The windowed forms with their output rows cut into tasks for the caller's parallel-for (mlcc/parallel.h)
 * when large: every pixel is computed as the single-threaded kernel computes it. */
void MLCC_ISA_NAME(mlcc_f32_pool_max_nhwc_parallel)(const mlcc_parallel *parallel, size_t images, size_t channels,
                                                    const mlcc_pool_geometry *geometry, const float *MLCC_RESTRICT x,
                                                    float *MLCC_RESTRICT y);
void MLCC_ISA_NAME(mlcc_f32_pool_avg_nhwc_parallel)(const mlcc_parallel *parallel, size_t images, size_t channels,
                                                    const mlcc_pool_geometry *geometry, bool count_include_pad,
                                                    const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);

#endif /* MLCC_KERNELS_F32_POOL_H */
