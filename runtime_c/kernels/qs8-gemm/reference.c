/* qs8-gemm scalar reference: the portable fallback and the oracle of tests/kernels (see qs8-gemm.h). */
#include "mlcc/kernels/qs8-gemm.h"

void mlcc_qs8_gemm__reference(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                              const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                              const struct mlcc_qs8_requant *rq) {
    for (size_t i = 0; i < m; ++i) {
        const uint8_t *ai = a + i * lda;
        for (size_t j = 0; j < n; ++j) {
            const int8_t *wj = w + j * ldw;
            int32_t acc = rq->bias[j];
            for (size_t p = 0; p < k; ++p) {
                acc += (int32_t)(int8_t)(ai[p] ^ a_flip) * (int32_t)wj[p];
            }
            c[i * c_rs + j * c_cs] = mlcc_qs8_requantize(acc, rq->multiplier[j], rq->shift[j], rq);
        }
    }
}

void mlcc_qs8_gemm_nchw__reference(size_t n, size_t pixels, size_t k, const int8_t *w, size_t ldw,
                                   const uint8_t *x, size_t x_stride, uint8_t x_flip,
                                   uint8_t *y, size_t y_stride, const struct mlcc_qs8_requant *rq) {
    for (size_t j = 0; j < n; ++j) {
        const int8_t *wj = w + j * ldw;
        for (size_t p = 0; p < pixels; ++p) {
            int32_t acc = rq->bias[j];
            for (size_t q = 0; q < k; ++q) {
                acc += (int32_t)wj[q] * (int32_t)(int8_t)(x[q * x_stride + p] ^ x_flip);
            }
            y[j * y_stride + p] = mlcc_qs8_requantize(acc, rq->multiplier[j], rq->shift[j], rq);
        }
    }
}
