/* The body of every SIMD f32-gemm variant, written on a SIMD shim (mlcc/simd/<isa>.h): an MR x NR
 * register-blocked micro-kernel and a 1 x NR one, both finishing the tile in registers (alpha, the
 * partial sum already in C, the residual, then the activation) before one store.
 *
 * A ukernel-MRxNR-ISA.c file includes its shim, defines MR, NR (a whole number of vectors), TILE, ROW and
 * CONFIG (the names of the two kernels and the config), KC, MC and NC (the blocking mlcc/ops/_gemm.py gives
 * the target it is for: generated code passes its own), then includes this. It may also define
 * ACCUMULATE_PACKED(acc, kc, a, w), its own loop over a packed micro-panel (see accumulate_tile): its config
 * then asks the driver to pack row-major A too; and ACCUMULATE_BROADCAST(acc, kc, a, w), its loop over a
 * micro-panel holding each element in all 4 of a vector's lanes, which the driver then packs on wide products;
 * and ACCUMULATE_ROW(acc, kc, a, w), the row kernel's loop over one panel and a row of A in place (k 1 apart)
 * into acc[4][NV]; ACCUMULATE_PANELS(acc, count, kc, a, w, w_panel), the loop of accumulate_panels over a row
 * of A in place (k 1 apart), summing each column in the same order; and ROW_PANELS_AT_ONCE 2, where four panels' accumulators and loads of B outnumber the
 * registers, so the row kernel streams four panels as two passes of two (the same sums, in the same order);
 * and PREFETCH_B_AT_EDGES, for a config whose edge_tile prefetches B on every panel (see edge_tile).
 * Accumulators: MR * NR / lanes vectors plus NR / lanes for a row of B and one broadcast of A must fit the
 * register file (AVX-512 8x32: 16 + 2 + 1 of 32; AVX2 6x16: 12 + 2 + 1 of 16).
 */
#include "mlcc/activation-simd.h"
#include "mlcc/kernels/f32-gemm.h"

#define NV (NR / MLCC_F32V_LANES)

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH_FOR_WRITE(p) __builtin_prefetch((p), 1)
#define PREFETCH(p) __builtin_prefetch((p))
#else
#define PREFETCH(p) ((void)(p))
#define PREFETCH_FOR_WRITE(p) ((void)(p))
#endif

/* c[0 .. nr) = activation(v) through the scalar activation, for those without a vector form here. */
static void activate_row(const struct mlcc_f32_epilogue *e, const mlcc_f32v v[NV], float *c, size_t nr)
{
    float spill[NR];
    for (size_t j = 0; j < NV; ++j) mlcc_f32v_store(spill + j * MLCC_F32V_LANES, v[j]);
    for (size_t j = 0; j < nr; ++j) c[j] = mlcc_f32_activate(e, spill[j]);
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
            activate_row(e, v, c, nr);
            return;
        }
    }
    for (size_t j = 0; j < NV; ++j) mlcc_f32v_store(row + j * MLCC_F32V_LANES, v[j]);
    for (size_t j = 0; j < nr; ++j) c[j] = row[j];
}

/* The finish of finish_tile in registers, over the first nv vectors of each row (NV, a literal, or fewer: a
 * tile of whole vectors at C's right edge); returns 0 when the activation has no vector form, with all but
 * it applied to acc. Rows past mr and vectors past nv load the last real ones and are stored to a scratch
 * row, so every loop runs over constants once inlined and acc never lives in memory (a loop over mr would
 * index it at run time: see mlcc_f32v_activate_held). */
static MLCC_F32_GEMM_INLINE int finish_vectors(mlcc_f32v *acc, size_t rows, size_t mr, size_t nv, float *c,
                                               size_t ldc, const float *s, size_t s_rs, float alpha,
                                               const struct mlcc_f32_epilogue *e, const float *residual, size_t rs)
{
    const mlcc_f32v va = mlcc_f32v_splat(alpha);
    float sink[NR];
    for (size_t i = 0; i < rows; ++i)
        for (size_t j = 0; j < NV; ++j)
            acc[i * NV + j] = mlcc_f32v_fma(
                mlcc_f32v_load(s + MLCC_MIN(i, mr - 1) * s_rs + MLCC_MIN(j, nv - 1) * MLCC_F32V_LANES), va,
                acc[i * NV + j]);
    if (e != NULL) {
        if (residual != NULL)
            for (size_t i = 0; i < rows; ++i)
                for (size_t j = 0; j < NV; ++j)
                    acc[i * NV + j] = mlcc_f32v_add(
                        acc[i * NV + j],
                        mlcc_f32v_load(residual + MLCC_MIN(i, mr - 1) * rs + MLCC_MIN(j, nv - 1) * MLCC_F32V_LANES));
        if (!mlcc_f32v_activate_held(e, acc, rows * NV)) return 0;
    }
    for (size_t i = 0; i < rows; ++i) {
        float *ci = i < mr ? c + i * ldc : sink;
        for (size_t j = 0; j < NV; ++j)
            mlcc_f32v_store((j < nv ? ci : sink) + j * MLCC_F32V_LANES, acc[i * NV + j]);
    }
    return 1;
}

