/* f32-winograd's steps cut into tasks for the caller's parallel-for (mlcc/parallel.h): the transforms by
 * ranges of tiles (each writes its own tiles' rows of v, or its own output pixels), the products by ranges
 * of the 36 points (each its own matrices of m). Every task runs the single-threaded kernels on its part,
 * so the results are those of one thread. */
#include "mlcc/kernels/f32-gemm.h"
#include "mlcc/kernels/f32-winograd.h"

struct input_job {
    mlcc_f32_winograd_input_fn kernel;
    const struct mlcc_f32_conv_geometry *g;
    size_t piece, channels;
    const float *x;
    size_t x_pitch, t0;
    float *v;
    size_t point_stride, tile_stride;
};

static void input_range(void *job, size_t begin, size_t end)
{
    const struct input_job *j = (const struct input_job *)job;
    j->kernel(j->g, j->piece, j->channels, j->x, j->x_pitch, j->t0 + begin, end - begin, j->v + begin * j->tile_stride,
              j->point_stride, j->tile_stride);
}

void mlcc_f32_winograd_input_parallel(const mlcc_parallel *parallel, mlcc_f32_winograd_input_fn kernel,
                                      const struct mlcc_f32_conv_geometry *g, size_t piece, size_t channels,
                                      const float *x, size_t x_pitch, size_t t0, size_t nt, float *v,
                                      size_t point_stride, size_t tile_stride)
{
    struct input_job job = {kernel, g, piece, channels, x, x_pitch, t0, v, point_stride, tile_stride};
    const float work = (float)nt * (float)channels * (float)(MLCC_F32_WINOGRAD_POINTS * 2u);
    mlcc_parallel_ranges(parallel, mlcc_parallel_tasks(parallel, nt, work), nt, input_range, &job);
}

struct points_job {
    const struct mlcc_f32_gemm_config *config;
    size_t nt, out_channels, k;
    const float *v;
    size_t v_point;
    const float *u;
    size_t u_point;
    float *m;
    size_t m_point;
};

static void points_range(void *job, size_t begin, size_t end)
{
    const struct points_job *j = (const struct points_job *)job;
    for (size_t point = begin; point < end; ++point)
        mlcc_f32_gemm(j->config, j->nt, j->out_channels, j->k, j->v + point * j->v_point, j->k, 1u,
                      j->u + point * j->u_point, j->m + point * j->m_point, j->out_channels, 1.0f, NULL, 0u, 0u, 1.0f,
                      NULL);
}

void mlcc_f32_winograd_points(const mlcc_parallel *parallel, const struct mlcc_f32_gemm_config *config, size_t nt,
                              size_t out_channels, size_t k, const float *v, size_t v_point, const float *u,
                              size_t u_point, float *m, size_t m_point)
{
    struct points_job job = {config, nt, out_channels, k, v, v_point, u, u_point, m, m_point};
    const float work = (float)MLCC_F32_WINOGRAD_POINTS * (float)nt * (float)out_channels * (float)k;
    mlcc_parallel_ranges(parallel, mlcc_parallel_tasks(parallel, MLCC_F32_WINOGRAD_POINTS, work),
                         MLCC_F32_WINOGRAD_POINTS, points_range, &job);
}

struct output_job {
    mlcc_f32_winograd_output_fn kernel;
    const struct mlcc_f32_conv_geometry *g;
    size_t channels;
    const float *m;
    size_t point_stride, t0;
    const float *bias;
    float *y;
    size_t y_pitch;
    const struct mlcc_f32_epilogue *epilogue;
};

static void output_range(void *job, size_t begin, size_t end)
{
    const struct output_job *j = (const struct output_job *)job;
    j->kernel(j->g, j->channels, j->m + begin * j->channels, j->point_stride, j->t0 + begin, end - begin, j->bias,
              j->y, j->y_pitch, j->epilogue);
}

void mlcc_f32_winograd_output_parallel(const mlcc_parallel *parallel, mlcc_f32_winograd_output_fn kernel,
                                       const struct mlcc_f32_conv_geometry *g, size_t channels, const float *m,
                                       size_t point_stride, size_t t0, size_t nt, const float *bias, float *y,
                                       size_t y_pitch, const struct mlcc_f32_epilogue *epilogue)
{
    struct output_job job = {kernel, g, channels, m, point_stride, t0, bias, y, y_pitch, epilogue};
    const float work = (float)nt * (float)channels * (float)(MLCC_F32_WINOGRAD_POINTS * 2u);
    mlcc_parallel_ranges(parallel, mlcc_parallel_tasks(parallel, nt, work), nt, output_range, &job);
}
