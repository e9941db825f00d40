/* float16 <-> float32 over contiguous arrays (Cast between the two). float16 is stored as its bits in
 * uint16_t; the element conversions, exact and rounding to nearest even, are in mlcc/half.h, which this
 * header brings along for generated code converting single elements. */
#ifndef MLCC_KERNELS_F16_CONVERT_H
#define MLCC_KERNELS_F16_CONVERT_H

#include "mlcc/half.h"
#include "mlcc/runtime.h"

void mlcc_f16_f32_convert__reference(size_t n, const uint16_t *MLCC_RESTRICT x, float *MLCC_RESTRICT y);
void mlcc_f32_f16_convert__reference(size_t n, const float *MLCC_RESTRICT x, uint16_t *MLCC_RESTRICT y);

#endif /* MLCC_KERNELS_F16_CONVERT_H */
