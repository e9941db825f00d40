/* f32 normalisations: channel affine, instance, layer (LRN is its own family, f32-lrn). */
#include <math.h>

#include "mlcc/kernels/f32-norm.h"

/* Per-channel affine map (batch normalisation at inference). */

void mlcc_f32_norm_channel_affine__reference(size_t batch, size_t channels, size_t inner, const float *MLCC_RESTRICT x,
                                             const float *MLCC_RESTRICT scale, const float *MLCC_RESTRICT shift,
                                             float *MLCC_RESTRICT y)
{
    for (size_t b = 0; b < batch; ++b) {
        for (size_t c = 0; c < channels; ++c, x += inner, y += inner) {
            const float s = scale[c], t = shift[c];
            for (size_t i = 0; i < inner; ++i) y[i] = x[i] * s + t;
        }
    }
}

void mlcc_f32_norm_batch_fold__reference(size_t channels, const float *gamma, const float *beta, const float *mean,
                                         const float *var, float epsilon, float *MLCC_RESTRICT scale,
                                         float *MLCC_RESTRICT shift)
{
    for (size_t c = 0; c < channels; ++c) {
        scale[c] = gamma[c] / sqrtf(var[c] + epsilon);
        shift[c] = beta[c] - mean[c] * scale[c];
    }
}

/* Instance and layer normalisation. Mean and variance are taken in two passes
 * (the variance around the mean), which stays accurate when the mean is large against the spread. */

/* The mean of x[0..n) and 1 / sqrt(variance + epsilon). */
static void moments(size_t n, const float *MLCC_RESTRICT x, float epsilon, float *mean, float *inv_std)
{
    float sum = 0.0f;
    for (size_t i = 0; i < n; ++i) sum += x[i];
    const float m = sum / (float)n;
    float squares = 0.0f;
    for (size_t i = 0; i < n; ++i) {
        const float d = x[i] - m;
        squares += d * d;
    }
    *mean = m;
    *inv_std = 1.0f / sqrtf(squares / (float)n + epsilon);
}

void mlcc_f32_norm_instance__reference(size_t batch, size_t channels, size_t inner, const float *MLCC_RESTRICT x,
                                       const float *MLCC_RESTRICT scale, const float *MLCC_RESTRICT bias, float epsilon,
                                       float *MLCC_RESTRICT y)
{
    if (inner == 0) return;
    for (size_t b = 0; b < batch; ++b) {
        for (size_t c = 0; c < channels; ++c, x += inner, y += inner) {
            float mean, inv_std;
            moments(inner, x, epsilon, &mean, &inv_std);
            /* y = (x - mean) * inv_std * scale + bias, as one multiply-add per element */
            const float s = inv_std * scale[c];
            const float t = bias[c] - mean * s;
            for (size_t i = 0; i < inner; ++i) y[i] = x[i] * s + t;
        }
    }
}

void mlcc_f32_norm_layer__reference(size_t rows, size_t n, const float *MLCC_RESTRICT x, const float *MLCC_RESTRICT scale,
                                    const float *MLCC_RESTRICT bias, float epsilon, float *MLCC_RESTRICT y)
{
    if (n == 0) return;
    for (size_t r = 0; r < rows; ++r, x += n, y += n) {
        float mean, inv_std;
        moments(n, x, epsilon, &mean, &inv_std);
        if (bias != NULL) {
            for (size_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv_std * scale[i] + bias[i];
        } else {
            for (size_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * inv_std * scale[i];
        }
    }
}
