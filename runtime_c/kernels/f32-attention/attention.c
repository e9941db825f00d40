/* f32 scaled dot-product attention on the f32-gemm kernels, its softmax in the vectors of the target's SIMD
 * shim (mlcc/simd.h), and its scalar oracle. */
#include <math.h>

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

void MLCC_ISA_NAME(mlcc_f32_attention_rows)(const struct mlcc_f32_gemm_config *gemm,
                                            const struct mlcc_f32_attention_params *p, size_t b, size_t h,
                                            size_t i0, size_t r0, size_t r1, const float *q, const float *add_mask,
                                            const bool *keep_mask, float *y, float *MLCC_RESTRICT work)
{
    const size_t n = p->kv_len, rows = MLCC_MIN(p->block_rows, p->q_len - i0);
    const struct regions w = regions_of(p, gemm->nr, work);
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
