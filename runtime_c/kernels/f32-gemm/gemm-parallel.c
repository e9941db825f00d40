/* mlcc_f32_gemm_parallel: a product cut into tasks for the caller's parallel-for (mlcc/parallel.h), each a
 * part of whole tiles computed by mlcc_f32_gemm_part with the whole product's blocking, so every element is
 * summed as one call sums it. In a source of its own: a model that never splits links none of it (and its
 * task, whose address it takes, stays out of a firmware's static stack bound). */
#include "mlcc/kernels/f32-gemm.h"

struct gemm_job {
    const struct mlcc_f32_gemm_config *config;
    size_t m, n, k;
    const float *a;
    size_t a_rs, a_cs;
    const float *packed_b;
    float *c;
    size_t ldc;
    float alpha;
    const float *bias;
    size_t bias_rs, bias_cs;
    float beta;
    const struct mlcc_f32_epilogue *epilogue;
    size_t col_unit;          /* a short product (m * 2 <= mr): columns per unit, the last range ending at n */
    size_t row_tiles, panels; /* else the units are its mr x nr tiles, */
    int panel_major;          /* numbered down each panel of B in turn, else along each row of tiles */
    size_t units;
};

/* The tiles [begin, end) of a product as parts of whole lines (row tiles or panels) and the partial lines
 * at their ends: at most three mlcc_f32_gemm_part calls, each at multiples of mr and nr. */
static void gemm_range(void *job, size_t begin, size_t end)
{
    const struct gemm_job *g = (const struct gemm_job *)job;
    if (g->col_unit != 0) {
        const size_t j1 = end == g->units ? g->n : end * g->col_unit;
        mlcc_f32_gemm_part(g->config, g->m, g->n, g->k, 0, g->m, begin * g->col_unit, j1, g->a, g->a_rs, g->a_cs,
                           g->packed_b, g->c, g->ldc, g->alpha, g->bias, g->bias_rs, g->bias_cs, g->beta, g->epilogue);
        return;
    }
    const size_t mr = g->config->mr, nr = g->config->nr, across = g->panel_major ? g->row_tiles : g->panels;
    while (begin < end) {
        const size_t line = begin / across, first = begin % across, last = MLCC_MIN(across, end - line * across);
        const size_t lines = first == 0 && last == across ? (end - begin) / across : 1u;
        const size_t l0 = line * (g->panel_major ? nr : mr), l1 = (line + lines) * (g->panel_major ? nr : mr);
        const size_t t0 = first * (g->panel_major ? mr : nr), t1 = last * (g->panel_major ? mr : nr);
        const size_t i0 = g->panel_major ? t0 : l0, i1 = MLCC_MIN(g->panel_major ? t1 : l1, g->m);
        const size_t j0 = g->panel_major ? l0 : t0, j1 = MLCC_MIN(g->panel_major ? l1 : t1, g->n);
        mlcc_f32_gemm_part(g->config, g->m, g->n, g->k, i0, i1, j0, j1, g->a, g->a_rs, g->a_cs, g->packed_b, g->c,
                           g->ldc, g->alpha, g->bias, g->bias_rs, g->bias_cs, g->beta, g->epilogue);
        begin = (line + lines - 1u) * across + last;
    }
}

/* Whether a product's tiles are numbered down each panel of B: a thread's tasks then read part of B and all
 * of A, and write part of every row of C (which the next step, cut by rows, reads half from the other
 * core); along rows, all of B and its own rows of A and C. Down panels where half of B outweighs half of A
 * and of C, k n > m (k + n): MobileNetV2's 49x160x960 (B 614 KB, A 188 KB), ResNet-50's 7x7 and 14x14 1x1
 * convolutions; along rows its 196x576x96 (C 451 KB, B 221 KB) and every product of a large image. */
static int gemm_panel_major(size_t m, size_t n, size_t k)
{
    return (float)m * ((float)k + (float)n) < (float)k * (float)n;
}

