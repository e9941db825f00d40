/* f32-lrn: the window sum of squares is accumulated one channel offset at a time, so every loop walks
 * contiguous memory, then scaled by (bias + alpha_over_size * sum)^-beta. */
#include <math.h>

#include "mlcc/kernels/f32-lrn.h"

/* y[i] = x[i] * (bias + alpha_over_size * y[i])^-beta for n elements, y holding the window sums. */
static void scale_by_window(size_t n, float alpha_over_size, float beta, float bias,
                            const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    if (beta == 0.75f) {
        for (size_t i = 0; i < n; ++i) {
            const float t = bias + alpha_over_size * y[i];
            y[i] = x[i] / sqrtf(t * sqrtf(t));
        }
    } else {
        for (size_t i = 0; i < n; ++i) y[i] = x[i] * powf(bias + alpha_over_size * y[i], -beta);
    }
}

void mlcc_f32_lrn_nchw__reference(size_t batch, size_t channels, size_t inner, size_t size, float alpha_over_size,
                                  float beta, float bias, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    const size_t before = (size - 1) / 2, after = size / 2;
    for (size_t b = 0; b < batch; ++b, x += channels * inner, y += channels * inner) {
        for (size_t c = 0; c < channels; ++c) {
            const size_t first = c >= before ? c - before : 0, last = MLCC_MIN(channels - 1, c + after);
            float *MLCC_RESTRICT yc = y + c * inner;
            for (size_t i = 0; i < inner; ++i) yc[i] = 0.0f;
            for (size_t k = first; k <= last; ++k) {
                const float *MLCC_RESTRICT xk = x + k * inner;
                for (size_t i = 0; i < inner; ++i) yc[i] += xk[i] * xk[i];
            }
            scale_by_window(inner, alpha_over_size, beta, bias, x + c * inner, yc);
        }
    }
}

void mlcc_f32_lrn_nhwc__reference(size_t pixels, size_t channels, size_t size, float alpha_over_size,
                                  float beta, float bias, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    const size_t before = (size - 1) / 2, after = size / 2;
    for (size_t p = 0; p < pixels; ++p, x += channels, y += channels) {
        for (size_t c = 0; c < channels; ++c) y[c] = 0.0f;
        /* channel c gathers c + d for d in -before .. after, where that is a channel */
        for (size_t k = 0; k <= before + after; ++k) {
            const size_t lo = k < before ? before - k : 0;  /* first c with c + k - before >= 0 */
            const size_t shift = k > before ? k - before : 0;
            if (lo >= channels || shift >= channels) continue;
            const float *MLCC_RESTRICT xs = x + lo + k - before;
            const size_t n = channels - lo - shift;
            for (size_t i = 0; i < n; ++i) y[lo + i] += xs[i] * xs[i];
        }
        scale_by_window(channels, alpha_over_size, beta, bias, x, y);
    }
}
