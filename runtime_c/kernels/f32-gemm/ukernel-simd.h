/* The body of every SIMD f32-gemm variant, written on a SIMD shim (mlcc/simd/<isa>.h): an MR x NR
 * register-blocked micro-kernel and a 1 x NR one, both finishing the tile in registers (alpha, the
 * partial sum already in C, the residual, then the activation) before one store.
 *
 * A ukernel-MRxNR-ISA.c file includes its shim, defines MR, NR (a whole number of vectors), TILE, ROW and
 * CONFIG (the names of the two kernels and the config), KC and MC (the cache blocking), then includes this.
 * Accumulators: MR * NR / lanes vectors plus NR / lanes for a row of B and one broadcast of A must fit the
 * register file (AVX-512 8x32: 16 + 2 + 1 of 32; AVX2 6x16: 12 + 2 + 1 of 16).
 */
#include "mlcc/activation-simd.h"
#include "mlcc/kernels/f32-gemm.h"

#define NV (NR / MLCC_F32V_LANES)

/* c[0 .. nr) = epilogue(alpha * acc + c): a finished row of the tile, from registers to memory. */
static void finish_row(const mlcc_f32v acc[NV], size_t nr, float *c, float alpha,
                       const struct mlcc_f32_epilogue *e, const float *residual)
{
    const mlcc_f32v va = mlcc_f32v_splat(alpha);
    mlcc_f32v v[NV];
    float spill[NR];
    const int full = nr == NR;
    if (full) {
        for (size_t j = 0; j < NV; ++j) v[j] = mlcc_f32v_fma(mlcc_f32v_load(c + j * MLCC_F32V_LANES), va, acc[j]);
    } else {  /* a column tail: through a full-width copy of the row */
        for (size_t j = 0; j < nr; ++j) spill[j] = c[j];
        for (size_t j = nr; j < NR; ++j) spill[j] = 0.0f;
        for (size_t j = 0; j < NV; ++j) v[j] = mlcc_f32v_fma(mlcc_f32v_load(spill + j * MLCC_F32V_LANES), va, acc[j]);
    }
    if (e != NULL) {
        if (residual != NULL) {
            const size_t cs = e->residual_cs;
            if (cs == 1 && full) {
                for (size_t j = 0; j < NV; ++j) v[j] = mlcc_f32v_add(v[j], mlcc_f32v_load(residual + j * MLCC_F32V_LANES));
            } else if (cs == 0) {
                const mlcc_f32v r = mlcc_f32v_splat(residual[0]);
                for (size_t j = 0; j < NV; ++j) v[j] = mlcc_f32v_add(v[j], r);
            } else {
                for (size_t j = 0; j < nr; ++j) spill[j] = residual[j * cs];
                for (size_t j = nr; j < NR; ++j) spill[j] = 0.0f;
                for (size_t j = 0; j < NV; ++j) v[j] = mlcc_f32v_add(v[j], mlcc_f32v_load(spill + j * MLCC_F32V_LANES));
            }
        }
        if (!mlcc_f32v_activate(e, v, NV)) {
            for (size_t j = 0; j < NV; ++j) mlcc_f32v_store(spill + j * MLCC_F32V_LANES, v[j]);
            for (size_t j = 0; j < nr; ++j) c[j] = mlcc_f32_activate(e, spill[j]);
            return;
        }
    }
    if (full) {
        for (size_t j = 0; j < NV; ++j) mlcc_f32v_store(c + j * MLCC_F32V_LANES, v[j]);
    } else {
        for (size_t j = 0; j < NV; ++j) mlcc_f32v_store(spill + j * MLCC_F32V_LANES, v[j]);
        for (size_t j = 0; j < nr; ++j) c[j] = spill[j];
    }
}

/* acc += A[MR rows][kc] * w[kc][NR]; a_cs is a literal 1 at the hot call, so the loads are unit-stride. */
static inline void accumulate_tile(mlcc_f32v acc[MR][NV], size_t kc, const float *const ar[MR], size_t a_cs,
                                   const float *MLCC_RESTRICT w)
{
    for (size_t p = 0; p < kc; ++p) {
        mlcc_f32v b[NV];
        for (size_t j = 0; j < NV; ++j) b[j] = mlcc_f32v_load(w + p * NR + j * MLCC_F32V_LANES);
        for (size_t i = 0; i < MR; ++i) {
            const mlcc_f32v ai = mlcc_f32v_splat(ar[i][p * a_cs]);
            for (size_t j = 0; j < NV; ++j) acc[i][j] = mlcc_f32v_fma(acc[i][j], ai, b[j]);
        }
    }
}

void TILE(size_t mr, size_t nr, size_t kc, const float *a, size_t a_rs, size_t a_cs,
          const float *MLCC_RESTRICT w, float *MLCC_RESTRICT c, size_t ldc, float alpha,
          const struct mlcc_f32_epilogue *e, const float *residual)
{
    /* rows past mr repeat the last one: computed, never stored */
    const float *ar[MR];
    mlcc_f32v acc[MR][NV];
    for (size_t i = 0; i < MR; ++i) {
        ar[i] = a + MLCC_MIN(i, mr - 1) * a_rs;
        for (size_t j = 0; j < NV; ++j) acc[i][j] = mlcc_f32v_zero();
    }
    if (a_cs == 1) {
        accumulate_tile(acc, kc, ar, 1, w);
    } else {
        accumulate_tile(acc, kc, ar, a_cs, w);
    }
    for (size_t i = 0; i < mr; ++i)
        finish_row(acc[i], nr, c + i * ldc, alpha, e, residual == NULL ? NULL : residual + i * e->residual_rs);
}

void ROW(size_t mr, size_t nr, size_t kc, const float *a, size_t a_rs, size_t a_cs,
         const float *MLCC_RESTRICT w, float *MLCC_RESTRICT c, size_t ldc, float alpha,
         const struct mlcc_f32_epilogue *e, const float *residual)
{
    /* four independent chains over k hide the latency of the multiply-add */
    mlcc_f32v acc[4][NV];
    size_t p = 0;
    (void)mr;
    (void)a_rs;
    (void)ldc;
    for (size_t u = 0; u < 4; ++u)
        for (size_t j = 0; j < NV; ++j) acc[u][j] = mlcc_f32v_zero();
    for (; p + 4 <= kc; p += 4) {
        for (size_t u = 0; u < 4; ++u) {
            const mlcc_f32v ap = mlcc_f32v_splat(a[(p + u) * a_cs]);
            for (size_t j = 0; j < NV; ++j)
                acc[u][j] = mlcc_f32v_fma(acc[u][j], ap, mlcc_f32v_load(w + (p + u) * NR + j * MLCC_F32V_LANES));
        }
    }
    for (; p < kc; ++p) {
        const mlcc_f32v ap = mlcc_f32v_splat(a[p * a_cs]);
        for (size_t j = 0; j < NV; ++j)
            acc[0][j] = mlcc_f32v_fma(acc[0][j], ap, mlcc_f32v_load(w + p * NR + j * MLCC_F32V_LANES));
    }
    for (size_t j = 0; j < NV; ++j)
        acc[0][j] = mlcc_f32v_add(mlcc_f32v_add(acc[0][j], acc[1][j]), mlcc_f32v_add(acc[2][j], acc[3][j]));
    finish_row(acc[0], nr, c, alpha, e, residual);
}

const struct mlcc_f32_gemm_config CONFIG = {TILE, ROW, MR, NR, KC, MC};
