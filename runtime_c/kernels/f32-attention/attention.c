/* f32 scaled dot-product attention on the f32-gemm kernels, its softmax in the vectors of the target's SIMD
 * shim (mlcc/simd.h), and its scalar oracle. */
#include <math.h>
#include <stdint.h>

#include "mlcc/kernels/f32-attention.h"
#include "mlcc/simd.h"
#if MLCC_HAVE_F32V
#include "mlcc/simd/math.h"
#else
#include "mlcc/simd/math-scalar.h"
#endif

static size_t round16(size_t n)
{
    return (n + 15u) / 16u * 16u;
}

static size_t packed_floats(size_t k, size_t n, size_t nr)
{
    return (n + nr - 1u) / nr * nr * k;
}

size_t mlcc_f32_attention_work_size(const struct mlcc_f32_attention_params *p, size_t nr)
{
    return round16(packed_floats(p->qk_dim, p->kv_len, nr)) + round16(packed_floats(p->kv_len, p->v_dim, nr))
           + p->block_rows * (p->kv_len + 1u);
}

/* Row i of (batch b, head h)'s scaled scores s, masked: the additive mask added, then every masked entry
 * set to fill. */
static void mask_row(const struct mlcc_f32_attention_params *p, size_t b, size_t h, size_t i, const float *add_mask,
                     const bool *keep_mask, float *MLCC_RESTRICT s)
{
    const size_t n = p->kv_len, cols = MLCC_MIN(p->mask_cols, n);
    if (add_mask != NULL) {
        const float *m = add_mask + b * p->add_mask.batch + h * p->add_mask.head + i * p->add_mask.row;
        for (size_t j = 0; j < cols; ++j) s[j] += m[j * p->add_mask.col];
    }
    if (keep_mask != NULL) {
        const bool *m = keep_mask + b * p->keep_mask.batch + h * p->keep_mask.head + i * p->keep_mask.row;
        for (size_t j = 0; j < cols; ++j) {
            if (m[j * p->keep_mask.col] != p->keep_when) s[j] = p->fill;
        }
    }
    if (add_mask != NULL || keep_mask != NULL) {
        for (size_t j = cols; j < n; ++j) s[j] = p->fill;
    }
    if (p->causal) {
        for (size_t j = i + 1u; j < n; ++j) s[j] = p->fill;
    }
}

/* A masked row's numerically stable softmax, but for its normalisation: e^(s - max) in place (the row's
 * maximum subtracted first), in the vectors of the target's SIMD shim; returns 1 / their sum, which the
 * caller applies to the row's output (v_dim wide, not kv_len). A row masked throughout gives zeros and 0
 * when asked to (zero_masked_rows). The scalar oracle's is below. */
static float exp_row(const struct mlcc_f32_attention_params *p, float *MLCC_RESTRICT s)
{
    const size_t n = p->kv_len;
    size_t j = 0;
    float peak = s[0], sum = 0.0f;
#if MLCC_HAVE_F32V
    const size_t lanes = MLCC_F32V_LANES;
    if (n >= lanes) {
        mlcc_f32v vpeak = mlcc_f32v_load(s);
        for (j = lanes; j + lanes <= n; j += lanes) vpeak = mlcc_f32v_max(vpeak, mlcc_f32v_load(s + j));
        peak = mlcc_f32v_reduce_max(vpeak);
    }
#endif
    for (; j < n; ++j) peak = s[j] > peak ? s[j] : peak;
    if (p->zero_masked_rows && peak == -INFINITY) {
        for (j = 0; j < n; ++j) s[j] = 0.0f;
        return 0.0f;
    }
    j = 0;
#if MLCC_HAVE_F32V
    const mlcc_f32v vp = mlcc_f32v_splat(peak);
    mlcc_f32v vsum = mlcc_f32v_zero();
    for (; j + lanes <= n; j += lanes) {
        const mlcc_f32v e = mlcc_f32v_exp_nonpositive(mlcc_f32v_sub(mlcc_f32v_load(s + j), vp));
        mlcc_f32v_store(s + j, e);
        vsum = mlcc_f32v_add(vsum, e);
    }
    sum = mlcc_f32v_reduce_add(vsum);
#endif
    for (; j < n; ++j) {
        s[j] = mlcc_f32_exp_nonpositive(s[j] - peak);
        sum += s[j];
    }
    return 1.0f / sum;
}

