/* The f32-gemm driver (cache blocking and A packing around a micro-kernel), B packing and the scalar oracle.
 *
 * Loops, outermost first: nc columns of B, kc rows of k, mc rows of A (read in place, or packed into mr-row
 * micro-panels on this function's stack when transposed or the variant asks), then B micro-panels, then A
 * micro-panels: the kc x nr micro-panel of B in use is read by every micro-panel of the A block. */
#include "mlcc/kernels/f32-gemm.h"
#include "mlcc/simd.h"

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

/* A row of zeros: the sum so far of the first slice of k without a bias (as wide as the row kernel's). */
static const float zeros[MLCC_F32_GEMM_ROW_PANELS * MLCC_F32_GEMM_MAX_NR];

/* The first slice of k of the tile (rows x nb at c, bias at its first element): the row the micro-kernel
 * starts from (a bias row as it is, or zeros: C is never written before the kernel's one store), else NULL
 * after writing the bias into C (a column bias, a scaled one). */
static const float *first_sum(size_t rows, size_t nb, float *c, size_t ldc,
                              const float *bias, size_t bias_rs, size_t bias_cs, float beta)
{
    if (bias == NULL) return zeros;
    if (bias_rs == 0 && bias_cs == 1 && beta == 1.0f) return bias;
    init_c(rows, nb, c, ldc, bias, bias_rs, bias_cs, beta);
    return NULL;
}

/* One micro-panel: element (i, p) of ar[i][p * a_cs] to dst[p * mr + i]. Inlined with a literal mr and a_cs
 * of 1, the compiler turns the interleave into vector shuffles. */
static MLCC_F32_GEMM_INLINE void pack_panel(size_t mr, size_t kc, const float *const *ar, size_t a_cs,
                                            float *MLCC_RESTRICT dst)
{
    for (size_t p = 0; p < kc; ++p)
        for (size_t i = 0; i < mr; ++i) dst[p * mr + i] = ar[i][p * a_cs];
}

/* The same with each element in 4 consecutive floats, (i, p) at dst[(p * mr + i) * 4 + 0 .. 3]: one broadcast
 * here per element and block of A, none in the tile for each panel of B. */
static MLCC_F32_GEMM_INLINE void pack_panel_broadcast4(size_t mr, size_t kc, const float *const *ar, size_t a_cs,
                                                       float *MLCC_RESTRICT dst)
{
#if MLCC_HAVE_F32V && MLCC_F32V_LANES == 4
    /* one splat and one vector store per element: the compiler kept four scalar stores (SIMD128 in wasmtime:
     * pack_a was 6% of BERT's products) */
    for (size_t p = 0; p < kc; ++p)
        for (size_t i = 0; i < mr; ++i) mlcc_f32v_store(dst + (p * mr + i) * 4, mlcc_f32v_splat(ar[i][p * a_cs]));
#else
    for (size_t p = 0; p < kc; ++p)
        for (size_t i = 0; i < mr; ++i)
            for (size_t l = 0; l < 4; ++l) dst[(p * mr + i) * 4 + l] = ar[i][p * a_cs];
#endif
}

/* rows x kc of A into micro-panels of mr rows, k-major (element (i, p) of a panel at p * mr + i, or its
 * `copies` at (p * mr + i) * copies); the last panel's rows past `rows` repeat its last row, so the
 * micro-kernel reads every row and stores the real ones. */
static void pack_a(size_t rows, size_t kc, const float *a, size_t a_rs, size_t a_cs, size_t mr, size_t copies,
                   float *MLCC_RESTRICT packed)
{
    const float *ar[MLCC_F32_GEMM_MAX_MR];
    for (size_t i0 = 0; i0 < rows; i0 += mr, packed += mr * kc * copies) {
        for (size_t i = 0; i < mr; ++i) ar[i] = a + MLCC_MIN(i0 + i, rows - 1) * a_rs;
        if (copies == 4 && a_cs == 1 && mr == 4) {
            pack_panel_broadcast4(4, kc, ar, 1, packed);
        } else if (copies == 4) {
            pack_panel_broadcast4(mr, kc, ar, a_cs, packed);
        } else if (a_cs == 1 && mr == 8) {  /* the tiles' heights (manifest.toml), each its own shuffles */
            pack_panel(8, kc, ar, 1, packed);
        } else if (a_cs == 1 && mr == 6) {
            pack_panel(6, kc, ar, 1, packed);
        } else if (a_cs == 1 && mr == 4) {
            pack_panel(4, kc, ar, 1, packed);
        } else {
            pack_panel(mr, kc, ar, a_cs, packed);
        }
    }
}