/* C = epilogue(alpha * acc + S) for rows i < mr and columns j < nr of a tile of `rows` rows (a literal: MR or
 * 1), acc[i * NV + j] its vectors, S the sum so far: C itself, or init's row in every row when init is not
 * NULL. Tiles of whole vectors with a contiguous residual stay in registers (finish_vectors); the others, a
 * column tail inside a vector or a broadcast or strided residual, go row by row through a copy. */
static MLCC_F32_GEMM_INLINE void finish_tile(mlcc_f32v *acc, size_t rows, size_t mr, size_t nr, float *c, size_t ldc,
                                             const float *init, float alpha, const struct mlcc_f32_epilogue *e,
                                             const float *residual)
{
    const size_t rs = residual == NULL ? 0 : e->residual_rs;
    const float *s = init == NULL ? c : init;
    const size_t s_rs = init == NULL ? ldc : 0;
    const int whole = nr % MLCC_F32V_LANES == 0 && (residual == NULL || e->residual_cs == 1);
    if (whole) {
        /* the full width with its literal count of vectors: no selects on the common path */
        if (nr == NR ? finish_vectors(acc, rows, mr, NV, c, ldc, s, s_rs, alpha, e, residual, rs)
                     : finish_vectors(acc, rows, mr, nr / MLCC_F32V_LANES, c, ldc, s, s_rs, alpha, e, residual, rs))
            return;
    }
    {
        mlcc_f32v tile[MR * NV];  /* the rest row by row from a copy (see mlcc_f32v_activate_held) */
        for (size_t i = 0; i < rows * NV; ++i) tile[i] = acc[i];
        for (size_t i = 0; i < mr; ++i) {
            if (whole) {  /* all but the activation applied */
                activate_row(e, tile + i * NV, c + i * ldc, nr);
            } else {
                finish_row(tile + i * NV, nr, c + i * ldc, s + i * s_rs, alpha, e,
                           residual == NULL ? NULL : residual + i * rs);
            }
        }
    }
}

/* B's micro-panel is prefetched ahead of the loads (PREFETCH_B_FLOATS on) once it is larger than this: it
 * then streams from L2 or memory rather than staying in L1 across tiles (8x32__avx512 with bias+ReLU, share of
 * the paired FMA peak, medians of 4-6 interleaved rounds: 49x512x2048 58 -> 65%, 1024^3 63 -> 66%; with k 64 or
 * 256, where the panel stays in L1, 2-6% slower, hence the threshold). A variant may set its own threshold. */
#ifndef PREFETCH_B_BYTES
#define PREFETCH_B_BYTES 32768u
#endif
#define PREFETCH_B_FLOATS 1024u

/* acc += A[MR rows][kc] * w[kc][NR]. Called with literal strides (a packed micro-panel: rows 1 apart, k MR
 * apart; or rows in place: k 1 apart) and prefetch_b, so every broadcast is a load at a constant offset. */
static inline void accumulate_tile(mlcc_f32v acc[MR][NV], size_t kc, const float *const ar[MR], size_t a_cs,
                                   const float *MLCC_RESTRICT w, int prefetch_b)
{
    for (size_t p = 0; p < kc; ++p) {
        mlcc_f32v b[NV];
        for (size_t j = 0; j < NV; ++j) b[j] = mlcc_f32v_load(w + p * NR + j * MLCC_F32V_LANES);
        if (prefetch_b)
            for (size_t j = 0; j < NR; j += 16) PREFETCH(w + p * NR + PREFETCH_B_FLOATS + j);
        for (size_t i = 0; i < MR; ++i) {
            const mlcc_f32v ai = mlcc_f32v_splat(ar[i][p * a_cs]);
            for (size_t j = 0; j < NV; ++j) acc[i][j] = mlcc_f32v_fma(acc[i][j], ai, b[j]);
        }
    }
}

/* The tile, prefetching B ahead on every panel (edge, a literal once inlined) or only on one too long to stay
 * in L1. */
