/* The channels-last windowed pools with output rows cut into tasks for the caller's parallel-for
 * (mlcc/parallel.h), each range run by mlcc_f32_pool_nhwc_rows as the whole call runs it. In a source of its
 * own: a model that never splits links none of it. */
#include "mlcc/kernels/f32-pool.h"

struct pool_job {
    bool is_max, count_include_pad;
    size_t channels;
    const mlcc_pool_geometry *g;
    const float *x;
    float *y;
};

static void pool_range(void *job, size_t begin, size_t end)
{
    const struct pool_job *j = (const struct pool_job *)job;
    MLCC_ISA_NAME(mlcc_f32_pool_nhwc_rows)(j->is_max, j->channels, j->g, j->count_include_pad, j->x, j->y, begin, end);
}

static void pool_parallel(const mlcc_parallel *parallel, bool is_max, size_t images, size_t channels,
                          const mlcc_pool_geometry *g, bool count_include_pad, const float *x, float *y)
{
    const size_t rows = images * (size_t)(g->out[0] * g->out[1]);
    /* a tap costs about what a multiply-add does */
    const float work = (float)rows * (float)g->out[2] * (float)channels * (float)(g->kernel[0] * g->kernel[1] * g->kernel[2]);
    struct pool_job job = {is_max, count_include_pad, channels, g, x, y};
    mlcc_parallel_ranges(parallel, mlcc_parallel_tasks(parallel, rows, work), rows, pool_range, &job);
}

void MLCC_ISA_NAME(mlcc_f32_pool_max_nhwc_parallel)(const mlcc_parallel *parallel, size_t images, size_t channels,
                                                    const mlcc_pool_geometry *geometry, const float *MLCC_RESTRICT x,
                                                    float *MLCC_RESTRICT y)
{
    pool_parallel(parallel, true, images, channels, geometry, false, x, y);
}

void MLCC_ISA_NAME(mlcc_f32_pool_avg_nhwc_parallel)(const mlcc_parallel *parallel, size_t images, size_t channels,
                                                    const mlcc_pool_geometry *geometry, bool count_include_pad,
                                                    const float *MLCC_RESTRICT x, float *MLCC_RESTRICT y)
{
    pool_parallel(parallel, false, images, channels, geometry, count_include_pad, x, y);
}
