/* qs8-gemm: 8-bit quantized matrix products with int32 accumulation and fixed-point requantization.
 *
 * c[i][j] = requantize(bias[j] + sum_p a'[i][p] * w[j][p], j) for i < m, j < n, where
 *   a'  = (int8_t)(a[i*lda + p] ^ a_flip): a_flip 0x80 reads uint8 activations as a - 128 (the bias
 *         holds the + 128 * sum_p w[j][p] that takes back), 0 reads int8 ones as they are;
 *   w   = int8 weights, one row of k per output column j, rows ldw apart (ldw >= k; padding is zero);
 *   requantize(acc, j) = clamp(y_zero + ((acc * multiplier[j] + 2^(shift[j]-1)) >> shift[j]), y_min, y_max)
 *         in 64-bit, rounding half up: the real multiplier scale_a * scale_w[j] / scale_y as a 31-bit
 *         fraction and a shift (as gemmlowp and TFLite), so every target computes the same bits with no
 *         floating point; zero points, the bias and a fused ReLU/Clip (y_min, y_max) are folded at build time.
 * Outputs are bytes: (uint8_t)v of the clamped v, uint8 or int8 alike, at c[i*c_rs + j*c_cs] (c_cs > 1
 * writes a transposed, e.g. NCHW, result). A product of sign-extended 16-bit halves cannot saturate, so
 * every variant is exact; they differ only in speed. The scalar __reference is the oracle of tests/kernels.
 */
#ifndef MLCC_KERNELS_QS8_GEMM_H
#define MLCC_KERNELS_QS8_GEMM_H

#include "mlcc/runtime.h"

struct mlcc_qs8_requant {
    const int32_t *bias;        /* n: the folded bias in accumulator units */
    const int32_t *multiplier;  /* n: in [2^30, 2^31), or 0 for a scale below 2^-31 */
    const int32_t *shift;       /* n: right shift, 1..62 */
    int32_t y_zero;
    int32_t y_min;
    int32_t y_max;
};

typedef void (*mlcc_qs8_gemm_fn)(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                 const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                                 const struct mlcc_qs8_requant *rq);

/* The variants (runtime_c/kernels/qs8-gemm/manifest.toml), each defined only where its ISA is enabled, the
 * reference everywhere: one prototype, the mlcc_qs8_gemm_fn signature. */
#define MLCC_QS8_GEMM_DECLARE(isa)                                                                         \
    void mlcc_qs8_gemm__##isa(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,  \
                              const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,         \
                              const struct mlcc_qs8_requant *rq)
MLCC_QS8_GEMM_DECLARE(reference);
MLCC_QS8_GEMM_DECLARE(avx2);
MLCC_QS8_GEMM_DECLARE(wasmsimd);
MLCC_QS8_GEMM_DECLARE(wasmrelaxed);
MLCC_QS8_GEMM_DECLARE(dsp);
MLCC_QS8_GEMM_DECLARE(mve);
MLCC_QS8_GEMM_DECLARE(neon);
MLCC_QS8_GEMM_DECLARE(rvv);
MLCC_QS8_GEMM_DECLARE(neondot);

/* The channel-major form, for NCHW convolutions: y[j*y_stride + p] = requantize(bias[j] + sum_q w[j*ldw + q]
 * * x'[q*x_stride + p], j) for j < n output channels and p < pixels, x' = (int8_t)(x ^ x_flip). A 1x1
 * convolution reads its NCHW input in place (rows are channels); a KxK one, rows of patches (im2col). The
 * pixels are the vector lanes, so one row's requantization is one multiplier for every lane. */
typedef void (*mlcc_qs8_gemm_nchw_fn)(size_t n, size_t pixels, size_t k, const int8_t *w, size_t ldw,
                                      const uint8_t *x, size_t x_stride, uint8_t x_flip,
                                      uint8_t *y, size_t y_stride, const struct mlcc_qs8_requant *rq);

#define MLCC_QS8_GEMM_NCHW_DECLARE(isa)                                                                    \
    void mlcc_qs8_gemm_nchw__##isa(size_t n, size_t pixels, size_t k, const int8_t *w, size_t ldw,          \
                                   const uint8_t *x, size_t x_stride, uint8_t x_flip, uint8_t *y,           \
                                   size_t y_stride, const struct mlcc_qs8_requant *rq)