static MLCC_F32_GEMM_INLINE void tile(size_t mr, size_t nr, size_t kc, const float *a, size_t a_rs, size_t a_cs,
                                      const float *MLCC_RESTRICT w, float *MLCC_RESTRICT c, size_t ldc,
                                      const float *init, float alpha, const struct mlcc_f32_epilogue *e,
                                      const float *residual, int edge)
{
    const float *ar[MR];
    mlcc_f32v acc[MR][NV];
    for (size_t i = 0; i < MR; ++i)
        for (size_t j = 0; j < NV; ++j) acc[i][j] = mlcc_f32v_zero();
    /* C's lines requested for writing now, and the residual's for reading, so their misses overlap the product
     * instead of stalling the finish (NHWC 1x1 convolutions with k 64: 3136x256x64 with bias+ReLU 58 -> 81% of
     * the FMA peak on AVX-512; with a residual 784x512x128 64 -> 71%) */
    for (size_t i = 0; i < MR; ++i)
        for (size_t j = 0; j < NR; j += 16) PREFETCH_FOR_WRITE(c + MLCC_MIN(i, mr - 1) * ldc + j);
    if (residual != NULL && e->residual_cs == 1)
        for (size_t i = 0; i < MR; ++i)
            for (size_t j = 0; j < NR; j += 16) PREFETCH(residual + MLCC_MIN(i, mr - 1) * e->residual_rs + j);
#if defined(ACCUMULATE_BROADCAST)
    if (a_rs == MLCC_F32V_LANES && a_cs == MR * MLCC_F32V_LANES) {  /* packed, each element in all lanes */
        ACCUMULATE_BROADCAST(acc, kc, a, w);
    } else
#endif
    if (a_rs == 1 && a_cs == MR) {  /* a packed micro-panel */
#if defined(ACCUMULATE_PACKED)
        ACCUMULATE_PACKED(acc, kc, a, w);
#else
        for (size_t i = 0; i < MR; ++i) ar[i] = a + i;
        accumulate_tile(acc, kc, ar, MR, w, 0);
#endif
    } else {  /* rows past mr repeat the last one: computed, never stored */
        for (size_t i = 0; i < MR; ++i) ar[i] = a + MLCC_MIN(i, mr - 1) * a_rs;
        if (a_cs == 1) {
            if (edge || kc * NR * sizeof(float) > PREFETCH_B_BYTES) {
                accumulate_tile(acc, kc, ar, 1, w, 1);
            } else {
                accumulate_tile(acc, kc, ar, 1, w, 0);
            }
        } else {
            accumulate_tile(acc, kc, ar, a_cs, w, 0);
        }
    }
    finish_tile(&acc[0][0], MR, mr, nr, c, ldc, init, alpha, e, residual);
}

void TILE(size_t mr, size_t nr, size_t kc, const float *a, size_t a_rs, size_t a_cs,
          const float *MLCC_RESTRICT w, float *MLCC_RESTRICT c, size_t ldc, const float *init, float alpha,
          const struct mlcc_f32_epilogue *e, const float *residual)
{
    tile(mr, nr, kc, a, a_rs, a_cs, w, c, ldc, init, alpha, e, residual, 0);
}

#if defined(PREFETCH_B_AT_EDGES)
/* The config's edge_tile (f32-gemm.h): B read from memory, a panel a few tiles use (products of few rows: a
 * Winograd point's tiles, a 7x7 image's pixels), is prefetched 4 KB ahead by the panel's first tile, and by
 * its last into the next panel's head, which would otherwise wait on memory. */
static void edge_tile(size_t mr, size_t nr, size_t kc, const float *a, size_t a_rs, size_t a_cs,
                      const float *MLCC_RESTRICT w, float *MLCC_RESTRICT c, size_t ldc, const float *init,
                      float alpha, const struct mlcc_f32_epilogue *e, const float *residual)
{
    tile(mr, nr, kc, a, a_rs, a_cs, w, c, ldc, init, alpha, e, residual, 1);
}
#define EDGE_TILE edge_tile
#else
#define EDGE_TILE NULL
#endif

/* One panel of the row kernel: acc over kc steps of a (a_cs apart) into nr <= NR columns. */
static void row_panel(size_t nr, size_t kc, const float *a, size_t a_cs, const float *MLCC_RESTRICT w,
                      float *MLCC_RESTRICT c, const float *init, float alpha, const struct mlcc_f32_epilogue *e,
                      const float *residual)
{
    /* four independent chains over k hide the latency of the multiply-add */
    mlcc_f32v acc[4][NV];
    size_t p = 0;
    for (size_t u = 0; u < 4; ++u)
        for (size_t j = 0; j < NV; ++j) acc[u][j] = mlcc_f32v_zero();
#if defined(ACCUMULATE_ROW)
    if (a_cs == 1) {
        ACCUMULATE_ROW(acc, kc, a, w);
        p = kc;
    }
#endif
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
    finish_tile(&acc[0][0], 1, 1, nr, c, NR, init, alpha, e, residual);
}

