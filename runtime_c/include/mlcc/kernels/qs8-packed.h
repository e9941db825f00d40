/* qs8-packed: 8-bit GEMM on weights packed at build time in panels of 16 output columns, for channels-last
 * (NHWC) convolutions and products whose rows are pixels or tokens:
 *
 *   c[i*ldc + j] = requantize(bias[j] + sum_p a'[i*lda + p] * w[j][p], j) for i < m, j < n,
 *   a' = (int8_t)(a ^ a_flip) and requantize as in qs8-gemm.h (whose structs this family shares).
 *
 * The packed weights: panel t holds columns 16t .. 16t + 15 as
 *   int32 sums[16]                      sum_p w[j][p] (0 past n): a kernel that multiplies unsigned bytes
 *                                       (AVX-512 VNNI's vpdpbusd) feeds a' + 128 and takes back 128 * sums
 *   int8  quads[(k + 3) / 4][16][4]     w[16t + column][4q .. 4q + 3], zero past k and past n; a form whose
 *                                       manifest row has layout = "pairs" (SIMD128, which multiplies pairs
 *                                       of 16-bit values) reads each quad as [2][16][2] instead: bytes 4q,
 *                                       4q + 1 of the 16 columns, then bytes 4q + 2, 4q + 3
 * so a panel is mlcc_qs8_packed_panel_bytes(k) bytes (a multiple of 64; the blob is 64-byte aligned) and
 * mlcc/ops/_qs8.py packs it. Every form sums exact 32-bit products of 8-bit values (no saturating pair
 * sums), so every form is bit-identical to mlcc_qs8_packed_gemm__reference, the oracle of tests/kernels. */
#ifndef MLCC_KERNELS_QS8_PACKED_H
#define MLCC_KERNELS_QS8_PACKED_H

#include "mlcc/kernels/qs8-gemm.h"  /* struct mlcc_qs8_requant, struct mlcc_qs8_conv_geometry */
#include "mlcc/runtime.h"

#define MLCC_QS8_PACKED_NR 16

static inline size_t mlcc_qs8_packed_panel_bytes(size_t k) { return 64u * (1u + (k + 3u) / 4u); }

typedef void (*mlcc_qs8_packed_gemm_fn)(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                        const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq);

void mlcc_qs8_packed_gemm__reference(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                     const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq);
void mlcc_qs8_packed_gemm__avx2(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq);
void mlcc_qs8_packed_gemm__avx512vnni(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                      const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq);
void mlcc_qs8_packed_gemm__wasmsimd(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                    const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq);
void mlcc_qs8_packed_gemm__wasmrelaxed(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                       const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq);
void mlcc_qs8_packed_gemm__neondot(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                   const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq);
void mlcc_qs8_packed_gemm__neon(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq);

/* The indirect form, for a convolution without patches: row i of a is `taps` runs of `channels` bytes, run t
 * at rows[i * taps + t] (k = taps * channels, channels a multiple of 4, so no quad straddles two runs):
 *   c[i*ldc + j] = requantize(bias[j] + sum_t sum_p a'(rows[i*taps + t][p]) * w[j][t*channels + p], j). */
typedef void (*mlcc_qs8_packed_igemm_fn)(size_t m, size_t n, size_t taps, size_t channels, const uint8_t *const *rows,
                                         uint8_t a_flip, const int8_t *packed, uint8_t *c, size_t ldc,
                                         const struct mlcc_qs8_requant *rq);

void mlcc_qs8_packed_igemm__reference(size_t m, size_t n, size_t taps, size_t channels, const uint8_t *const *rows,
                                      uint8_t a_flip, const int8_t *packed, uint8_t *c, size_t ldc,
                                      const struct mlcc_qs8_requant *rq);
void mlcc_qs8_packed_igemm__avx512vnni(size_t m, size_t n, size_t taps, size_t channels, const uint8_t *const *rows,
                                       uint8_t a_flip, const int8_t *packed, uint8_t *c, size_t ldc,
                                       const struct mlcc_qs8_requant *rq);

