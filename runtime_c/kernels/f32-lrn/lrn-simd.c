/* f32-lrn on the SIMD shim (mlcc/simd.h), matching the __reference forms (lrn-reference.c) bit for bit: the same window
 * sum in the same order (terms outside the channels add +0), the same t * sqrt(t) then sqrt, the same
 * division. Channels-first: vectors along the contiguous inner axis, the window one plane apart.
 * Channels-last: vectors of a pixel's channels, the window as `size` loads shifted by one channel each;
 * a vector whose window crosses the pixel's first or last channel reads a zero-padded copy instead.
 * A beta other than 0.75 keeps the vector sums and takes powf per element. A target without a shim, or a
 * window wider than the padded copy holds, runs the reference forms. */
#include <math.h>

#include "mlcc/kernels/f32-lrn.h"
#include "mlcc/simd.h"

#if MLCC_HAVE_F32V
#include "mlcc/simd/math.h"

/* The widest halo (size - 1 channels around a vector) the padded copy holds. */
#define MAX_HALO 64u

/* x / (bias + alpha_over_size * sum)^0.75, as 1 / sqrt(t * sqrt(t)) */
static inline mlcc_f32v scale_075(mlcc_f32v x, mlcc_f32v sum, mlcc_f32v alpha_over_size, mlcc_f32v bias)
{
    const mlcc_f32v t = mlcc_f32v_fma(bias, alpha_over_size, sum);
    return mlcc_f32v_div(x, mlcc_f32v_sqrt(mlcc_f32v_mul(t, mlcc_f32v_sqrt(t))));
}

/* The scalar form of one element: x / t^0.75 for beta 0.75, else x * t^-beta. */
static inline float scale_one(float x, float sum, float alpha_over_size, float beta, float bias)
{
    const float t = bias + alpha_over_size * sum;
    return beta == 0.75f ? x / sqrtf(t * sqrtf(t)) : x * powf(t, -beta);
}

/* y[i] = x[i] * (bias + alpha_over_size * y[i])^-beta over n elements, y holding the window sums */
static void scale_pow(size_t n, float alpha_over_size, float beta, float bias, const float *MLCC_RESTRICT x,
                      float *MLCC_RESTRICT y)
{
    for (size_t i = 0; i < n; ++i) y[i] = scale_one(x[i], y[i], alpha_over_size, beta, bias);
}

void MLCC_ISA_NAME(mlcc_f32_lrn_nchw)(size_t batch, size_t channels, size_t inner, size_t size, float alpha_over_size,
                                      float beta, float bias, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    const size_t before = (size - 1) / 2, after = size / 2, lanes = MLCC_F32V_LANES;
    const size_t vectors_end = inner - inner % lanes;
    const mlcc_f32v va = mlcc_f32v_splat(alpha_over_size), vb = mlcc_f32v_splat(bias);
    const int fast = beta == 0.75f;
    for (size_t b = 0; b < batch; ++b, x += channels * inner, y += channels * inner) {
        for (size_t c = 0; c < channels; ++c) {
            const size_t first = c >= before ? c - before : 0, last = MLCC_MIN(channels - 1, c + after);
            const float *xc = x + c * inner;
            float *MLCC_RESTRICT yc = y + c * inner;
            for (size_t i = 0; i < vectors_end; i += lanes) {
                mlcc_f32v sum = mlcc_f32v_zero();
                for (size_t k = first; k <= last; ++k) {
                    const mlcc_f32v v = mlcc_f32v_load(x + k * inner + i);
                    sum = mlcc_f32v_fma(sum, v, v);
                }
                mlcc_f32v_store(yc + i, fast ? scale_075(mlcc_f32v_load(xc + i), sum, va, vb) : sum);
            }
            if (!fast) scale_pow(vectors_end, alpha_over_size, beta, bias, xc, yc);
            for (size_t i = vectors_end; i < inner; ++i) {
                float sum = 0.0f;
                for (size_t k = first; k <= last; ++k) sum += x[k * inner + i] * x[k * inner + i];
                yc[i] = scale_one(xc[i], sum, alpha_over_size, beta, bias);
            }
        }
    }
}