/* Panels of B for the row kernel's next call, `left` of them to go: four at a time, never one alone after
 * others (five left: three, then two), so a row's columns are all summed in one order. */
static size_t next_row_panels(size_t left)
{
    return left == MLCC_F32_GEMM_ROW_PANELS + 1 ? MLCC_F32_GEMM_ROW_PANELS - 1 : MLCC_MIN(MLCC_F32_GEMM_ROW_PANELS, left);
}

/* A product too short for tiles (m * 2 <= mr, e.g. a GEMV): the row kernel over all of k, no packing, packed
 * B streamed once from memory; a single row (the GEMV) several panels at a time. Inlined, as gemm_blocks. */
static MLCC_F32_GEMM_INLINE void gemm_rows(const struct mlcc_f32_gemm_config *config, size_t m, size_t n, size_t k,
                                           MLCC_F32_GEMM_OPERANDS)
{
    const struct mlcc_f32_epilogue *e = epilogue;
    const size_t nr = config->nr, panels = (n + nr - 1) / nr;
    const float *residual = e == NULL ? NULL : e->residual;
    for (size_t j = 0; j < n;) {
        const size_t step = m == 1 ? next_row_panels(panels - j / nr) * nr : nr;
        const size_t nb = MLCC_MIN(step, n - j);
        for (size_t i = 0; i < m; ++i) {  /* the next rows find this panel of B in cache */
            float *cij = c + i * ldc + j;
            const float *init = first_sum(1, nb, cij, ldc, bias == NULL ? NULL : bias + i * bias_rs + j * bias_cs,
                                          bias_rs, bias_cs, beta);
            config->row(nb, k, a + i * a_rs, a_cs, packed_b + j * k, k * nr, cij, init, alpha, e,
                        residual == NULL ? NULL : residual + i * e->residual_rs + j * e->residual_cs);
        }
        j += step;
    }
}

/* The driver's choices for a product, made from the whole product's shape: a part of it run on its own
 * (mlcc_f32_gemm_part, a task of mlcc_f32_gemm_parallel) keeps them, so its tiles are summed as in one call. */
struct plan {
    int pack;          /* A packed into micro-panels */
    size_t copies;     /* floats per packed element */
    size_t kc_max, mc_step, nc_max;
};

static struct plan plan_for(const struct mlcc_f32_gemm_config *config, size_t n, size_t a_cs)
{
    const size_t mr = config->mr, nr = config->nr;
    struct plan p;
    /* A transposed (rows not contiguous) is packed, and row-major A for a variant whose tile wants packed A
     * once a few panels of B pay the copy back */
    p.pack = a_cs != 1 || (config->packed_a != MLCC_F32_GEMM_A_IN_PLACE && n > 3 * nr);
    /* floats per packed element: 4 (a vector's broadcast) where the variant asks and 8 panels of B pay it
     * (SIMD128 in wasmtime with the 64 KB buffer: 784x64x256 0.92-0.94x the time of plain panels, 196x96x576
     * 0.88, BERT's attention scores 128x128x32 0.99; mobilenet_v2 0.95, shufflenet 0.97, squeezenet 0.98) */
    p.copies = p.pack && config->packed_a == MLCC_F32_GEMM_A_BROADCAST4 && n >= 8 * nr ? 4 : 1;
    /* a packed A block is cut to the stack buffer: kc first, then as many micro-panels as it holds */
    p.kc_max = p.pack ? MLCC_MAX(1, MLCC_MIN(config->kc, MLCC_F32_GEMM_PACK_FLOATS / (mr * p.copies))) : config->kc;
    p.mc_step = p.pack ? MLCC_MAX(mr, MLCC_MIN(config->mc, MLCC_F32_GEMM_PACK_FLOATS / (p.kc_max * p.copies)) / mr * mr)
                       : MLCC_MAX(mr, config->mc / mr * mr);
    p.nc_max = MLCC_MAX(nr, config->nc / nr * nr);
    return p;
}

/* The blocked loops over an m x n part of a product with k > 0 and m * 2 > mr (plan from the whole one),
 * packing A into packed_a (MLCC_F32_GEMM_PACK_FLOATS, the caller's stack). Inlined into its two callers, so
 * a product's frames are what they were before parts existed (a firmware's stack bound stays tight). */
