/* The strided softmax and log-softmax drivers over [outer, n, inner], one copy for the reference and the shim
 * form: the including file defines max_and_sum (each column's maximum and sum of exp, the arithmetic the two
 * forms compute their own way) and the entry points' names SOFTMAX_STRIDED and LOGSOFTMAX_STRIDED. */

void SOFTMAX_STRIDED(size_t outer, size_t n, size_t inner, const float *MLCC_RESTRICT x,
                     float *MLCC_RESTRICT y, float *MLCC_RESTRICT work)
{
    float *MLCC_RESTRICT m = work;
    float *MLCC_RESTRICT scale = work + inner;
    if (n == 0) return;
    for (size_t o = 0; o < outer; ++o, x += n * inner, y += n * inner) {
        max_and_sum(n, inner, x, y, m, scale);
        for (size_t i = 0; i < inner; ++i) scale[i] = 1.0f / scale[i];
        for (size_t j = 0; j < n; ++j) {
            float *MLCC_RESTRICT yj = y + j * inner;
            for (size_t i = 0; i < inner; ++i) yj[i] *= scale[i];
        }
    }
}

void LOGSOFTMAX_STRIDED(size_t outer, size_t n, size_t inner, const float *MLCC_RESTRICT x,
                        float *MLCC_RESTRICT y, float *MLCC_RESTRICT work)
{
    float *MLCC_RESTRICT m = work;
    float *MLCC_RESTRICT shift = work + inner;
    if (n == 0) return;
    for (size_t o = 0; o < outer; ++o, x += n * inner, y += n * inner) {
        max_and_sum(n, inner, x, NULL, m, shift);
        for (size_t i = 0; i < inner; ++i) shift[i] = m[i] + logf(shift[i]);
        for (size_t j = 0; j < n; ++j) {
            const float *MLCC_RESTRICT xj = x + j * inner;
            float *MLCC_RESTRICT yj = y + j * inner;
            for (size_t i = 0; i < inner; ++i) yj[i] = xj[i] - shift[i];
        }
    }
}
