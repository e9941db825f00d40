/* qs8-quantize's oracle (qs8-quantize.h), plain C. */
#include <math.h>

#include "mlcc/kernels/qs8-quantize.h"

void mlcc_qs8_quantize_planes__reference(size_t planes, size_t pixels, const float *MLCC_RESTRICT x, float scale,
                                         float zero, float lo, float hi, uint8_t *MLCC_RESTRICT y) {
    for (size_t p = 0; p < pixels; ++p) {
        for (size_t c = 0; c < planes; ++c) {
            const float v = rintf(x[c * pixels + p] / scale) + zero;
            y[p * planes + c] = (uint8_t)(int32_t)(v > lo ? (v < hi ? v : hi) : lo);
        }
    }
}
