/* f32-rnn: the per-time-step cell updates of ONNX RNN (Elman), GRU and LSTM, float32.
 *
 * The gate matrix products run on f32-gemm; these kernels take their results and apply everything
 * elementwise: add the input projections, peepholes, clip, the gate activations and the state update.
 * A step covers every batch row at once. Rows are addressed through strides, so the hidden and cell
 * states may live directly in Y_h / Y_c (either layout) and the step's output in Y.
 *
 * Per batch row b, at time step t:
 *   gates_x + b * gx_stride   the input projection X[t, b] W^T + Wb, one row of gate pre-activations
 *   gates + b * G * hidden    the recurrent projection H[t-1, b] R^T + Rb, G gates (overwritten as work space)
 *   h + b * h_stride          the hidden state, updated in place; c likewise (LSTM)
 *   y + b * y_stride          receives the new hidden state (y may be NULL)
 * With seq_lens, a row whose sequence is over (t >= seq_lens[b]) keeps its state and gets a zero output.
 */
#ifndef MLCC_KERNELS_F32_RNN_H
#define MLCC_KERNELS_F32_RNN_H

#include "mlcc/runtime.h"

/* The activation functions ONNX allows in recurrent cells. */
enum mlcc_f32_rnn_activation_kind {
    MLCC_F32_RNN_SIGMOID,
    MLCC_F32_RNN_TANH,
    MLCC_F32_RNN_RELU,
    MLCC_F32_RNN_HARD_SIGMOID,      /* min(max(alpha * x + beta, 0), 1) */
    MLCC_F32_RNN_AFFINE,            /* alpha * x + beta */
    MLCC_F32_RNN_LEAKY_RELU,        /* x >= 0 ? x : alpha * x */
    MLCC_F32_RNN_THRESHOLDED_RELU,  /* x > alpha ? x : 0 */
    MLCC_F32_RNN_SCALED_TANH,       /* alpha * tanh(beta * x) */
    MLCC_F32_RNN_ELU,               /* x >= 0 ? x : alpha * (exp(x) - 1) */
    MLCC_F32_RNN_SOFTSIGN,          /* x / (1 + |x|) */
    MLCC_F32_RNN_SOFTPLUS           /* log(1 + exp(x)) */
};

struct mlcc_f32_rnn_activation {
    enum mlcc_f32_rnn_activation_kind kind;
    float alpha;
    float beta;
};

/* One direction of one recurrent node: what stays fixed over its time loop. */
struct mlcc_f32_rnn_cell {
    size_t batch;
    size_t hidden;
    struct mlcc_f32_rnn_activation f;  /* the gates (LSTM, GRU), or the only activation (RNN) */
    struct mlcc_f32_rnn_activation g;  /* the cell / candidate input (LSTM, GRU) */
    struct mlcc_f32_rnn_activation h;  /* the cell output (LSTM) */
    float clip;                        /* bound on activation inputs, |x| <= clip; 0: no clip */
    const int32_t *seq_lens;           /* [batch], or NULL when every sequence is full length */
    const float *peephole;             /* LSTM [3 * hidden] for gates i, o, f, or NULL */
    bool input_forget;                 /* LSTM: f = 1 - i */
    bool linear_before_reset;          /* GRU: r applies to (H R_h^T + Rb_h) instead of H */
};

/* x[i] = act(x[i]) for i < n. */
void mlcc_f32_rnn_activate__reference(const struct mlcc_f32_rnn_activation *act, size_t n, float *x);

/* A state before the first step: state row b = initial row b, or zeros when initial is NULL or when
 * sequence b is empty (it has no last step; onnxruntime reports zeros). */
void mlcc_f32_rnn_init_state__reference(const struct mlcc_f32_rnn_cell *cell, const float *initial,
                                        size_t initial_stride, float *state, size_t state_stride);

/* RNN (G = 1): H = f(gates_x + gates). */
void mlcc_f32_rnn_elman_step__reference(const struct mlcc_f32_rnn_cell *cell, size_t t,
                                        const float *gates_x, size_t gx_stride, float *gates,
                                        float *h, size_t h_stride, float *y, size_t y_stride);

/* LSTM (G = 4), gates in ONNX order i, o, f, c:
 * i = f(x_i + p_i * C), f = f(x_f + p_f * C) (or 1 - i), C' = f * C + i * g(x_c),
 * o = f(x_o + p_o * C'), H = o * h(C'). */
void mlcc_f32_rnn_lstm_step__reference(const struct mlcc_f32_rnn_cell *cell, size_t t,
                                       const float *gates_x, size_t gx_stride, float *gates,
                                       float *h, size_t h_stride, float *c, size_t c_stride,
                                       float *y, size_t y_stride);

/* GRU (G = 3), first half, gates in ONNX order z, r, h: z and r activated in place in gates.
 * Without linear_before_reset, rh row b (hidden floats) receives r * H, the operand of the product by R_h. */
void mlcc_f32_rnn_gru_gates__reference(const struct mlcc_f32_rnn_cell *cell, size_t t,
                                       const float *gates_x, size_t gx_stride, float *gates,
                                       const float *h, size_t h_stride, float *MLCC_RESTRICT rh);

/* GRU, second half: the h column block of gates holds (r * H) R_h^T + Rb_h, or with linear_before_reset
 * H R_h^T + Rb_h; then H = (1 - z) * g(x_h + that, times r when linear before reset) + z * H. */
void mlcc_f32_rnn_gru_update__reference(const struct mlcc_f32_rnn_cell *cell, size_t t,
                                        const float *gates_x, size_t gx_stride, float *gates,
                                        float *h, size_t h_stride, float *y, size_t y_stride);

#endif /* MLCC_KERNELS_F32_RNN_H */
