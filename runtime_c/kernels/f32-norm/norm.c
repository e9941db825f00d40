/* f32 layer normalisation in the vectors of the target's SIMD shim (mlcc/simd.h); a target without one
 * runs the same loops lane by lane (the tails). */
#include <math.h>

#include "mlcc/kernels/f32-norm.h"
#include "mlcc/simd.h"

/* sum of x[0..n) */
static float row_sum(size_t n, const float *MLCC_RESTRICT x)
{
    size_t i = 0;
    float sum = 0.0f;
#if MLCC_HAVE_F32V
    const size_t lanes = MLCC_F32V_LANES;
    mlcc_f32v acc0 = mlcc_f32v_zero(), acc1 = mlcc_f32v_zero();
    for (; i + 2u * lanes <= n; i += 2u * lanes) {
        acc0 = mlcc_f32v_add(acc0, mlcc_f32v_load(x + i));
        acc1 = mlcc_f32v_add(acc1, mlcc_f32v_load(x + i + lanes));
    }
    for (; i + lanes <= n; i += lanes) acc0 = mlcc_f32v_add(acc0, mlcc_f32v_load(x + i));
    sum = mlcc_f32v_reduce_add(mlcc_f32v_add(acc0, acc1));
#endif
    for (; i < n; ++i) sum += x[i];
    return sum;
}

/* sum of (x[i] - mean)^2 over [0, n) */
static float row_squares(size_t n, const float *MLCC_RESTRICT x, float mean)
{
    size_t i = 0;
    float sum = 0.0f;
#if MLCC_HAVE_F32V
    const size_t lanes = MLCC_F32V_LANES;
    const mlcc_f32v m = mlcc_f32v_splat(mean);
    mlcc_f32v acc0 = mlcc_f32v_zero(), acc1 = mlcc_f32v_zero();
    for (; i + 2u * lanes <= n; i += 2u * lanes) {
        const mlcc_f32v d0 = mlcc_f32v_sub(mlcc_f32v_load(x + i), m);
        const mlcc_f32v d1 = mlcc_f32v_sub(mlcc_f32v_load(x + i + lanes), m);
        acc0 = mlcc_f32v_fma(acc0, d0, d0);
        acc1 = mlcc_f32v_fma(acc1, d1, d1);
    }
    for (; i + lanes <= n; i += lanes) {
        const mlcc_f32v d = mlcc_f32v_sub(mlcc_f32v_load(x + i), m);
        acc0 = mlcc_f32v_fma(acc0, d, d);
    }
    sum = mlcc_f32v_reduce_add(mlcc_f32v_add(acc0, acc1));
#endif
    for (; i < n; ++i) sum += (x[i] - mean) * (x[i] - mean);
    return sum;
}

/* Mean and variance in two passes over the row (it stays in L1), as the scalar reference takes them. */
void MLCC_ISA_NAME(mlcc_f32_norm_layer)(size_t rows, size_t n, const float *MLCC_RESTRICT x, const float *MLCC_RESTRICT scale,
                                        const float *MLCC_RESTRICT bias, float epsilon, float *MLCC_RESTRICT y)
{
    if (n == 0) return;
    for (size_t r = 0; r < rows; ++r, x += n, y += n) {
        const float mean = row_sum(n, x) / (float)n;
        const float inv_std = 1.0f / sqrtf(row_squares(n, x, mean) / (float)n + epsilon);
        size_t i = 0;
#if MLCC_HAVE_F32V
        const mlcc_f32v m = mlcc_f32v_splat(mean), s = mlcc_f32v_splat(inv_std);
        for (; i + MLCC_F32V_LANES <= n; i += MLCC_F32V_LANES) {
            const mlcc_f32v v = mlcc_f32v_mul(mlcc_f32v_mul(mlcc_f32v_sub(mlcc_f32v_load(x + i), m), s),
                                              mlcc_f32v_load(scale + i));
            mlcc_f32v_store(y + i, bias != NULL ? mlcc_f32v_add(v, mlcc_f32v_load(bias + i)) : v);
        }
#endif
        for (; i < n; ++i) y[i] = (x[i] - mean) * inv_std * scale[i] + (bias != NULL ? bias[i] : 0.0f);
    }
}