static MLCC_F32_GEMM_INLINE void gemm_blocks(const struct mlcc_f32_gemm_config *config, const struct plan *plan,
                                             size_t m, size_t n, size_t k, MLCC_F32_GEMM_OPERANDS,
                                             float *MLCC_RESTRICT packed_a)
{
    const size_t mr = config->mr, nr = config->nr;
    const int pack = plan->pack;
    const size_t copies = plan->copies, kc_max = plan->kc_max, mc_step = plan->mc_step, nc_max = plan->nc_max;
    const float *residual = epilogue == NULL ? NULL : epilogue->residual;
    for (size_t j0 = 0; j0 < n; j0 += nc_max) {
        const size_t nc = MLCC_MIN(nc_max, n - j0);
        for (size_t p0 = 0; p0 < k; p0 += kc_max) {
            const size_t kc = MLCC_MIN(kc_max, k - p0);
            /* the epilogue runs on the last slice of k, while each tile is still in registers */
            const struct mlcc_f32_epilogue *e = p0 + kc == k ? epilogue : NULL;
            for (size_t i0 = 0; i0 < m; i0 += mc_step) {
                const size_t mc = MLCC_MIN(mc_step, m - i0);
                const float *ablock = a + i0 * a_rs + p0 * a_cs;
                if (pack) pack_a(mc, kc, ablock, a_rs, a_cs, mr, copies, packed_a);
                for (size_t j = j0; j < j0 + nc; j += nr) {
                    const size_t nb = MLCC_MIN(nr, n - j);
                    const float *w = packed_b + j * k + p0 * nr;
                    for (size_t i = 0; i < mc; i += mr) {
                        const size_t rows = MLCC_MIN(mr, mc - i);
                        /* a packed micro-panel: rows `copies` apart, k mr of them apart */
                        const float *ai = pack ? packed_a + i * kc * copies : ablock + i * a_rs;
                        const size_t ars = pack ? copies : a_rs, acs = pack ? mr * copies : a_cs;
                        float *cij = c + (i0 + i) * ldc + j;
                        const float *rij = e == NULL || residual == NULL ? NULL
                            : residual + (i0 + i) * e->residual_rs + j * e->residual_cs;
                        /* the first slice starts from the bias; a bias written into C is written a tile at a
                         * time, so it is in L1 for the kernel */
                        const float *init = p0 > 0 ? NULL
                            : first_sum(rows, nb, cij, ldc, bias == NULL ? NULL : bias + (i0 + i) * bias_rs + j * bias_cs,
                                        bias_rs, bias_cs, beta);
                        if (rows * 2 > mr) {  /* a short tile wastes less than rows one at a time */
                            /* the last tile: the rows after it, if any, too few for one (run one at a time) */
                            const int edge = i == 0 || (i + mr + mr / 2 >= mc);
                            const mlcc_f32_gemm_ukernel_fn tile =
                                config->edge_tile != NULL && edge ? config->edge_tile : config->tile;
#if defined(MLCC_F32_GEMM_DIRECT_TILE)
                            if (tile == MLCC_F32_GEMM_DIRECT_TILE)
                                MLCC_F32_GEMM_DIRECT_TILE(rows, nb, kc, ai, ars, acs, w, cij, ldc, init, alpha, e, rij);
                            else
#endif
                                tile(rows, nb, kc, ai, ars, acs, w, cij, ldc, init, alpha, e, rij);
                        } else {
                            for (size_t r = 0; r < rows; ++r)
                                config->row(nb, kc, ai + r * ars, acs, w, k * nr, cij + r * ldc, init, alpha, e,
                                            rij == NULL ? NULL : rij + r * e->residual_rs);
                        }
                    }
                }
            }
        }
    }
}

void mlcc_f32_gemm(const struct mlcc_f32_gemm_config *config, size_t m, size_t n, size_t k, MLCC_F32_GEMM_OPERANDS)
{
    float packed_a[MLCC_F32_GEMM_PACK_FLOATS];
    if (k == 0) {  /* no product: the epilogue still applies to the bias */
        init_c(m, n, c, ldc, bias, bias_rs, bias_cs, beta);
        mlcc_f32_epilogue_apply(epilogue, m, n, c, ldc, 0, 0);
        return;
    }
    if (m * 2 <= config->mr) {
        gemm_rows(config, m, n, k, a, a_rs, a_cs, packed_b, c, ldc, alpha, bias, bias_rs, bias_cs, beta, epilogue);
        return;
    }
    const struct plan plan = plan_for(config, n, a_cs);
    gemm_blocks(config, &plan, m, n, k, a, a_rs, a_cs, packed_b, c, ldc, alpha, bias, bias_rs, bias_cs, beta,
                epilogue, packed_a);
}