static void softmax_row__reference(const struct mlcc_f32_attention_params *p, float *MLCC_RESTRICT s)
{
    const size_t n = p->kv_len;
    float peak = s[0];
    for (size_t j = 1; j < n; ++j) peak = s[j] > peak ? s[j] : peak;
    if (p->zero_masked_rows && peak == -INFINITY) {
        for (size_t j = 0; j < n; ++j) s[j] = 0.0f;
        return;
    }
    float sum = 0.0f;
    for (size_t j = 0; j < n; ++j) {
        s[j] = expf(s[j] - peak);
        sum += s[j];
    }
    const float inv_sum = 1.0f / sum;
    for (size_t j = 0; j < n; ++j) s[j] *= inv_sum;
}

/* work's regions: packed K^T, packed V, then a block's scores and their sums. */
struct regions {
    float *packed_kt, *packed_v, *scores, *inv_sums;
};

static struct regions regions_of(const struct mlcc_f32_attention_params *p, size_t nr, float *work)
{
    struct regions r;
    r.packed_kt = work;
    r.packed_v = r.packed_kt + round16(packed_floats(p->qk_dim, p->kv_len, nr));
    r.scores = r.packed_v + round16(packed_floats(p->kv_len, p->v_dim, nr));
    r.inv_sums = r.scores + p->block_rows * p->kv_len;
    return r;
}

void MLCC_ISA_NAME(mlcc_f32_attention_head)(const struct mlcc_f32_gemm_config *gemm,
                                            const struct mlcc_f32_attention_params *p, size_t b, size_t h,
                                            const float *k, const float *v, float *MLCC_RESTRICT work)
{
    if (h % p->kv_group != 0) return;  /* the key/value head of the last query head */
    const struct regions r = regions_of(p, gemm->nr, work);
    const float *kh = k + b * p->k.batch + h / p->kv_group * p->k.head;
    const float *vh = v + b * p->v.batch + h / p->kv_group * p->v.head;
    mlcc_f32_gemm_pack_b(p->qk_dim, p->kv_len, kh, p->k.col, p->k.row, gemm->nr, r.packed_kt);
    mlcc_f32_gemm_pack_b(p->kv_len, p->v_dim, vh, p->v.row, p->v.col, gemm->nr, r.packed_v);
}

#if defined(__wasm_simd128__)
/* SIMD128 (wasmtime's Cranelift, V8): the rows four at a time, both products without the GEMM driver. Each
 * product's A (the queries, then the exponentiated scores) is broadcast into a stack block, each element in
 * all 4 lanes, and one call multiplies it by every 8-column panel of K^T or V that attention_head packed,
 * scaling as it stores (by the scale, then by each row's 1 / sum: no pass over y). Through the driver, the
 * scores' 32-step products (k = the head's dimension) paid a tile call and finish each, and the context's
 * product read shuffle-packed A (v_dim < 8 panels): BERT's attention (12 heads of 32, 128 tokens) 0.88-0.94x
 * the time in wasmtime, 0.93-0.95x in V8 (benchmarks in one process, 31 alternating rounds); outputs
 * bit-identical (the same sums in the same order). */
#define ROWS_AT_ONCE 4u
#define PANEL 8u

/* acc[i][0..1] += x(i, p) * w[p][0..7] over kc steps, x's (row i, step p) in all 4 lanes of
 * xb[(p * 4 + i) * 4 ..]: f32-gemm's 4x8__wasmsimd loop (its addresses advanced before the loads as
 * integers, hidden from loop strength reduction, so every load takes a constant offset; two steps a pass,
 * each after its own exit test, so V8 checks the stack once per two steps) */
static inline void accumulate_4x8(v128_t acc[ROWS_AT_ONCE][2], size_t kc, const float *xb,
                                  const float *MLCC_RESTRICT w)
{
    uintptr_t at = (uintptr_t)xb - ROWS_AT_ONCE * 4u * sizeof(float), wt = (uintptr_t)w - PANEL * sizeof(float);
    for (size_t left = kc;;) {
        for (int half = 0; half < 2; ++half, --left) {
            if (left == 0) return;
            at += ROWS_AT_ONCE * 4u * sizeof(float);
            wt += PANEL * sizeof(float);
            __asm__("" : "+r"(at), "+r"(wt));
            const float *ap = (const float *)at, *wp = (const float *)wt;
            const v128_t b0 = wasm_v128_load(wp), b1 = wasm_v128_load(wp + 4);
            for (size_t i = 0; i < ROWS_AT_ONCE; ++i) {
                const v128_t ai = wasm_v128_load(ap + i * 4u);
                acc[i][0] = mlcc_f32v_fma(acc[i][0], ai, b0);
                acc[i][1] = mlcc_f32v_fma(acc[i][1], ai, b1);
            }
        }
    }
}