void mlcc_f32_gemm_parallel(const mlcc_parallel *parallel, const struct mlcc_f32_gemm_config *config,
                            size_t m, size_t n, size_t k, MLCC_F32_GEMM_OPERANDS)
{
    const size_t mr = config->mr, nr = config->nr;
    const size_t row_tiles = (m + mr - 1) / mr, panels = (n + nr - 1) / nr;
    struct gemm_job g = {config, m, n, k, a, a_rs, a_cs, packed_b, c, ldc, alpha, bias, bias_rs, bias_cs, beta,
                         epilogue, 0, row_tiles, panels, gemm_panel_major(m, n, k), row_tiles * panels};
    if (m * 2 <= mr) {
        /* row kernels over panels of B; a single row takes them ROW_PANELS at a time and a tail of five as
         * three and two, so its ranges are whole groups, the last with the tail (never a lone panel). The
         * columns past the last whole unit: a unit of their own when they span more than a panel (a single
         * row's 1000 columns: 7 groups of 4 panels and 3 panels and a part, not 6 groups and 7 panels and a
         * part, twice the others' work), else the last unit's */
        g.col_unit = (m == 1 ? MLCC_F32_GEMM_ROW_PANELS : 1u) * nr;
        g.units = n / g.col_unit;
        if (g.units == 0 || n - g.units * g.col_unit > nr) g.units += 1;
    }
    const size_t tasks = mlcc_parallel_tasks(parallel, g.units, (float)m * (float)n * (float)k);
    if (tasks < 2 || k == 0) {
        mlcc_f32_gemm(config, m, n, k, a, a_rs, a_cs, packed_b, c, ldc, alpha, bias, bias_rs, bias_cs, beta, epilogue);
        return;
    }
    mlcc_parallel_ranges(parallel, tasks, g.units, gemm_range, &g);
}

struct gemm_groups_job {
    struct gemm_job product;  /* group 0's, its rows in units of product.row_unit */
    size_t groups, a_group, b_group, c_group, bias_group, residual_group;
};

static void gemm_groups_range(void *job_, size_t begin, size_t end)
{
    const struct gemm_groups_job *job = (const struct gemm_groups_job *)job_;
    for (size_t group = 0; group < job->groups; ++group) {
        struct gemm_job g = job->product;
        struct mlcc_f32_epilogue e;
        g.a += group * job->a_group;
        g.packed_b += group * job->b_group;
        g.c += group * job->c_group;
        if (g.bias != NULL) g.bias += group * job->bias_group;
        if (g.epilogue != NULL && g.epilogue->residual != NULL) {
            e = *g.epilogue;
            e.residual += group * job->residual_group;
            g.epilogue = &e;
        }
        gemm_range(&g, begin, end);
    }
}

void mlcc_f32_gemm_groups_parallel(const mlcc_parallel *parallel, size_t groups, size_t a_group, size_t b_group,
                                   size_t c_group, size_t bias_group, size_t residual_group,
                                   const struct mlcc_f32_gemm_config *config, size_t m, size_t n, size_t k,
                                   MLCC_F32_GEMM_OPERANDS)
{
    /* tiles along rows, each task's in every group: ShuffleNet's 49x136 groups are 35 tiles, not 7 row tiles */
    const size_t mr = config->mr, row_tiles = (m + mr - 1) / mr, panels = (n + config->nr - 1) / config->nr;
    const size_t tasks = mlcc_parallel_tasks(parallel, row_tiles * panels,
                                             (float)groups * (float)m * (float)n * (float)k);
    struct gemm_groups_job job = {{config, m, n, k, a, a_rs, a_cs, packed_b, c, ldc, alpha, bias, bias_rs, bias_cs,
                                   beta, epilogue, 0, row_tiles, panels, 0, row_tiles * panels},
                                  groups, a_group, b_group, c_group, bias_group, residual_group};
    if (tasks < 2 || k == 0 || m * 2 <= mr) {  /* whole products (a short one splits its own columns) */
        for (size_t group = 0; group < groups; ++group) {
            struct mlcc_f32_epilogue e;
            const struct mlcc_f32_epilogue *ep = epilogue;
            if (ep != NULL && ep->residual != NULL) {
                e = *ep;
                e.residual += group * residual_group;
                ep = &e;
            }
            mlcc_f32_gemm_parallel(parallel, config, m, n, k, a + group * a_group, a_rs, a_cs,
                                   packed_b + group * b_group, c + group * c_group, ldc, alpha,
                                   bias == NULL ? NULL : bias + group * bias_group, bias_rs, bias_cs, beta, ep);
        }
        return;
    }
    mlcc_parallel_ranges(parallel, tasks, job.product.units, gemm_groups_range, &job);
}
