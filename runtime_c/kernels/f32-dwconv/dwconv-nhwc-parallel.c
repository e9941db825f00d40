/* mlcc_f32_dwconv_nhwc_parallel: output rows cut into tasks for the caller's parallel-for (mlcc/parallel.h),
 * each range run by mlcc_f32_dwconv_nhwc_rows as the whole image runs it. In a source of its own: a model
 * that never splits links none of it. */
#include "mlcc/kernels/f32-dwconv.h"

struct dwconv_job {
    const struct mlcc_f32_conv_geometry *g;
    size_t channels;
    const float *x, *w, *bias;
    float *y;
    const struct mlcc_f32_epilogue *epilogue;
};

static void dwconv_range(void *job, size_t begin, size_t end)
{
    const struct dwconv_job *j = (const struct dwconv_job *)job;
    MLCC_ISA_NAME(mlcc_f32_dwconv_nhwc_rows)(j->g, j->channels, j->x, j->w, j->bias, j->y, j->epilogue, begin, end);
}

void MLCC_ISA_NAME(mlcc_f32_dwconv_nhwc_parallel)(const mlcc_parallel *parallel,
                                                  const struct mlcc_f32_conv_geometry *g, size_t channels,
                                                  const float *x, const float *w, const float *bias,
                                                  float *MLCC_RESTRICT y, const struct mlcc_f32_epilogue *epilogue)
{
    const size_t rows = g->out[0] * g->out[1];
    const float work = (float)rows * (float)g->out[2] * (float)channels
                       * (float)(g->kernel[0] * g->kernel[1] * g->kernel[2]);
    struct dwconv_job job = {g, channels, x, w, bias, y, epilogue};
    mlcc_parallel_ranges(parallel, mlcc_parallel_tasks(parallel, rows, work), rows, dwconv_range, &job);
}