MLCC_QS8_GEMM_NCHW_DECLARE(reference);
MLCC_QS8_GEMM_NCHW_DECLARE(avx512vnni);
MLCC_QS8_GEMM_NCHW_DECLARE(wasmsimd);
MLCC_QS8_GEMM_NCHW_DECLARE(neon);
MLCC_QS8_GEMM_NCHW_DECLARE(avx2);

/* One output value from its int32 accumulator (the requantization every variant shares). The floor of
 * (acc * multiplier + 2^(shift-1)) / 2^shift is taken as a logical shift of the value plus 2^62 (a multiple
 * of 2^shift; |acc * multiplier| < 2^62, so the sum is positive and below 2^63): no shift of a negative
 * number, and a loop of these vectorises where the ISA has only logical 64-bit shifts (AVX2). */
static inline uint8_t mlcc_qs8_requantize(int32_t acc, int32_t multiplier, int32_t shift, const struct mlcc_qs8_requant *rq) {
    const uint64_t biased = (uint64_t)((int64_t)acc * multiplier) + ((uint64_t)1 << (shift - 1)) + ((uint64_t)1 << 62);
    const int64_t v = (int64_t)(biased >> shift) - (int64_t)((uint64_t)1 << (62 - shift)) + rq->y_zero;
    return (uint8_t)(int32_t)(v < rq->y_min ? rq->y_min : v > rq->y_max ? rq->y_max : v);
}

/* A run of accumulators of one channel requantized, its parameters held in locals: a byte store may alias
 * anything, so a loop reading them through rq would reload them and not vectorise. */
static inline void mlcc_qs8_requantize_run(const int32_t *acc, size_t count, int32_t multiplier, int32_t shift,
                                           const struct mlcc_qs8_requant *rq, uint8_t *MLCC_RESTRICT out) {
    const uint64_t round = ((uint64_t)1 << (shift - 1)) + ((uint64_t)1 << 62);
    const int64_t unbias = (int64_t)((uint64_t)1 << (62 - shift)) - rq->y_zero;
    const int64_t lo = rq->y_min, hi = rq->y_max;
    for (size_t r = 0; r < count; ++r) {
        int64_t v = (int64_t)(((uint64_t)((int64_t)acc[r] * multiplier) + round) >> shift) - unbias;
        v = v < lo ? lo : v;
        v = v > hi ? hi : v;
        out[r] = (uint8_t)(int32_t)v;
    }
}

/* The geometry of a 2-D convolution of one NCHW image (1-D as height 1), for the im2col driver. */
struct mlcc_qs8_conv_geometry {
    size_t channels, in_h, in_w, out_h, out_w, kernel_h, kernel_w;
    size_t stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left;
    size_t groups, group_out;  /* output channels per group */
};

/* A convolution of one NCHW image x (bytes, uint8 or int8 as a_flip says) to NCHW y through `gemm`:
 * output pixels in blocks of `rows`, each block's patches copied to `patches` (rows x ldw bytes; taps in
 * the padding hold x_zero, so the folded bias's zero-point term stays exact), then multiplied by the
 * group's weights (group_out rows of ldw, the taps of each input channel in (c, kh, kw) order). */
/* The same through the channel-major kernel: a 1x1 convolution with stride 1 and no padding multiplies its
 * input in place; otherwise patches of `rows` output pixels at a time are copied to `patches` as k rows of
 * `rows` bytes (rows a multiple of 16). */
void mlcc_qs8_conv_nchw_cm(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                           const int8_t *w, size_t ldw, uint8_t *y, const struct mlcc_qs8_requant *rq,
                           uint8_t *patches, size_t rows, mlcc_qs8_gemm_nchw_fn gemm);

/* A depthwise convolution (groups = channels, one output channel each) of one NCHW image, portable C. */
void mlcc_qs8_dwconv_nchw(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                          const int8_t *w, size_t ldw, uint8_t *y, const struct mlcc_qs8_requant *rq);

void mlcc_qs8_conv_nchw(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                        const int8_t *w, size_t ldw, uint8_t *y, const struct mlcc_qs8_requant *rq,
                        uint8_t *patches, size_t rows, mlcc_qs8_gemm_fn gemm);

#endif /* MLCC_KERNELS_QS8_GEMM_H */
