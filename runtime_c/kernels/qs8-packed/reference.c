/* qs8-packed's oracle and portable fallback: one output value at a time from the packed panels (see
 * qs8-packed.h). */
#include "mlcc/kernels/qs8-packed.h"

void mlcc_qs8_packed_gemm__reference(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                     const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const size_t panel = mlcc_qs8_packed_panel_bytes(k);
    for (size_t i = 0; i < m; ++i) {
        const uint8_t *ai = a + i * lda;
        for (size_t j = 0; j < n; ++j) {
            const int8_t *quads = packed + (j / MLCC_QS8_PACKED_NR) * panel + 64;
            const size_t column = j % MLCC_QS8_PACKED_NR;
            int32_t acc = rq->bias[j];
            for (size_t p = 0; p < k; ++p) {
                acc += (int32_t)(int8_t)(ai[p] ^ a_flip) * (int32_t)quads[(p / 4) * 64 + column * 4 + p % 4];
            }
            c[i * ldc + j] = mlcc_qs8_requantize(acc, rq->multiplier[j], rq->shift[j], rq);
        }
    }
}

void mlcc_qs8_packed_igemm__reference(size_t m, size_t n, size_t taps, size_t channels, const uint8_t *const *rows,
                                      uint8_t a_flip, const int8_t *packed, uint8_t *c, size_t ldc,
                                      const struct mlcc_qs8_requant *rq) {
    const size_t k = taps * channels, panel = mlcc_qs8_packed_panel_bytes(k);
    for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
            const int8_t *quads = packed + (j / MLCC_QS8_PACKED_NR) * panel + 64;
            const size_t column = j % MLCC_QS8_PACKED_NR;
            int32_t acc = rq->bias[j];
            for (size_t p = 0; p < k; ++p) {
                const uint8_t byte = rows[i * taps + p / channels][p % channels];
                acc += (int32_t)(int8_t)(byte ^ a_flip) * (int32_t)quads[(p / 4) * 64 + column * 4 + p % 4];
            }
            c[i * ldc + j] = mlcc_qs8_requantize(acc, rq->multiplier[j], rq->shift[j], rq);
        }
    }
}

/* The exact accumulator of the dequantizing forms: each byte's value less the zero point, times the weight */
static int32_t dequant_acc(size_t k, const uint8_t *ai, uint8_t a_flip, const int8_t *packed, size_t j, int32_t a_zero) {
    const int8_t *quads = packed + (j / MLCC_QS8_PACKED_NR) * mlcc_qs8_packed_panel_bytes(k) + 64;
    const size_t column = j % MLCC_QS8_PACKED_NR;
    int32_t acc = 0;
    for (size_t p = 0; p < k; ++p) {
        const int32_t value = (int32_t)(int8_t)(ai[p] ^ a_flip) + a_flip;  /* uint8 or int8 as it is */
        acc += (value - a_zero) * (int32_t)quads[(p / 4) * 64 + column * 4 + p % 4];
    }
    return acc;
}

void mlcc_qs8_packed_gemm_f32__reference(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                         const int8_t *packed, float *c, size_t ldc, const struct mlcc_qs8_dequant *dq) {
    for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
            c[i * ldc + j] = mlcc_qs8_dequantize(dequant_acc(k, a + i * lda, a_flip, packed, j, dq->a_zero), dq, j);
        }
    }
}

void mlcc_qs8_packed_gemm_s32__reference(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                         const int8_t *packed, int32_t *c, size_t ldc, const struct mlcc_qs8_dequant *dq) {
    for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) c[i * ldc + j] = dequant_acc(k, a + i * lda, a_flip, packed, j, dq->a_zero);
    }
}
