/* The body of every SIMD f32-gemm variant, written on a SIMD shim (mlcc/simd/<isa>.h): an MR x NR
 * register-blocked micro-kernel and a 1 x NR one, both finishing the tile in registers (alpha, the
 * partial sum already in C, the residual, then the activation) before one store.
 *
 * A ukernel-MRxNR-ISA.c file includes its shim, defines MR, NR (a whole number of vectors), TILE, ROW and
 * CONFIG (the names of the two kernels and the config), KC, MC and NC (the blocking mlcc/ops/_gemm.py gives
 * the target it is for: generated code passes its own), then includes this. It may also define
 * ACCUMULATE_PACKED(acc, kc, a, w), its own loop over a packed micro-panel (see accumulate_tile): its config
 * then asks the driver to pack row-major A too.
 * Accumulators: MR * NR / lanes vectors plus NR / lanes for a row of B and one broadcast of A must fit the
 * register file (AVX-512 8x32: 16 + 2 + 1 of 32; AVX2 6x16: 12 + 2 + 1 of 16).
 */
#include "mlcc/activation-simd.h"
#include "mlcc/kernels/f32-gemm.h"

#define NV (NR / MLCC_F32V_LANES)

/* c[0 .. NR) = activation(v) through the scalar activation, for those without a vector form here. */
static void activate_row(const struct mlcc_f32_epilogue *e, const mlcc_f32v v[NV], float *c)
{
    float spill[NR];
    for (size_t j = 0; j < NV; ++j) mlcc_f32v_store(spill + j * MLCC_F32V_LANES, v[j]);
    for (size_t j = 0; j < NR; ++j) c[j] = mlcc_f32_activate(e, spill[j]);
}

/* c[0 .. nr) = epilogue(alpha * acc + s), s the row's sum so far (c itself or a row of init), for a column
 * tail or a broadcast or strided residual: through a full-width copy of the row. */
static void finish_row(const mlcc_f32v acc[NV], size_t nr, float *c, const float *s, float alpha,
                       const struct mlcc_f32_epilogue *e, const float *residual)
{
    const mlcc_f32v va = mlcc_f32v_splat(alpha);
    float row[NR], spill[NR];
    mlcc_f32v v[NV];
    if (e == NULL) {  /* nothing more to apply: one pass over the columns */
        for (size_t j = 0; j < NV; ++j) mlcc_f32v_store(spill + j * MLCC_F32V_LANES, acc[j]);
        for (size_t j = 0; j < nr; ++j) c[j] = s[j] + alpha * spill[j];
        return;
    }
    for (size_t j = 0; j < nr; ++j) row[j] = s[j];
    for (size_t j = nr; j < NR; ++j) row[j] = 0.0f;
    for (size_t j = 0; j < NV; ++j) v[j] = mlcc_f32v_fma(mlcc_f32v_load(row + j * MLCC_F32V_LANES), va, acc[j]);
    if (e != NULL) {
        if (residual != NULL) {
            const size_t cs = e->residual_cs;
            for (size_t j = 0; j < nr; ++j) spill[j] = residual[j * cs];
            for (size_t j = nr; j < NR; ++j) spill[j] = 0.0f;
            for (size_t j = 0; j < NV; ++j) v[j] = mlcc_f32v_add(v[j], mlcc_f32v_load(spill + j * MLCC_F32V_LANES));
        }
        if (!mlcc_f32v_activate(e, v, NV)) {
            activate_row(e, v, row);
            for (size_t j = 0; j < nr; ++j) c[j] = row[j];
            return;
        }
    }
    for (size_t j = 0; j < NV; ++j) mlcc_f32v_store(row + j * MLCC_F32V_LANES, v[j]);
    for (size_t j = 0; j < nr; ++j) c[j] = row[j];
}

/* C = epilogue(alpha * acc + S) for rows i < mr of a tile of `rows` rows (a literal: MR or 1), acc[i * NV + j]
 * its vectors, S the sum so far: C itself, or init's row in every row when init is not NULL. Full-width tiles with a contiguous residual stay in registers: every loop runs over constants
 * once inlined (rows past mr load row mr - 1 and are not stored), so acc is never spilled; the others go row
 * by row through memory. */