/* The sum of squares over src[k .. k + lanes) for k < size, in the order of k */
static inline mlcc_f32v window_sum(const float *src, size_t size)
{
    mlcc_f32v sum = mlcc_f32v_zero();
    for (size_t k = 0; k < size; ++k) {
        const mlcc_f32v v = mlcc_f32v_load(src + k);
        sum = mlcc_f32v_fma(sum, v, v);
    }
    return sum;
}

/* window_sum unrolled for size 5, the zoo's (AlexNet, GoogLeNet, ZFNet) */
static inline mlcc_f32v window_sum_5(const float *src)
{
    const mlcc_f32v v0 = mlcc_f32v_load(src), v1 = mlcc_f32v_load(src + 1), v2 = mlcc_f32v_load(src + 2);
    const mlcc_f32v v3 = mlcc_f32v_load(src + 3), v4 = mlcc_f32v_load(src + 4);
    mlcc_f32v sum = mlcc_f32v_mul(v0, v0);
    sum = mlcc_f32v_fma(sum, v1, v1);
    sum = mlcc_f32v_fma(sum, v2, v2);
    sum = mlcc_f32v_fma(sum, v3, v3);
    return mlcc_f32v_fma(sum, v4, v4);
}

void MLCC_ISA_NAME(mlcc_f32_lrn_nhwc)(size_t pixels, size_t channels, size_t size, float alpha_over_size,
                                      float beta, float bias, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    const size_t before = (size - 1) / 2, after = size / 2, lanes = MLCC_F32V_LANES;
    if (size - 1 > MAX_HALO) {
        mlcc_f32_lrn_nhwc__reference(pixels, channels, size, alpha_over_size, beta, bias, x, y);
        return;
    }
    const mlcc_f32v va = mlcc_f32v_splat(alpha_over_size), vb = mlcc_f32v_splat(bias);
    const int fast = beta == 0.75f;
    float padded[MLCC_F32V_LANES + MAX_HALO], out[MLCC_F32V_LANES];
    for (size_t p = 0; p < pixels; ++p, x += channels, y += channels) {
        for (size_t c0 = 0; c0 < channels; c0 += lanes) {
            const size_t n = MLCC_MIN(lanes, channels - c0);
            /* window of lane j: channels c0 + j - before .. c0 + j + after, read from src + j */
            const float *src = padded, *xv = padded + before;
            if (c0 >= before && c0 + lanes + after <= channels) {
                src = x + c0 - before;
                xv = x + c0;
            } else {
                for (size_t j = 0; j < lanes + before + after; ++j) {
                    const size_t ch = c0 + j - before;  /* wraps past SIZE_MAX below channel 0 */
                    padded[j] = c0 + j >= before && ch < channels ? x[ch] : 0.0f;
                }
            }
            const mlcc_f32v sum = size == 5 ? window_sum_5(src) : window_sum(src, size);
            const mlcc_f32v r = fast ? scale_075(mlcc_f32v_load(xv), sum, va, vb) : sum;
            if (n == lanes) {
                mlcc_f32v_store(y + c0, r);
            } else {
                mlcc_f32v_store(out, r);
                for (size_t j = 0; j < n; ++j) y[c0 + j] = out[j];
            }
        }
        if (!fast) scale_pow(channels, alpha_over_size, beta, bias, x, y);
    }
}

#else

void MLCC_ISA_NAME(mlcc_f32_lrn_nchw)(size_t batch, size_t channels, size_t inner, size_t size, float alpha_over_size,
                                      float beta, float bias, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    mlcc_f32_lrn_nchw__reference(batch, channels, inner, size, alpha_over_size, beta, bias, x, y);
}

void MLCC_ISA_NAME(mlcc_f32_lrn_nhwc)(size_t pixels, size_t channels, size_t size, float alpha_over_size,
                                      float beta, float bias, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    mlcc_f32_lrn_nhwc__reference(pixels, channels, size, alpha_over_size, beta, bias, x, y);
}

#endif