/* rows x kc of x (rows past `rows` repeat the last) into xb, each element in 4 lanes (see accumulate_4x8) */
static void broadcast_rows(size_t rows, size_t kc, const float *x, size_t x_rs, size_t x_cs, float *MLCC_RESTRICT xb)
{
    for (size_t p = 0; p < kc; ++p)
        for (size_t i = 0; i < ROWS_AT_ONCE; ++i)
            wasm_v128_store(xb + (p * ROWS_AT_ONCE + i) * 4u, wasm_f32x4_splat(x[MLCC_MIN(i, rows - 1u) * x_rs + p * x_cs]));
}

/* c's rows [0, rows) and columns [0, cols) = scale[i] * the products of xb's four rows (broadcast, kc steps)
 * and the panels of w (8 columns, kc steps each, panel q at w + q * kc * 8). A function of its own, with few
 * values live around its loop: inlined into rows_fused, Cranelift reloaded a spilled base address every step
 * (and storing inline was 1.5x slower still). */
static __attribute__((noinline)) void multiply_rows(size_t rows, size_t cols, size_t kc, const float *xb,
                                                    const float *MLCC_RESTRICT w, const float scale[ROWS_AT_ONCE],
                                                    float *c, size_t ldc)
{
    for (size_t j = 0; j < cols; j += PANEL) {
        v128_t acc[ROWS_AT_ONCE][2];
        for (size_t i = 0; i < ROWS_AT_ONCE; ++i) acc[i][0] = acc[i][1] = wasm_f32x4_splat(0.0f);
        accumulate_4x8(acc, kc, xb, w + j * kc);
        for (size_t i = 0; i < rows; ++i) {
            const v128_t si = wasm_f32x4_splat(scale[i]);
            const v128_t v0 = wasm_f32x4_mul(acc[i][0], si), v1 = wasm_f32x4_mul(acc[i][1], si);
            float *ci = c + i * ldc + j;
            if (cols - j >= PANEL) {
                wasm_v128_store(ci, v0);
                wasm_v128_store(ci + 4, v1);
            } else {
                float row[PANEL];
                wasm_v128_store(row, v0);
                wasm_v128_store(row + 4, v1);
                for (size_t l = 0; l < cols - j; ++l) ci[l] = row[l];
            }
        }
    }
}

/* Rows [r0, r1) of the block at i0 as the GEMM path below computes them; 0 (nothing done) when the packed
 * panels are not 8 wide or four rows' broadcast queries and scores exceed a stack block the size of the GEMM
 * driver's, and the caller takes that path. */
static int rows_fused(const struct mlcc_f32_gemm_config *gemm, const struct mlcc_f32_attention_params *p, size_t b,
                      size_t h, size_t i0, size_t r0, size_t r1, const float *q, const float *add_mask,
                      const bool *keep_mask, float *y, const struct regions *w)
{
    const size_t n = p->kv_len, d = p->qk_dim;
    if (gemm->nr != PANEL || ROWS_AT_ONCE * 4u * (d + n) > MLCC_F32_GEMM_PACK_FLOATS) return 0;
    float block[MLCC_F32_GEMM_PACK_FLOATS];
    float *const qb = block, *const sb = block + ROWS_AT_ONCE * 4u * d;
    const float *qi = q + b * p->q.batch + h * p->q.head + i0 * p->q.row;
    float *yi = y + b * p->y.batch + h * p->y.head + i0 * p->y.row;
    for (size_t r = r0; r < r1; r += ROWS_AT_ONCE) {
        const size_t rows = MLCC_MIN(ROWS_AT_ONCE, r1 - r);
        float *s = w->scores + r * n, *inv_sums = w->inv_sums + r;
        const float scale[ROWS_AT_ONCE] = {p->scale, p->scale, p->scale, p->scale};
        broadcast_rows(rows, d, qi + r * p->q.row, p->q.row, p->q.col, qb);
        multiply_rows(rows, n, d, qb, w->packed_kt, scale, s, n);
        for (size_t i = 0; i < rows; ++i) {
            mask_row(p, b, h, i0 + r + i, add_mask, keep_mask, s + i * n);
            inv_sums[i] = n != 0 ? exp_row(p, s + i * n) : 0.0f;
        }
        broadcast_rows(rows, n, s, n, 1u, sb);
        multiply_rows(rows, p->v_dim, n, sb, w->packed_v, inv_sums, yi + r * p->y.row, p->y.row);
    }
    return 1;
}
#endif

