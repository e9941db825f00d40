/* qs8-quantize: a float image's planes (NCHW, one batch) quantized per tensor into channels-last bytes, the
 * layout transpose and the quantization in one pass (QuantizeLinear of a graph input the channels-last region
 * reads, passes/choose_layout):
 *     y[p * planes + c] = (int32_t)clamp(rintf(x[c * pixels + p] / scale) + zero, lo, hi)
 * stored as its low byte (uint8 or int8 outputs), clamped as QuantizeLinear's template does (NaN to lo), with
 * rintf in the default rounding mode: bit-identical to it. */
#ifndef MLCC_KERNELS_QS8_QUANTIZE_H
#define MLCC_KERNELS_QS8_QUANTIZE_H

#include "mlcc/runtime.h"

void mlcc_qs8_quantize_planes__reference(size_t planes, size_t pixels, const float *MLCC_RESTRICT x, float scale,
                                         float zero, float lo, float hi, uint8_t *MLCC_RESTRICT y);
void mlcc_qs8_quantize_planes__avx512(size_t planes, size_t pixels, const float *MLCC_RESTRICT x, float scale,
                                      float zero, float lo, float hi, uint8_t *MLCC_RESTRICT y);

#endif /* MLCC_KERNELS_QS8_QUANTIZE_H */
