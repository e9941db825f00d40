/* f32 softmax and log-softmax: along contiguous rows or a strided axis. */
#include <math.h>

#include "mlcc/kernels/f32-softmax.h"

/* Softmax and log-softmax along contiguous rows. */

static float row_max(size_t n, const float *MLCC_RESTRICT x)
{
    float m = x[0];
    for (size_t i = 1; i < n; ++i) m = x[i] > m ? x[i] : m;
    return m;
}

void mlcc_f32_softmax_rows__reference(size_t rows, size_t n, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    if (n == 0) return;
    for (size_t r = 0; r < rows; ++r, x += n, y += n) {
        const float m = row_max(n, x);
        float sum = 0.0f;
        for (size_t i = 0; i < n; ++i) {
            const float e = expf(x[i] - m);
            y[i] = e;
            sum += e;
        }
        const float inv_sum = 1.0f / sum;
        for (size_t i = 0; i < n; ++i) y[i] *= inv_sum;
    }
}

void mlcc_f32_logsoftmax_rows__reference(size_t rows, size_t n, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    if (n == 0) return;
    for (size_t r = 0; r < rows; ++r, x += n, y += n) {
        const float m = row_max(n, x);
        float sum = 0.0f;
        for (size_t i = 0; i < n; ++i) sum += expf(x[i] - m);
        const float shift = m + logf(sum);
        for (size_t i = 0; i < n; ++i) y[i] = x[i] - shift;
    }
}

/* Softmax and log-softmax along the middle axis of [outer, n, inner].
 * Every loop runs across inner, contiguous in x and y, keeping one max and one sum per inner position. */

/* m[i] = max over j of x[j, i]; sum[i] = sum over j of exp(x[j, i] - m[i]); y[j, i] = that exponential
 * when y is given. */
static void max_and_sum(size_t n, size_t inner, const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y,
                        float *MLCC_RESTRICT m, float *MLCC_RESTRICT sum)
{
    for (size_t i = 0; i < inner; ++i) {
        m[i] = x[i];
        sum[i] = 0.0f;
    }
    for (size_t j = 1; j < n; ++j) {
        const float *MLCC_RESTRICT xj = x + j * inner;
        for (size_t i = 0; i < inner; ++i) m[i] = xj[i] > m[i] ? xj[i] : m[i];
    }
    for (size_t j = 0; j < n; ++j) {
        const float *MLCC_RESTRICT xj = x + j * inner;
        if (y != NULL) {
            float *MLCC_RESTRICT yj = y + j * inner;
            for (size_t i = 0; i < inner; ++i) {
                yj[i] = expf(xj[i] - m[i]);
                sum[i] += yj[i];
            }
        } else {
            for (size_t i = 0; i < inner; ++i) sum[i] += expf(xj[i] - m[i]);
        }
    }
}

#define SOFTMAX_STRIDED mlcc_f32_softmax_strided__reference
#define LOGSOFTMAX_STRIDED mlcc_f32_logsoftmax_strided__reference
#include "strided.h"