/* A convolution (one group) of one NHWC image x to NHWC y through `gemm`: a 1x1 convolution with stride 1 and
 * no padding multiplies x in place (rows are pixels); otherwise the patches of `rows` output pixels at a time
 * are gathered into `patches` (rows x k bytes, k = kernel_h * kernel_w * channels in (kh, kw, c) order, each
 * tap a run of the pixel's channels, rounded up to 4 with zero bytes; taps in the padding hold x_zero, as
 * the folded bias expects; and 16 bytes more: a kernel row of 16 bytes or fewer is moved as 16). */
void mlcc_qs8_conv_nhwc(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero, uint8_t a_flip,
                        const int8_t *packed, uint8_t *y, const struct mlcc_qs8_requant *rq,
                        uint8_t *patches, size_t rows, mlcc_qs8_packed_gemm_fn gemm);

/* The same without copying patches: for `rows` output pixels at a time, each tap's pointer into x (or to a run
 * of x_zero bytes in the padding) goes to `work`, and `igemm` reads the taps in place, `run` bytes each:
 * channels rounded up to 4 (mlcc_qs8_conv_nhwc_indirect_run), the bytes past the channels (the next pixel's)
 * meeting zero weights, so the weights are packed with k = taps * run in (kh, kw, c) order, zero past the
 * channels. `work` holds rows * taps pointers, then 3 runs of bytes (pointer-aligned). */
void mlcc_qs8_conv_nhwc_indirect(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                 uint8_t a_flip, const int8_t *packed, uint8_t *y, const struct mlcc_qs8_requant *rq,
                                 void *work, size_t rows, mlcc_qs8_packed_igemm_fn igemm);

static inline size_t mlcc_qs8_conv_nhwc_indirect_run(size_t channels) { return (channels + 3u) & ~(size_t)3u; }

/* The bytes of `work` mlcc_qs8_conv_nhwc_indirect needs */
static inline size_t mlcc_qs8_conv_nhwc_indirect_bytes(size_t rows, size_t taps, size_t channels) {
    return rows * taps * sizeof(const uint8_t *) + 3u * mlcc_qs8_conv_nhwc_indirect_run(channels);
}

/* The indirect driver for few channels (an image's 1 or 3, where a run per tap would round each tap up to 4
 * bytes): a kernel row's kernel_w taps lie side by side in x (dilation_w 1), so igemm reads each kernel row as
 * one run of kernel_w * channels bytes rounded up to 4 (mlcc_qs8_conv_nhwc_rows_run), `taps` = kernel_h
 * pointers a pixel; the weights packed with k = kernel_h * run in (kh, kw, c) order, zero past kernel_w *
 * channels. The output columns whose runs would leave x's rows (the padding, the bytes past a row) read runs
 * composed once per call for each row of x, x_zero outside x's columns; a row above or below x reads a run of
 * x_zero. `work` (pointer-aligned, mlcc_qs8_conv_nhwc_rows_bytes): rows * kernel_h pointers, then those runs. */
void mlcc_qs8_conv_nhwc_rows(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                             uint8_t a_flip, const int8_t *packed, uint8_t *y, const struct mlcc_qs8_requant *rq,
                             void *work, size_t rows, mlcc_qs8_packed_igemm_fn igemm);

static inline size_t mlcc_qs8_conv_nhwc_rows_run(size_t kernel_w, size_t channels) {
    return (kernel_w * channels + 3u) & ~(size_t)3u;
}

/* Output columns [lo, hi) read their runs in x: pad_left <= ow * stride_w, and the run from column ow *
 * stride_w - pad_left ends inside its row */
static inline size_t mlcc_qs8_conv_nhwc_rows_lo(const struct mlcc_qs8_conv_geometry *g) {
    const size_t lo = (g->pad_left + g->stride_w - 1) / g->stride_w;
    return lo < g->out_w ? lo : g->out_w;
}

