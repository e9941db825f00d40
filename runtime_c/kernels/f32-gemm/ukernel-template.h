/* The body of every scalar f32-gemm variant: an MRxNR micro-kernel and a 1xNR row kernel in portable C
 * written for clang's auto-vectoriser (NR is a whole number of the target's vectors and the accumulators
 * fit its registers). A ukernel-MRxNR.c file defines MR, NR, TILE, ROW and CONFIG (the names of the two
 * kernels and the config it exports), then includes this. Default blocking: a 256 KB L2 (ops/_gemm.blocking). */
#include "mlcc/kernels/f32-gemm.h"

#define KC 128u
#define MC 256u
#define NC 2048u

/* C = epilogue(alpha * acc + S), S the sum so far: C itself, or init's row in every row */
static void store(size_t mr, size_t nr, float acc[][NR], float *c, size_t ldc, const float *init, float alpha,
                  const struct mlcc_f32_epilogue *e, const float *residual)
{
    if (init != NULL) {
        for (size_t i = 0; i < mr; ++i)
            for (size_t j = 0; j < nr; ++j) c[i * ldc + j] = init[j] + alpha * acc[i][j];
    } else if (nr == NR) {
        for (size_t i = 0; i < mr; ++i)
            for (size_t j = 0; j < NR; ++j) c[i * ldc + j] += alpha * acc[i][j];
    } else {
        for (size_t i = 0; i < mr; ++i)
            for (size_t j = 0; j < nr; ++j) c[i * ldc + j] += alpha * acc[i][j];
    }
    if (e == NULL) return;
    for (size_t i = 0; i < mr; ++i) {
        float *ci = c + i * ldc;
        if (residual != NULL) {
            const float *r = residual + i * e->residual_rs;
            for (size_t j = 0; j < nr; ++j) ci[j] += r[j * e->residual_cs];
        }
        if (e->activation != MLCC_ACTIVATION_NONE)
            for (size_t j = 0; j < nr; ++j) ci[j] = mlcc_f32_activate(e, ci[j]);
    }
}

void TILE(size_t mr, size_t nr, size_t kc, const float *a, size_t a_rs, size_t a_cs,
          const float *MLCC_RESTRICT w, float *MLCC_RESTRICT c, size_t ldc, const float *init, float alpha,
          const struct mlcc_f32_epilogue *e, const float *residual)
{
    /* rows past mr repeat the last one: computed, never stored */
    const float *ar[MR];
    float acc[MR][NR];
    for (size_t i = 0; i < MR; ++i) {
        ar[i] = a + MLCC_MIN(i, mr - 1) * a_rs;
        for (size_t j = 0; j < NR; ++j) acc[i][j] = 0.0f;
    }
    for (size_t p = 0; p < kc; ++p) {
        const float *MLCC_RESTRICT wp = w + p * NR;
        for (size_t i = 0; i < MR; ++i) {
            const float ai = ar[i][p * a_cs];
            for (size_t j = 0; j < NR; ++j) acc[i][j] += ai * wp[j];
        }
    }
    store(mr, nr, acc, c, ldc, init, alpha, e, residual);
}

void ROW(size_t nr, size_t kc, const float *a, size_t a_cs, const float *MLCC_RESTRICT w, size_t w_panel,
         float *MLCC_RESTRICT c, const float *init, float alpha, const struct mlcc_f32_epilogue *e,
         const float *residual)
{
    for (size_t j0 = 0; j0 < nr; j0 += NR, w += w_panel) {  /* a panel at a time */
        float acc[1][NR];
        for (size_t j = 0; j < NR; ++j) acc[0][j] = 0.0f;
        for (size_t p = 0; p < kc; ++p) {
            const float ap = a[p * a_cs];
            const float *MLCC_RESTRICT wp = w + p * NR;
            for (size_t j = 0; j < NR; ++j) acc[0][j] += ap * wp[j];
        }
        store(1, MLCC_MIN(NR, nr - j0), acc, c + j0, NR, init == NULL ? NULL : init + j0, alpha, e,
              residual == NULL ? NULL : residual + j0 * e->residual_cs);
    }
}

const struct mlcc_f32_gemm_config CONFIG = {TILE, ROW, MR, NR, KC, MC, NC, MLCC_F32_GEMM_A_IN_PLACE, NULL};
