/* Portable float16 <-> float32 array conversion: the reference for any ISA variant (F16C, ...). */
#include "mlcc/kernels/f16-convert.h"

void mlcc_f16_f32_convert__reference(size_t n, const uint16_t *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    for (size_t i = 0; i < n; ++i) {
        y[i] = mlcc_f16_to_f32(x[i]);
    }
}

void mlcc_f32_f16_convert__reference(size_t n, const float *MLCC_RESTRICT x, uint16_t *MLCC_RESTRICT y)
{
    for (size_t i = 0; i < n; ++i) {
        y[i] = mlcc_f32_to_f16(x[i]);
    }
}