void MLCC_ISA_NAME(mlcc_f32_attention_rows)(const struct mlcc_f32_gemm_config *gemm,
                                            const struct mlcc_f32_attention_params *p, size_t b, size_t h,
                                            size_t i0, size_t r0, size_t r1, const float *q, const float *add_mask,
                                            const bool *keep_mask, float *y, float *MLCC_RESTRICT work)
{
    const size_t n = p->kv_len, rows = MLCC_MIN(p->block_rows, p->q_len - i0);
    const struct regions w = regions_of(p, gemm->nr, work);
#if defined(__wasm_simd128__)
    if (rows_fused(gemm, p, b, h, i0, r0, r1, q, add_mask, keep_mask, y, &w)) return;
#endif
    const float *qi = q + b * p->q.batch + h * p->q.head + i0 * p->q.row;
    float *yi = y + b * p->y.batch + h * p->y.head + i0 * p->y.row;
    mlcc_f32_gemm_part(gemm, rows, n, p->qk_dim, r0, r1, 0u, n, qi, p->q.row, p->q.col, w.packed_kt, w.scores, n,
                       p->scale, NULL, 0u, 0u, 0.0f, NULL);
    for (size_t r = r0; r < r1; ++r) {
        mask_row(p, b, h, i0 + r, add_mask, keep_mask, w.scores + r * n);
        w.inv_sums[r] = n != 0 ? exp_row(p, w.scores + r * n) : 0.0f;
    }
    mlcc_f32_gemm_part(gemm, rows, p->v_dim, n, r0, r1, 0u, p->v_dim, w.scores, n, 1u, w.packed_v, yi, p->y.row, 1.0f,
                       NULL, 0u, 0u, 0.0f, NULL);
    for (size_t r = r0; r < r1; ++r) mlcc_f32_scale_row(p->v_dim, w.inv_sums[r], yi + r * p->y.row);
}

void MLCC_ISA_NAME(mlcc_f32_attention)(const struct mlcc_f32_gemm_config *gemm, const struct mlcc_f32_attention_params *p,
                                       const float *q, const float *k, const float *v, const float *add_mask,
                                       const bool *keep_mask, float *y, float *MLCC_RESTRICT work)
{
    for (size_t b = 0; b < p->batch; ++b) {
        for (size_t h = 0; h < p->heads; ++h) {
            MLCC_ISA_NAME(mlcc_f32_attention_head)(gemm, p, b, h, k, v, work);
            for (size_t i0 = 0; i0 < p->q_len; i0 += p->block_rows)
                MLCC_ISA_NAME(mlcc_f32_attention_rows)(gemm, p, b, h, i0, 0u, MLCC_MIN(p->block_rows, p->q_len - i0),
                                                       q, add_mask, keep_mask, y, work);
        }
    }
}

void mlcc_f32_attention__reference(const struct mlcc_f32_attention_params *p, const float *q, const float *k,
                                   const float *v, const float *add_mask, const bool *keep_mask, float *y,
                                   float *MLCC_RESTRICT work)
{
    for (size_t b = 0; b < p->batch; ++b) {
        for (size_t h = 0; h < p->heads; ++h) {
            const float *qh = q + b * p->q.batch + h * p->q.head;
            const float *kh = k + b * p->k.batch + h / p->kv_group * p->k.head;
            const float *vh = v + b * p->v.batch + h / p->kv_group * p->v.head;
            for (size_t i = 0; i < p->q_len; ++i) {
                for (size_t j = 0; j < p->kv_len; ++j) {
                    float dot = 0.0f;
                    for (size_t d = 0; d < p->qk_dim; ++d)
                        dot += qh[i * p->q.row + d * p->q.col] * kh[j * p->k.row + d * p->k.col];
                    work[j] = p->scale * dot;
                }
                mask_row(p, b, h, i, add_mask, keep_mask, work);
                if (p->kv_len != 0) softmax_row__reference(p, work);
                float *yi = y + b * p->y.batch + h * p->y.head + i * p->y.row;
                for (size_t e = 0; e < p->v_dim; ++e) {
                    float acc = 0.0f;
                    for (size_t j = 0; j < p->kv_len; ++j) acc += work[j] * vh[j * p->v.row + e * p->v.col];
                    yi[e * p->y.col] = acc;
                }
            }
        }
    }
}
