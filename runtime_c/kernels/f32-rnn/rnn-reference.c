/* f32 recurrent cells: the elementwise half of one time step of RNN, GRU and LSTM. */
#include <math.h>

#include "mlcc/kernels/f32-rnn.h"

static float sigmoid(float x)
{
    /* exp of a non-positive argument only: no overflow for large |x| */
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    const float e = expf(x);
    return e / (1.0f + e);
}

void mlcc_f32_rnn_activate__reference(const struct mlcc_f32_rnn_activation *act, size_t n, float *x)
{
    const float alpha = act->alpha, beta = act->beta;
    switch (act->kind) {
    case MLCC_F32_RNN_SIGMOID:
        for (size_t i = 0; i < n; ++i) x[i] = sigmoid(x[i]);
        break;
    case MLCC_F32_RNN_TANH:
        for (size_t i = 0; i < n; ++i) x[i] = tanhf(x[i]);
        break;
    case MLCC_F32_RNN_RELU:
        for (size_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
        break;
    case MLCC_F32_RNN_HARD_SIGMOID:
        for (size_t i = 0; i < n; ++i) x[i] = MLCC_MIN(MLCC_MAX(alpha * x[i] + beta, 0.0f), 1.0f);
        break;
    case MLCC_F32_RNN_AFFINE:
        for (size_t i = 0; i < n; ++i) x[i] = alpha * x[i] + beta;
        break;
    case MLCC_F32_RNN_LEAKY_RELU:
        for (size_t i = 0; i < n; ++i) x[i] = x[i] >= 0.0f ? x[i] : alpha * x[i];
        break;
    case MLCC_F32_RNN_THRESHOLDED_RELU:
        for (size_t i = 0; i < n; ++i) x[i] = x[i] > alpha ? x[i] : 0.0f;
        break;
    case MLCC_F32_RNN_SCALED_TANH:
        for (size_t i = 0; i < n; ++i) x[i] = alpha * tanhf(beta * x[i]);
        break;
    case MLCC_F32_RNN_ELU:
        for (size_t i = 0; i < n; ++i) x[i] = x[i] >= 0.0f ? x[i] : alpha * expm1f(x[i]);
        break;
    case MLCC_F32_RNN_SOFTSIGN:
        for (size_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + fabsf(x[i]));
        break;
    case MLCC_F32_RNN_SOFTPLUS:
        /* log(1 + e^x) = max(x, 0) + log(1 + e^-|x|): no overflow */
        for (size_t i = 0; i < n; ++i) x[i] = MLCC_MAX(x[i], 0.0f) + log1pf(expf(-fabsf(x[i])));
        break;
    }
}

/* Is row b still inside its sequence at step t? */
static bool active(const struct mlcc_f32_rnn_cell *cell, size_t b, size_t t)
{
    return cell->seq_lens == NULL || (cell->seq_lens[b] > 0 && t < (size_t)cell->seq_lens[b]);
}

void mlcc_f32_rnn_init_state__reference(const struct mlcc_f32_rnn_cell *cell, const float *initial,
                                        size_t initial_stride, float *state, size_t state_stride)
{
    for (size_t b = 0; b < cell->batch; ++b) {
        const float *src = initial != NULL && active(cell, b, 0) ? initial + b * initial_stride : NULL;
        float *dst = state + b * state_stride;
        for (size_t i = 0; i < cell->hidden; ++i) dst[i] = src != NULL ? src[i] : 0.0f;
    }
}

/* x[i] = min(max(x[i], -bound), bound) unless bound is 0 (no clip). */
static void clip(float bound, size_t n, float *x)
{
    if (bound <= 0.0f) return;
    for (size_t i = 0; i < n; ++i) x[i] = MLCC_MIN(MLCC_MAX(x[i], -bound), bound);
}

/* g[i] += x[i] (+ p[i] * c[i] when p is given). */
static void add_inputs(size_t n, const float *MLCC_RESTRICT x, const float *MLCC_RESTRICT p,
                       const float *MLCC_RESTRICT c, float *MLCC_RESTRICT g)
{
    for (size_t i = 0; i < n; ++i) g[i] += x[i];
    if (p != NULL) {
        for (size_t i = 0; i < n; ++i) g[i] += p[i] * c[i];
    }
}

static void store_row(size_t n, const float *h, float *y)
{
    if (y == NULL) return;
    for (size_t i = 0; i < n; ++i) y[i] = h[i];
}

static void zero_row(size_t n, float *y)
{
    if (y == NULL) return;
    for (size_t i = 0; i < n; ++i) y[i] = 0.0f;
}

void mlcc_f32_rnn_elman_step__reference(const struct mlcc_f32_rnn_cell *cell, size_t t,
                                        const float *gates_x, size_t gx_stride, float *gates,
                                        float *h, size_t h_stride, float *y, size_t y_stride)
{
    const size_t n = cell->hidden;
    for (size_t b = 0; b < cell->batch; ++b) {
        float *yb = y != NULL ? y + b * y_stride : NULL;
        if (!active(cell, b, t)) {
            zero_row(n, yb);
            continue;
        }
        float *MLCC_RESTRICT g = gates + b * n;
        float *MLCC_RESTRICT hb = h + b * h_stride;
        add_inputs(n, gates_x + b * gx_stride, NULL, NULL, g);
        clip(cell->clip, n, g);
        mlcc_f32_rnn_activate__reference(&cell->f, n, g);
        for (size_t i = 0; i < n; ++i) hb[i] = g[i];
        store_row(n, hb, yb);
    }
}

void mlcc_f32_rnn_lstm_step__reference(const struct mlcc_f32_rnn_cell *cell, size_t t,
                                       const float *gates_x, size_t gx_stride, float *gates,
                                       float *h, size_t h_stride, float *c, size_t c_stride,
                                       float *y, size_t y_stride)
{
    const size_t n = cell->hidden;
    const float *p = cell->peephole;
    for (size_t b = 0; b < cell->batch; ++b) {
        float *yb = y != NULL ? y + b * y_stride : NULL;
        if (!active(cell, b, t)) {
            zero_row(n, yb);
            continue;
        }
        const float *MLCC_RESTRICT x = gates_x + b * gx_stride;
        float *MLCC_RESTRICT gi = gates + b * 4 * n;
        float *MLCC_RESTRICT go = gi + n;
        float *MLCC_RESTRICT gf = gi + 2 * n;
        float *MLCC_RESTRICT gc = gi + 3 * n;
        float *MLCC_RESTRICT hb = h + b * h_stride;
        float *MLCC_RESTRICT cb = c + b * c_stride;

        add_inputs(n, x, p, cb, gi);
        clip(cell->clip, n, gi);
        mlcc_f32_rnn_activate__reference(&cell->f, n, gi);
        if (cell->input_forget) {
            for (size_t i = 0; i < n; ++i) gf[i] = 1.0f - gi[i];
        } else {
            add_inputs(n, x + 2 * n, p != NULL ? p + 2 * n : NULL, cb, gf);
            clip(cell->clip, n, gf);
            mlcc_f32_rnn_activate__reference(&cell->f, n, gf);
        }
        add_inputs(n, x + 3 * n, NULL, NULL, gc);
        clip(cell->clip, n, gc);
        mlcc_f32_rnn_activate__reference(&cell->g, n, gc);
        for (size_t i = 0; i < n; ++i) cb[i] = gf[i] * cb[i] + gi[i] * gc[i];

        /* the output gate peeks at the new cell state */
        add_inputs(n, x + n, p != NULL ? p + n : NULL, cb, go);
        clip(cell->clip, n, go);
        mlcc_f32_rnn_activate__reference(&cell->f, n, go);
        for (size_t i = 0; i < n; ++i) gc[i] = cb[i];  /* h(C') in the cell gate's place, now free */
        mlcc_f32_rnn_activate__reference(&cell->h, n, gc);
        for (size_t i = 0; i < n; ++i) hb[i] = go[i] * gc[i];
        store_row(n, hb, yb);
    }
}

void mlcc_f32_rnn_gru_gates__reference(const struct mlcc_f32_rnn_cell *cell, size_t t,
                                       const float *gates_x, size_t gx_stride, float *gates,
                                       const float *h, size_t h_stride, float *MLCC_RESTRICT rh)
{
    const size_t n = cell->hidden;
    for (size_t b = 0; b < cell->batch; ++b) {
        float *rhb = rh != NULL ? rh + b * n : NULL;
        if (!active(cell, b, t)) {
            zero_row(n, rhb);  /* keeps the product by R_h reading defined values */
            continue;
        }
        float *MLCC_RESTRICT zr = gates + b * 3 * n;
        add_inputs(2 * n, gates_x + b * gx_stride, NULL, NULL, zr);
        clip(cell->clip, 2 * n, zr);
        mlcc_f32_rnn_activate__reference(&cell->f, 2 * n, zr);
        if (rhb != NULL) {
            const float *MLCC_RESTRICT r = zr + n;
            const float *MLCC_RESTRICT hb = h + b * h_stride;
            for (size_t i = 0; i < n; ++i) rhb[i] = r[i] * hb[i];
        }
    }
}

void mlcc_f32_rnn_gru_update__reference(const struct mlcc_f32_rnn_cell *cell, size_t t,
                                        const float *gates_x, size_t gx_stride, float *gates,
                                        float *h, size_t h_stride, float *y, size_t y_stride)
{
    const size_t n = cell->hidden;
    for (size_t b = 0; b < cell->batch; ++b) {
        float *yb = y != NULL ? y + b * y_stride : NULL;
        if (!active(cell, b, t)) {
            zero_row(n, yb);
            continue;
        }
        const float *MLCC_RESTRICT z = gates + b * 3 * n;
        const float *MLCC_RESTRICT r = z + n;
        float *MLCC_RESTRICT gh = gates + b * 3 * n + 2 * n;
        const float *MLCC_RESTRICT x = gates_x + b * gx_stride + 2 * n;
        float *MLCC_RESTRICT hb = h + b * h_stride;
        if (cell->linear_before_reset) {
            for (size_t i = 0; i < n; ++i) gh[i] = x[i] + r[i] * gh[i];
        } else {
            for (size_t i = 0; i < n; ++i) gh[i] += x[i];
        }
        clip(cell->clip, n, gh);
        mlcc_f32_rnn_activate__reference(&cell->g, n, gh);
        for (size_t i = 0; i < n; ++i) hb[i] = (1.0f - z[i]) * gh[i] + z[i] * hb[i];
        store_row(n, hb, yb);
    }
}
