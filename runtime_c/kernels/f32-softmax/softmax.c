/* f32 softmax and log-softmax in the vectors of the target's SIMD shim (mlcc/simd.h), with the vector exp
 * of mlcc/simd/math.h for x - max <= 0 (mlcc_f32v_exp_nonpositive: results below the smallest normal float,
 * next to the max's 1, are 0); a target without a shim runs the same loops lane by lane with its scalar form. */
#include <math.h>

#include "mlcc/kernels/f32-softmax.h"
#include "mlcc/simd.h"
#if MLCC_HAVE_F32V
#include "mlcc/simd/math.h"
#else
#include "mlcc/simd/math-scalar.h"
#endif

static float row_max(size_t n, const float *MLCC_RESTRICT x)
{
    size_t i = 0;
    float m = x[0];
#if MLCC_HAVE_F32V
    if (n >= MLCC_F32V_LANES) {
        mlcc_f32v acc = mlcc_f32v_load(x);
        for (i = MLCC_F32V_LANES; i + MLCC_F32V_LANES <= n; i += MLCC_F32V_LANES)
            acc = mlcc_f32v_max(acc, mlcc_f32v_load(x + i));
        m = mlcc_f32v_reduce_max(acc);
    }
#endif
    for (; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}

/* y[i] = exp(x[i] - m) (y may be NULL: not stored); returns their sum. */
static float exp_and_sum(size_t n, const float *MLCC_RESTRICT x, float m, float *MLCC_RESTRICT y)
{
    size_t i = 0;
    float sum = 0.0f;
#if MLCC_HAVE_F32V
    const mlcc_f32v vm = mlcc_f32v_splat(m);
    mlcc_f32v acc = mlcc_f32v_zero();
    for (; i + MLCC_F32V_LANES <= n; i += MLCC_F32V_LANES) {
        const mlcc_f32v e = mlcc_f32v_exp_nonpositive(mlcc_f32v_sub(mlcc_f32v_load(x + i), vm));
        if (y != NULL) mlcc_f32v_store(y + i, e);
        acc = mlcc_f32v_add(acc, e);
    }
    sum = mlcc_f32v_reduce_add(acc);
#endif
    for (; i < n; ++i) {
        const float e = mlcc_f32_exp_nonpositive(x[i] - m);
        if (y != NULL) y[i] = e;
        sum += e;
    }
    return sum;
}

void MLCC_ISA_NAME(mlcc_f32_softmax_rows)(size_t rows, size_t n, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    if (n == 0) return;
    for (size_t r = 0; r < rows; ++r, x += n, y += n) mlcc_f32_scale_row(n, 1.0f / exp_and_sum(n, x, row_max(n, x), y), y);
}

void MLCC_ISA_NAME(mlcc_f32_logsoftmax_rows)(size_t rows, size_t n, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    if (n == 0) return;
    for (size_t r = 0; r < rows; ++r, x += n, y += n) {
        const float m = row_max(n, x);
        const float shift = m + logf(exp_and_sum(n, x, m, NULL));
        size_t i = 0;
#if MLCC_HAVE_F32V
        const mlcc_f32v vs = mlcc_f32v_splat(shift);
        for (; i + MLCC_F32V_LANES <= n; i += MLCC_F32V_LANES)
            mlcc_f32v_store(y + i, mlcc_f32v_sub(mlcc_f32v_load(x + i), vs));
#endif
        for (; i < n; ++i) y[i] = x[i] - shift;
    }
}

/* Along the middle axis of [outer, n, inner]: every loop runs across inner, contiguous in x and y, with one
 * max and one sum per inner position in work. */

/* m[i] = max over j of x[j, i]; sum[i] = sum over j of exp(x[j, i] - m[i]), stored in y[j, i] when y is
 * given. */
static void max_and_sum(size_t n, size_t inner, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y,
                        float *MLCC_RESTRICT m, float *MLCC_RESTRICT sum)
{
    size_t i = 0;
#if MLCC_HAVE_F32V
    for (; i + MLCC_F32V_LANES <= inner; i += MLCC_F32V_LANES) {
        mlcc_f32v vm = mlcc_f32v_load(x + i), vs = mlcc_f32v_zero();
        for (size_t j = 1; j < n; ++j) vm = mlcc_f32v_max(vm, mlcc_f32v_load(x + j * inner + i));
        for (size_t j = 0; j < n; ++j) {
            const mlcc_f32v e = mlcc_f32v_exp_nonpositive(mlcc_f32v_sub(mlcc_f32v_load(x + j * inner + i), vm));
            if (y != NULL) mlcc_f32v_store(y + j * inner + i, e);
            vs = mlcc_f32v_add(vs, e);
        }
        mlcc_f32v_store(m + i, vm);
        mlcc_f32v_store(sum + i, vs);
    }
#endif
    for (; i < inner; ++i) {
        float mi = x[i], si = 0.0f;
        for (size_t j = 1; j < n; ++j) mi = x[j * inner + i] > mi ? x[j * inner + i] : mi;
        for (size_t j = 0; j < n; ++j) {
            const float e = mlcc_f32_exp_nonpositive(x[j * inner + i] - mi);
            if (y != NULL) y[j * inner + i] = e;
            si += e;
        }
        m[i] = mi;
        sum[i] = si;
    }
}

#define SOFTMAX_STRIDED MLCC_ISA_NAME(mlcc_f32_softmax_strided)
#define LOGSOFTMAX_STRIDED MLCC_ISA_NAME(mlcc_f32_logsoftmax_strided)
#include "strided.h"