static MLCC_F32_GEMM_INLINE void finish_tile(mlcc_f32v *acc, size_t rows, size_t mr, size_t nr, float *c, size_t ldc,
                                             const float *init, float alpha, const struct mlcc_f32_epilogue *e,
                                             const float *residual)
{
    const size_t rs = residual == NULL ? 0 : e->residual_rs;
    const float *s = init == NULL ? c : init;
    const size_t s_rs = init == NULL ? ldc : 0;
    if (nr == NR && (residual == NULL || e->residual_cs == 1)) {
        const mlcc_f32v va = mlcc_f32v_splat(alpha);
        int vector = 1;
        for (size_t i = 0; i < rows; ++i)
            for (size_t j = 0; j < NV; ++j)
                acc[i * NV + j] = mlcc_f32v_fma(mlcc_f32v_load(s + MLCC_MIN(i, mr - 1) * s_rs + j * MLCC_F32V_LANES),
                                                va, acc[i * NV + j]);
        if (e != NULL) {
            if (residual != NULL)
                for (size_t i = 0; i < rows; ++i)
                    for (size_t j = 0; j < NV; ++j)
                        acc[i * NV + j] = mlcc_f32v_add(
                            acc[i * NV + j], mlcc_f32v_load(residual + MLCC_MIN(i, mr - 1) * rs + j * MLCC_F32V_LANES));
            vector = mlcc_f32v_activate(e, acc, rows * NV);
        }
        for (size_t i = 0; i < rows; ++i) {
            if (i == mr) break;
            if (vector) {
                for (size_t j = 0; j < NV; ++j) mlcc_f32v_store(c + i * ldc + j * MLCC_F32V_LANES, acc[i * NV + j]);
            } else {
                mlcc_f32v row[NV];  /* a copy: acc itself never has its address taken by a call */
                for (size_t j = 0; j < NV; ++j) row[j] = acc[i * NV + j];
                activate_row(e, row, c + i * ldc);
            }
        }
    } else {
        for (size_t i = 0; i < rows; ++i) {
            mlcc_f32v row[NV];
            if (i == mr) break;
            for (size_t j = 0; j < NV; ++j) row[j] = acc[i * NV + j];
            finish_row(row, nr, c + i * ldc, s + i * s_rs, alpha, e, residual == NULL ? NULL : residual + i * rs);
        }
    }
}

/* acc += A[MR rows][kc] * w[kc][NR]. Called with literal strides (a packed micro-panel: rows 1 apart, k MR
 * apart; or rows in place: k 1 apart), so every broadcast is a load at a constant offset. */
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
          const float *MLCC_RESTRICT w, float *MLCC_RESTRICT c, size_t ldc, const float *init, float alpha,
          const struct mlcc_f32_epilogue *e, const float *residual)
{
    const float *ar[MR];
    mlcc_f32v acc[MR][NV];
    for (size_t i = 0; i < MR; ++i)
        for (size_t j = 0; j < NV; ++j) acc[i][j] = mlcc_f32v_zero();
    if (a_rs == 1 && a_cs == MR) {  /* a packed micro-panel */
#if defined(ACCUMULATE_PACKED)
        ACCUMULATE_PACKED(acc, kc, a, w);
#else
        for (size_t i = 0; i < MR; ++i) ar[i] = a + i;
        accumulate_tile(acc, kc, ar, MR, w);
#endif
    } else {  /* rows past mr repeat the last one: computed, never stored */
        for (size_t i = 0; i < MR; ++i) ar[i] = a + MLCC_MIN(i, mr - 1) * a_rs;
        if (a_cs == 1) {
            accumulate_tile(acc, kc, ar, 1, w);
        } else {
            accumulate_tile(acc, kc, ar, a_cs, w);
        }
    }
    finish_tile(&acc[0][0], MR, mr, nr, c, ldc, init, alpha, e, residual);
}

void ROW(size_t mr, size_t nr, size_t kc, const float *a, size_t a_rs, size_t a_cs,
         const float *MLCC_RESTRICT w, float *MLCC_RESTRICT c, size_t ldc, const float *init, float alpha,
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
    finish_tile(&acc[0][0], 1, 1, nr, c, ldc, init, alpha, e, residual);
}

#if defined(ACCUMULATE_PACKED)
const struct mlcc_f32_gemm_config CONFIG = {TILE, ROW, MR, NR, KC, MC, NC, 1};
#else
const struct mlcc_f32_gemm_config CONFIG = {TILE, ROW, MR, NR, KC, MC, NC, 0};
#endif
