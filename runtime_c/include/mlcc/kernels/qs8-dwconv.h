/* qs8-dwconv: depthwise convolution (one filter per channel) of a channels-last (NHWC) 8-bit image with int32
 * accumulation and qs8-gemm's fixed-point requantization: the channels are the vector lanes, so a small map
 * (DS-CNN's 25 x 5) costs what its arithmetic costs, not a loop start per short row as channel-major does.
 *
 * y[pixel][c] = requantize(bias[c] + sum over taps t of w[t][c] * x'[source(pixel, t)][c], c) where
 *   x' = (int8_t)(x ^ a_flip) (uint8 activations as x - 128, as in qs8-gemm.h), and a tap in the padding reads
 *   x_zero (the folded bias counts the zero point of every tap); w is taps x channels int8 (taps in (kh, kw)
 *   order). Products of 8-bit values summed in 32 bits: no saturation on any ISA, every form bit-identical to
 *   mlcc_qs8_dwconv_nhwc__reference (the oracle of tests/kernels/qs8_dwconv_edges.c).
 * The geometry is qs8-gemm's (a header only: nothing linked from qs8-gemm); groups = channels. */
#ifndef MLCC_KERNELS_QS8_DWCONV_H
#define MLCC_KERNELS_QS8_DWCONV_H

#include "mlcc/kernels/qs8-gemm.h"  /* struct mlcc_qs8_requant, struct mlcc_qs8_conv_geometry */
#include "mlcc/runtime.h"

typedef void (*mlcc_qs8_dwconv_nhwc_fn)(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                        uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                        const struct mlcc_qs8_requant *rq);

void mlcc_qs8_dwconv_nhwc__reference(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                     uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                     const struct mlcc_qs8_requant *rq);
void mlcc_qs8_dwconv_nhwc__avx512(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                  uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                  const struct mlcc_qs8_requant *rq);
void mlcc_qs8_dwconv_nhwc__avx2(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                const struct mlcc_qs8_requant *rq);
void mlcc_qs8_dwconv_nhwc__neon(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                const struct mlcc_qs8_requant *rq);
void mlcc_qs8_dwconv_nhwc__wasmsimd(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                    uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                    const struct mlcc_qs8_requant *rq);

/* The input pixel output pixel (oh, ow) reads at tap (kh, kw), or NULL in the padding. */
static inline const uint8_t *mlcc_qs8_dwconv_source(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x,
                                                    size_t oh, size_t ow, size_t kh, size_t kw) {
    /* left of the padding wraps around to a huge size_t: one test covers both sides */
    const size_t ih = oh * g->stride_h + kh * g->dilation_h - g->pad_top;
    const size_t iw = ow * g->stride_w + kw * g->dilation_w - g->pad_left;
    return ih < g->in_h && iw < g->in_w ? x + (ih * g->in_w + iw) * g->channels : NULL;
}

#endif /* MLCC_KERNELS_QS8_DWCONV_H */
