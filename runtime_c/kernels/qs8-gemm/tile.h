/* What the family's SIMD kernels share around their vector loops: a row kernel's scalar finish of one output,
 * and the channel-major kernels' weight pairs and last pixels. Included by the kernels' sources only. */
#ifndef MLCC_QS8_GEMM_TILE_H
#define MLCC_QS8_GEMM_TILE_H

#include "mlcc/kernels/qs8-gemm.h"

/* Output column j of a row kernel from its vector steps' sum over k [0, k_done): the bytes past them in
 * scalar code, then the folded bias, requantized. */
static inline uint8_t mlcc_qs8_gemm_finish(int32_t sum, const uint8_t *a_row, uint8_t a_flip, const int8_t *w_row,
                                           size_t k_done, size_t k, size_t j, const struct mlcc_qs8_requant *rq) {
    int32_t total = rq->bias[j] + sum;
    for (size_t p = k_done; p < k; ++p) total += (int32_t)(int8_t)(a_row[p] ^ a_flip) * (int32_t)w_row[p];
    return mlcc_qs8_requantize(total, rq->multiplier[j], rq->shift[j], rq);
}

/* Weights of output channels [j, j + mr) as 16-bit pairs, for channel-major kernels that multiply two
 * interleaved input rows at once (16-bit dot products): table[r * pairs + i] holds w[j + r][2i] in its low
 * half and w[j + r][2i + 1] in its high one. An odd k's last pair, and the tile's rows mr..tile_rows - 1,
 * have weight 0, so the rows they meet (a repeated one) add nothing. */
static inline void mlcc_qs8_gemm_nchw_pack_pairs(int32_t *table, const int8_t *w, size_t ldw, size_t j, size_t mr,
                                                 size_t tile_rows, size_t pairs, size_t k) {
    for (size_t r = 0; r < tile_rows; ++r) {
        const int8_t *wr = w + (j + (r < mr ? r : 0)) * ldw;
        for (size_t i = 0; i < pairs; ++i) {
            const int32_t first = r < mr ? wr[2 * i] : 0;
            const int32_t second = 2 * i + 1 < k && r < mr ? wr[2 * i + 1] : 0;
            table[r * pairs + i] = (int32_t)((uint32_t)(uint16_t)(int16_t)first | ((uint32_t)(uint16_t)(int16_t)second << 16));
        }
    }
}

/* Pixels [full, pixels) of output channels [j, j + mr), past a channel-major kernel's last whole tile: the
 * reference's code. */
static inline void mlcc_qs8_gemm_nchw_tail(size_t j, size_t mr, size_t full, size_t pixels, size_t k, const int8_t *w,
                                           size_t ldw, const uint8_t *x, size_t x_stride, uint8_t x_flip, uint8_t *y,
                                           size_t y_stride, const struct mlcc_qs8_requant *rq) {
    if (full >= pixels) return;
    const struct mlcc_qs8_requant rows = {rq->bias + j, rq->multiplier + j, rq->shift + j, rq->y_zero, rq->y_min, rq->y_max};
    mlcc_qs8_gemm_nchw__reference(mr, pixels - full, k, w + j * ldw, ldw, x + full, x_stride, x_flip,
                                  y + j * y_stride + full, y_stride, &rows);
}

#endif /* MLCC_QS8_GEMM_TILE_H */
