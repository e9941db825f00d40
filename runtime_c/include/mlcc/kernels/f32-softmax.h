/* f32 softmax and log-softmax along one axis, viewed as [outer, n, inner]; numerically stable (the max
 * along the axis is subtracted before exponentiating). */
#ifndef MLCC_KERNELS_F32_SOFTMAX_H
#define MLCC_KERNELS_F32_SOFTMAX_H

#include "mlcc/runtime.h"

/* Each function comes twice: __<isa>, in the vectors of the target's SIMD shim (mlcc/simd.h, named by
 * mlcc/isa.h) with the vector exp of mlcc/simd/math.h for non-positive arguments (lane by lane with its
 * scalar form where there is no shim); __reference, with the C library's expf, the test oracle. */

/* Along contiguous rows: x and y are [rows, n]. */
void MLCC_ISA_NAME(mlcc_f32_softmax_rows)(size_t rows, size_t n, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void MLCC_ISA_NAME(mlcc_f32_logsoftmax_rows)(size_t rows, size_t n, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void mlcc_f32_softmax_rows__reference(size_t rows, size_t n, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void mlcc_f32_logsoftmax_rows__reference(size_t rows, size_t n, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y);

/* Along the middle axis of [outer, n, inner], vectorised across inner; work holds 2 * inner floats. */
void MLCC_ISA_NAME(mlcc_f32_softmax_strided)(size_t outer, size_t n, size_t inner, const float *MLCC_RESTRICT x,
                                             float *MLCC_RESTRICT y, float *MLCC_RESTRICT work);
void MLCC_ISA_NAME(mlcc_f32_logsoftmax_strided)(size_t outer, size_t n, size_t inner, const float *MLCC_RESTRICT x,
                                                float *MLCC_RESTRICT y, float *MLCC_RESTRICT work);
void mlcc_f32_softmax_strided__reference(size_t outer, size_t n, size_t inner, const float *MLCC_RESTRICT x,
                                         float *MLCC_RESTRICT y, float *MLCC_RESTRICT work);
void mlcc_f32_logsoftmax_strided__reference(size_t outer, size_t n, size_t inner, const float *MLCC_RESTRICT x,
                                            float *MLCC_RESTRICT y, float *MLCC_RESTRICT work);

#endif /* MLCC_KERNELS_F32_SOFTMAX_H */