static inline size_t mlcc_qs8_conv_nhwc_rows_hi(const struct mlcc_qs8_conv_geometry *g) {
    const size_t lo = mlcc_qs8_conv_nhwc_rows_lo(g), run = mlcc_qs8_conv_nhwc_rows_run(g->kernel_w, g->channels);
    const size_t room = (g->in_w + g->pad_left) * g->channels;  /* a row's bytes counted from column -pad_left */
    const size_t hi = room < run ? 0 : (room - run) / (g->stride_w * g->channels) + 1;
    return hi < lo ? lo : hi < g->out_w ? hi : g->out_w;
}

/* The bytes of `work` mlcc_qs8_conv_nhwc_rows needs */
static inline size_t mlcc_qs8_conv_nhwc_rows_bytes(const struct mlcc_qs8_conv_geometry *g, size_t rows) {
    const size_t run = mlcc_qs8_conv_nhwc_rows_run(g->kernel_w, g->channels);
    const size_t borders = mlcc_qs8_conv_nhwc_rows_lo(g) + g->out_w - mlcc_qs8_conv_nhwc_rows_hi(g);
    return rows * g->kernel_h * sizeof(const uint8_t *) + run * (1u + g->in_h * borders);
}

/* The dequantizing forms, for dynamically quantized products (DynamicQuantizeLinear -> MatMulInteger with
 * constant weights -> Cast -> Mul -> Add, mlcc/ops/packed_integer_mat_mul.py): the same panels, an exact int32
 *   acc = sum_p (a[i*lda + p] - a_zero) * w[j][p]     a read as uint8 (a_flip 0x80) or int8 (a_flip 0)
 * with the run-time zero point taken as a_zero * sums[j] from the panel (one multiply per column), then
 *   _s32: c[i*ldc + j] = acc
 *   _f32: c[i*ldc + j] = (float)acc, times scale[j * scale_step] where scale is not NULL, plus offset[j]
 *         where offset is not NULL: the graph's Cast, Mul and Add in its order, each rounded to float, so
 *         every form is bit-identical to the reference and to the ONNX graph run as written. */
struct mlcc_qs8_dequant {
    int32_t a_zero;
    const float *scale;  /* NULL, or scale_step 0: one for every column (per tensor), 1: one per column */
    size_t scale_step;
    const float *offset;  /* NULL or n */
    int16_t *work;  /* NULL, or mlcc_qs8_packed_dequant_work_bytes(k): where a form without 8-bit dot products
                     * widens each panel's weights to 16 bits once for all rows (SIMD128, NEON without sdot) */
};

/* A panel's 16 columns x k rounded up to 8, as 16-bit values */
static inline size_t mlcc_qs8_packed_dequant_work_bytes(size_t k) { return 256u * ((k + 7u) / 8u); }

#define MLCC_QS8_PACKED_DEQUANT_DECLARE(isa)                                                                        \
    void mlcc_qs8_packed_gemm_f32__##isa(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip, \
                                         const int8_t *packed, float *c, size_t ldc, const struct mlcc_qs8_dequant *dq); \
    void mlcc_qs8_packed_gemm_s32__##isa(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip, \
                                         const int8_t *packed, int32_t *c, size_t ldc, const struct mlcc_qs8_dequant *dq)
MLCC_QS8_PACKED_DEQUANT_DECLARE(reference);
MLCC_QS8_PACKED_DEQUANT_DECLARE(avx512vnni);
MLCC_QS8_PACKED_DEQUANT_DECLARE(avx2);
MLCC_QS8_PACKED_DEQUANT_DECLARE(wasmsimd);
MLCC_QS8_PACKED_DEQUANT_DECLARE(neondot);
MLCC_QS8_PACKED_DEQUANT_DECLARE(neon);

/* One dequantized output, as the graph computes it */
static inline float mlcc_qs8_dequantize(int32_t acc, const struct mlcc_qs8_dequant *dq, size_t j) {
    float y = (float)acc;
    if (dq->scale) y = y * dq->scale[j * dq->scale_step];
    if (dq->offset) y = y + dq->offset[j];
    return y;
}

#endif /* MLCC_KERNELS_QS8_PACKED_H */