void mlcc_f32_gemm_part(const struct mlcc_f32_gemm_config *config, size_t m, size_t n, size_t k,
                        size_t i0, size_t i1, size_t j0, size_t j1, MLCC_F32_GEMM_OPERANDS)
{
    float packed_a[MLCC_F32_GEMM_PACK_FLOATS];
    if (i0 >= i1 || j0 >= j1) return;
    /* the part as a product of its own: its corner of A, B, C, the bias and the residual */
    const size_t rows = i1 - i0, cols = j1 - j0;
    struct mlcc_f32_epilogue e;
    const struct mlcc_f32_epilogue *ep = epilogue;
    if (ep != NULL && ep->residual != NULL) {
        e = *ep;
        e.residual += i0 * ep->residual_rs + j0 * ep->residual_cs;
        ep = &e;
    }
    const float *part_bias = bias == NULL ? NULL : bias + i0 * bias_rs + j0 * bias_cs;
    const float *part_a = a + i0 * a_rs;
    const float *part_b = packed_b + j0 * k;
    float *part_c = c + i0 * ldc + j0;
    if (k == 0) {
        init_c(rows, cols, part_c, ldc, part_bias, bias_rs, bias_cs, beta);
        mlcc_f32_epilogue_apply(ep, rows, cols, part_c, ldc, 0, 0);
    } else if (m * 2 <= config->mr) {  /* the whole product's path, not the part's */
        gemm_rows(config, rows, cols, k, part_a, a_rs, a_cs, part_b, part_c, ldc, alpha, part_bias, bias_rs, bias_cs,
                  beta, ep);
    } else {
        const struct plan plan = plan_for(config, n, a_cs);
        gemm_blocks(config, &plan, rows, cols, k, part_a, a_rs, a_cs, part_b, part_c, ldc, alpha, part_bias, bias_rs,
                    bias_cs, beta, ep, packed_a);
    }
}

#if defined(__wasm_simd128__)
/* Eight columns of B, each contiguous over k (b_rs 1: a transposed B, as attention's K^T per head), into an
 * 8-wide micro-panel by 4x4 transposes: four steps of k of four columns a time, 4 loads, 8 lane shuffles and
 * 4 stores, where the copy below moves one float at a time from eight rows. */
static void pack_columns8(size_t k, const float *b, size_t b_cs, float *MLCC_RESTRICT dst)
{
    size_t p = 0;
    for (; p + 4 <= k; p += 4)
        for (size_t h = 0; h < 8; h += 4) {
            const float *bh = b + h * b_cs + p;
            const v128_t r0 = wasm_v128_load(bh), r1 = wasm_v128_load(bh + b_cs);
            const v128_t r2 = wasm_v128_load(bh + 2 * b_cs), r3 = wasm_v128_load(bh + 3 * b_cs);
            const v128_t lo01 = wasm_i32x4_shuffle(r0, r1, 0, 4, 1, 5), lo23 = wasm_i32x4_shuffle(r2, r3, 0, 4, 1, 5);
            const v128_t hi01 = wasm_i32x4_shuffle(r0, r1, 2, 6, 3, 7), hi23 = wasm_i32x4_shuffle(r2, r3, 2, 6, 3, 7);
            float *d = dst + p * 8 + h;
            wasm_v128_store(d, wasm_i32x4_shuffle(lo01, lo23, 0, 1, 4, 5));
            wasm_v128_store(d + 8, wasm_i32x4_shuffle(lo01, lo23, 2, 3, 6, 7));
            wasm_v128_store(d + 16, wasm_i32x4_shuffle(hi01, hi23, 0, 1, 4, 5));
            wasm_v128_store(d + 24, wasm_i32x4_shuffle(hi01, hi23, 2, 3, 6, 7));
        }
    for (; p < k; ++p)
        for (size_t j = 0; j < 8; ++j) dst[p * 8 + j] = b[j * b_cs + p];
}
#endif

void mlcc_f32_gemm_pack_b(size_t k, size_t n, const float *b, size_t b_rs, size_t b_cs, size_t nr,
                          float *MLCC_RESTRICT packed)
{
    for (size_t j0 = 0; j0 < n; j0 += nr) {
        const size_t nb = MLCC_MIN(nr, n - j0);
#if defined(__wasm_simd128__)
        if (b_rs == 1 && nr == 8 && nb == 8) {
            pack_columns8(k, b + j0 * b_cs, b_cs, packed + (j0 / nr) * k * nr);
            continue;
        }
#endif
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
