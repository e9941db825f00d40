/* Checks mlcc_f32_attention__<isa> (with GEMM variant VARIANT) against mlcc_f32_attention__reference: key counts
 * around the tile width (1, nr - 1, nr, nr + 1, several panels), queries in one and in several blocks, head
 * sizes 1 and odd, Q read transposed, grouped key/value heads, additive and keep masks broadcast, masks
 * shorter than the keys, causal, and rows masked throughout (NaN, or zeros when asked).
 * Prints one line per failing case and a summary; exits 1 on any failure. Built and run by
 * test_attention_kernel.py. */
#include <math.h>
#include <stdio.h>

#include "edges.h"
#include "mlcc/kernels/f32-attention.h"

#define ELEMS 65536u

static float q_buf[ELEMS], k_buf[ELEMS], v_buf[ELEMS], mask_buf[ELEMS], y_got[ELEMS], y_want[ELEMS];
static bool keep_buf[ELEMS];
static float work[4u * ELEMS], ref_work[4096];

static struct mlcc_f32_attention_strides contiguous(size_t heads, size_t rows, size_t cols)
{
    struct mlcc_f32_attention_strides s = {heads * rows * cols, rows * cols, cols, 1u};
    return s;
}

static void check(size_t heads, size_t kv_group, size_t q_len, size_t kv_len, size_t dim, size_t block_rows,
                  int transposed_q, int mask_form, int causal, int zero_rows)
{
    const struct mlcc_f32_gemm_config *cfg = &VARIANT;
    struct mlcc_f32_attention_params p = {0};
    p.batch = 2u;
    p.heads = heads;
    p.q_len = q_len;
    p.kv_len = kv_len;
    p.qk_dim = dim;
    p.v_dim = dim + 1u;
    p.kv_group = kv_group;
    p.q = contiguous(heads, q_len, dim);
    if (transposed_q) {  /* each head's Q stored as [dim, q_len] */
        p.q.row = 1u;
        p.q.col = q_len;
    }
    p.k = contiguous(heads / kv_group, kv_len, dim);
    p.v = contiguous(heads / kv_group, kv_len, dim + 1u);
    p.y = contiguous(heads, q_len, dim + 1u);
    p.mask_cols = mask_form == 3 ? kv_len / 2u : kv_len;
    p.scale = 0.3f;
    p.causal = causal != 0;
    p.keep_when = mask_form != 2;
    p.fill = zero_rows ? -INFINITY : -1e9f;
    p.zero_masked_rows = zero_rows != 0;
    p.block_rows = block_rows;
    const float *add = NULL;
    const bool *keep = NULL;
    if (mask_form == 1 || mask_form == 3) {  /* additive, per batch and key: [batch, 1, 1, mask_cols] */
        struct mlcc_f32_attention_strides s = {p.mask_cols, 0u, 0u, 1u};
        p.add_mask = s;
        add = mask_buf;
    }
    if (mask_form == 2 || mask_form == 3) {  /* keep mask per head, query and key */
        struct mlcc_f32_attention_strides s = {heads * q_len * p.mask_cols, q_len * p.mask_cols, p.mask_cols, 1u};
        p.keep_mask = s;
        keep = keep_buf;
    }
    const size_t work_floats = mlcc_f32_attention_work_size(&p, cfg->nr);
    if (2u * heads * q_len * (dim + 1u) > ELEMS || 2u * heads * kv_len * (dim + 1u) > ELEMS
        || work_floats > 4u * ELEMS || kv_len > 4096u) {
        printf("case too large\n");
        ++failures;
        return;
    }
    for (size_t i = 0; i < ELEMS; ++i) {
        q_buf[i] = uniform();
        k_buf[i] = uniform();
        v_buf[i] = uniform();
        mask_buf[i] = uniform() < -0.6f ? -1e4f : uniform();
        keep_buf[i] = (uniform() < 0.4f) != (mask_form == 2);
        y_got[i] = y_want[i] = 12345.0f;
    }
    if (zero_rows && (mask_form == 2 || mask_form == 3)) {  /* query 0 of every head sees no key */
        for (size_t i = 0; i < 2u * heads; ++i)
            for (size_t j = 0; j < p.mask_cols; ++j) keep_buf[i * q_len * p.mask_cols + j] = mask_form == 2;
    }
    MLCC_ISA_NAME(mlcc_f32_attention)(cfg, &p, q_buf, k_buf, v_buf, add, keep, y_got, work);
    mlcc_f32_attention__reference(&p, q_buf, k_buf, v_buf, add, keep, y_want, ref_work);
    ++cases;
    const size_t total = 2u * heads * q_len * (dim + 1u);
    for (size_t i = 0; i < total + 8u; ++i) {
        const float got = y_got[i], want = y_want[i];
        const int same = (isnan(got) && isnan(want)) || fabsf(got - want) <= 1e-4f + 1e-4f * fabsf(want);
        if (!same) {
            printf("heads %zu group %zu q %zu kv %zu dim %zu block %zu transposed %d mask %d causal %d zero %d: "
                   "y[%zu] = %g, want %g\n", heads, kv_group, q_len, kv_len, dim, block_rows, transposed_q,
                   mask_form, causal, zero_rows, i, (double)got, (double)want);
            ++failures;
            return;
        }
    }
}

int main(void)
{
    const size_t nr = VARIANT.nr;
    const size_t keys[] = {1u, nr - 1u, nr, nr + 1u, 3u * nr + 5u};
    for (size_t ki = 0; ki < sizeof keys / sizeof keys[0]; ++ki) {
        const size_t kv = keys[ki];
        if (kv == 0u) continue;
        for (int mask = 0; mask < 4; ++mask) {
            check(2u, 1u, 5u, kv, 7u, 5u, 0, mask, 0, 0);
            check(4u, 2u, 13u, kv, 1u, 4u, 1, mask, 1, 0);
            check(2u, 2u, 9u, kv, 16u, 3u, 0, mask, 0, 1);
        }
    }
    check(1u, 1u, 70u, 200u, 8u, 32u, 0, 3, 1, 1);
    printf("%d of %d cases differ\n", failures, cases);
    return failures != 0;
}