#define PANELS MLCC_F32_GEMM_ROW_PANELS

/* acc[q] += a[p] * w[q * w_panel + p * NR ..] over kc steps for `count` panels at once (2 to PANELS, a literal
 * once inlined): count * NV independent chains, as many streams of B. (SIMD128's shuffle tree of accumulate_row
 * measured no faster here, 0.94-1.06 in the same process.) */
static MLCC_F32_GEMM_INLINE void accumulate_panels(mlcc_f32v acc[PANELS][NV], size_t count, size_t kc,
                                                   const float *a, size_t a_cs, const float *MLCC_RESTRICT w,
                                                   size_t w_panel)
{
    for (size_t p = 0; p < kc; ++p) {
        const mlcc_f32v ap = mlcc_f32v_splat(a[p * a_cs]);
        for (size_t q = 0; q < count; ++q)
            for (size_t j = 0; j < NV; ++j)
                acc[q][j] = mlcc_f32v_fma(acc[q][j], ap, mlcc_f32v_load(w + q * w_panel + p * NR + j * MLCC_F32V_LANES));
    }
}

static MLCC_F32_GEMM_INLINE void row_panels(size_t count, size_t nr, size_t kc, const float *a, size_t a_cs,
                                            const float *MLCC_RESTRICT w, size_t w_panel, float *MLCC_RESTRICT c,
                                            const float *init, float alpha, const struct mlcc_f32_epilogue *e,
                                            const float *residual)
{
    mlcc_f32v acc[PANELS][NV];
    for (size_t q = 0; q < count; ++q)
        for (size_t j = 0; j < NV; ++j) acc[q][j] = mlcc_f32v_zero();
#if defined(ACCUMULATE_PANELS)
    if (a_cs == 1) {
        ACCUMULATE_PANELS(acc, count, kc, a, w, w_panel);
    } else
#endif
    accumulate_panels(acc, count, kc, a, a_cs, w, w_panel);
    for (size_t q = 0; q < count; ++q)
        finish_tile(acc[q], 1, 1, MLCC_MIN(NR, nr - q * NR), c + q * NR, NR, init == NULL ? NULL : init + q * NR,
                    alpha, e, residual == NULL ? NULL : residual + q * NR * e->residual_cs);
}

/* Two or more panels stream together, every column summed in the same order (the driver never leaves one
 * panel of a row alone after others: columns of equal inputs come out equal); one panel alone takes the
 * four chains of row_panel. */
void ROW(size_t nr, size_t kc, const float *a, size_t a_cs, const float *MLCC_RESTRICT w, size_t w_panel,
         float *MLCC_RESTRICT c, const float *init, float alpha, const struct mlcc_f32_epilogue *e,
         const float *residual)
{
    if (nr > 3 * NR) {
#if defined(ROW_PANELS_AT_ONCE) && ROW_PANELS_AT_ONCE == 2  /* A read twice, B still once */
        row_panels(2, 2 * NR, kc, a, a_cs, w, w_panel, c, init, alpha, e, residual);
        row_panels(2, nr - 2 * NR, kc, a, a_cs, w + 2 * w_panel, w_panel, c + 2 * NR,
                   init == NULL ? NULL : init + 2 * NR, alpha, e,
                   residual == NULL ? NULL : residual + 2 * NR * e->residual_cs);
#else
        row_panels(4, nr, kc, a, a_cs, w, w_panel, c, init, alpha, e, residual);
#endif
    } else if (nr > 2 * NR) {
        row_panels(3, nr, kc, a, a_cs, w, w_panel, c, init, alpha, e, residual);
    } else if (nr > NR) {
        row_panels(2, nr, kc, a, a_cs, w, w_panel, c, init, alpha, e, residual);
    } else {
        row_panel(nr, kc, a, a_cs, w, c, init, alpha, e, residual);
    }
}

#if defined(ACCUMULATE_BROADCAST)
const struct mlcc_f32_gemm_config CONFIG = {TILE, ROW, MR, NR, KC, MC, NC, MLCC_F32_GEMM_A_BROADCAST4, EDGE_TILE};
#elif defined(ACCUMULATE_PACKED)
const struct mlcc_f32_gemm_config CONFIG = {TILE, ROW, MR, NR, KC, MC, NC, MLCC_F32_GEMM_A_PACKED, EDGE_TILE};
#else
const struct mlcc_f32_gemm_config CONFIG = {TILE, ROW, MR, NR, KC, MC, NC, MLCC_F32_GEMM_A_IN_PLACE, EDGE_TILE};
#endif
