/* The f32-gemm driver (blocking over k and m around a micro-kernel), B packing and the scalar oracle. */
#include "mlcc/kernels/f32-gemm.h"

static void init_c(size_t m, size_t n, float *c, size_t ldc,
                   const float *bias, size_t bias_rs, size_t bias_cs, float beta)
{
    for (size_t i = 0; i < m; ++i) {
        float *MLCC_RESTRICT ci = c + i * ldc;
        if (bias == NULL) {
            for (size_t j = 0; j < n; ++j) ci[j] = 0.0f;
        } else if (bias_cs == 0) {
            const float v = beta * bias[i * bias_rs];
            for (size_t j = 0; j < n; ++j) ci[j] = v;
        } else {
            const float *bi = bias + i * bias_rs;
            for (size_t j = 0; j < n; ++j) ci[j] = beta * bi[j * bias_cs];
        }
    }
}

void mlcc_f32_gemm(const struct mlcc_f32_gemm_config *config, size_t m, size_t n, size_t k,
                   const float *a, size_t a_rs, size_t a_cs,
                   const float *packed_b,
                   float *c, size_t ldc, float alpha,
                   const float *bias, size_t bias_rs, size_t bias_cs, float beta,
                   const struct mlcc_f32_epilogue *epilogue)
{
    const size_t mr = config->mr, nr = config->nr, kc_max = config->kc;
    const size_t mc = MLCC_MAX(mr, config->mc / mr * mr);
    const float *residual = epilogue == NULL ? NULL : epilogue->residual;
    if (k == 0) {  /* no product: the epilogue still applies to the bias */
        init_c(m, n, c, ldc, bias, bias_rs, bias_cs, beta);
        mlcc_f32_epilogue_apply(epilogue, m, n, c, ldc, 0, 0);
        return;
    }
    for (size_t p0 = 0; p0 < k; p0 += kc_max) {
        const size_t kc = MLCC_MIN(kc_max, k - p0);
        /* the epilogue runs on the last slice of k, while each tile is still in registers */
        const struct mlcc_f32_epilogue *e = p0 + kc == k ? epilogue : NULL;
        for (size_t i0 = 0; i0 < m; i0 += mc) {
            const size_t mb = MLCC_MIN(mc, m - i0);
            for (size_t j0 = 0; j0 < n; j0 += nr) {
                const size_t nb = MLCC_MIN(nr, n - j0);
                const float *w = packed_b + (j0 / nr) * k * nr + p0 * nr;
                for (size_t i = i0; i < i0 + mb; i += mr) {
                    const size_t rows = MLCC_MIN(mr, i0 + mb - i);
                    const float *ai = a + i * a_rs + p0 * a_cs;
                    float *cij = c + i * ldc + j0;
                    const float *rij = e == NULL || residual == NULL ? NULL
                        : residual + i * e->residual_rs + j0 * e->residual_cs;
                    if (p0 == 0)  /* C starts as the bias, a tile at a time so it is in L1 for the kernel */
                        init_c(rows, nb, cij, ldc, bias == NULL ? NULL : bias + i * bias_rs + j0 * bias_cs,
                               bias_rs, bias_cs, beta);
                    if (rows * 2 > mr) {  /* a short tile wastes less than rows one at a time */
                        config->tile(rows, nb, kc, ai, a_rs, a_cs, w, cij, ldc, alpha, e, rij);
                    } else {
                        for (size_t r = 0; r < rows; ++r)
                            config->row(1, nb, kc, ai + r * a_rs, a_rs, a_cs, w, cij + r * ldc, ldc, alpha, e,
                                        rij == NULL ? NULL : rij + r * e->residual_rs);
                    }
                }
            }
        }
    }
}

void mlcc_f32_gemm_pack_b(size_t k, size_t n, const float *b, size_t b_rs, size_t b_cs, size_t nr,
                          float *MLCC_RESTRICT packed)
{
    for (size_t j0 = 0; j0 < n; j0 += nr) {
        const size_t nb = MLCC_MIN(nr, n - j0);
        for (size_t p = 0; p < k; ++p) {
            const float *bp = b + p * b_rs + j0 * b_cs;
            float *MLCC_RESTRICT dst = packed + (j0 / nr) * k * nr + p * nr;
            if (b_cs == 1) {
                for (size_t j = 0; j < nb; ++j) dst[j] = bp[j];
            } else {
                for (size_t j = 0; j < nb; ++j) dst[j] = bp[j * b_cs];
            }
            for (size_t j = nb; j < nr; ++j) dst[j] = 0.0f;
        }
    }
}

void mlcc_f32_gemm__reference(size_t m, size_t n, size_t k,
                              const float *a, size_t a_rs, size_t a_cs,
                              const float *b, size_t b_rs, size_t b_cs,
                              float *c, size_t ldc, float alpha,
                              const float *bias, size_t bias_rs, size_t bias_cs, float beta,
                              const struct mlcc_f32_epilogue *epilogue)
{
    for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < n; ++j) {
            float sum = 0.0f;
            for (size_t p = 0; p < k; ++p) sum += a[i * a_rs + p * a_cs] * b[p * b_rs + j * b_cs];
            const float init = bias == NULL ? 0.0f : beta * bias[i * bias_rs + j * bias_cs];
            c[i * ldc + j] = alpha * sum + init;
        }
    }
    mlcc_f32_epilogue_apply(epilogue, m, n, c, ldc, 0, 0);
}
