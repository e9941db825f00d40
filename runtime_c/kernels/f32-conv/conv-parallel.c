/* f32-conv's channels-last steps cut into tasks for the caller's parallel-for (mlcc/parallel.h): im2col by
 * ranges of rows, the direct kernel by ranges of output rows. In a source of its own: a model that never
 * splits links none of it. */
#include "mlcc/kernels/f32-conv.h"

struct im2col_job {
    const struct mlcc_f32_conv_geometry *g;
    size_t channels, x_pixel_stride;
    const float *x;
    size_t p0;
    float *a;
};

static void im2col_range(void *job, size_t begin, size_t end)
{
    const struct im2col_job *j = (const struct im2col_job *)job;
    const size_t row = j->g->kernel[0] * j->g->kernel[1] * j->g->kernel[2] * j->channels;
    mlcc_f32_conv_im2col_nhwc(j->g, j->channels, j->x_pixel_stride, j->x, j->p0 + begin, end - begin,
                              j->a + begin * row);
}

void mlcc_f32_conv_im2col_nhwc_parallel(const mlcc_parallel *parallel, const struct mlcc_f32_conv_geometry *g,
                                        size_t channels, size_t x_pixel_stride, const float *x, size_t p0,
                                        size_t np, float *MLCC_RESTRICT a)
{
    const size_t row = g->kernel[0] * g->kernel[1] * g->kernel[2] * channels;
    struct im2col_job job = {g, channels, x_pixel_stride, x, p0, a};
    mlcc_parallel_ranges(parallel, mlcc_parallel_tasks(parallel, np, (float)np * (float)row), np, im2col_range,
                         &job);
}

/* A direct convolution's output rows [o0, o1) of a 2-D geometry (or pixels of a 1-D one: `axis` 1 or 2) as
 * a convolution of its own: the input rows they read (from the first one inside), the padding before them
 * that remains, the output, and the residual advanced to them. Each pixel then sums the same taps in the
 * same order as in the whole. */
struct direct_job {
    mlcc_f32_conv_direct_nhwc_fn kernel;
    const struct mlcc_f32_conv_geometry *g;
    size_t axis;
    size_t channels, x_pixel_stride;
    const int32_t *x_channels;
    size_t out_channels, nr;
    const float *x, *w, *bias;
    float *y;
    size_t y_pitch;
    const struct mlcc_f32_epilogue *epilogue;
    size_t groups, w_group;
    size_t unit, units;  /* outputs along the axis per unit of the ranges, and the units: (unit, group) pairs */
};

/* Pixels per unit when a 1-D geometry's pixels are cut: the kernel computes a row in blocks of up to 8
 * pixels (BLOCK_PIXELS), its last block overlapping the one before, so a range of 25 pixels computes 32 and
 * a cut into blocks' multiples computes each pixel once. */
#define DIRECT_PIXEL_UNIT 8u

static void direct_group_range(const struct direct_job *j, size_t group, size_t o0, size_t o1);

/* The units are (rows or pixels, group) pairs, the groups innermost: a task takes its output rows in every
 * group, one after another, and a thread writes whole pixels but at its range's two ends (a group's
 * channels share cache lines with the next group's). One hand-off per step; and an image of 7 rows or 49
 * pixels in 4 groups is 28 units, 14 a thread, not 7 tasks, 4 against 3. */
static void direct_range(void *job, size_t begin, size_t end)
{
    const struct direct_job *j = (const struct direct_job *)job;
    while (begin < end) {
        const size_t line = begin / j->groups, first = begin % j->groups;
        const size_t last = MLCC_MIN(j->groups, end - line * j->groups);
        const size_t lines = first == 0 && last == j->groups ? (end - begin) / j->groups : 1u;
        const size_t o0 = line * j->unit, o1 = MLCC_MIN((line + lines) * j->unit, j->g->out[j->axis]);
        for (size_t group = first; group < last; ++group) direct_group_range(j, group, o0, o1);
        begin = (line + lines - 1u) * j->groups + last;
    }
}

static void direct_group_range(const struct direct_job *j, size_t group, size_t o0, size_t o1)
{
    const size_t axis = j->axis;
    struct mlcc_f32_conv_geometry part = *j->g;
    const size_t top = o0 * part.stride[axis];  /* the first output's first tap, padding included */
    const size_t skipped = top > part.pad[axis] ? MLCC_MIN(top - part.pad[axis], part.in[axis]) : 0u;
    part.pad[axis] = top > part.pad[axis] ? 0u : part.pad[axis] - top;
    part.in[axis] -= skipped;
    part.out[axis] = o1 - o0;
    const size_t line = axis == 1 ? part.out[2] : 1u, in_line = axis == 1 ? part.in[2] : 1u;
    const size_t first_pixel = o0 * line;
    struct mlcc_f32_epilogue e;
    const struct mlcc_f32_epilogue *ep = j->epilogue;
    if (ep != NULL && ep->residual != NULL) {
        e = *ep;
        e.residual += first_pixel * ep->residual_rs + group * j->out_channels;
        ep = &e;
    }
    j->kernel(&part, j->channels, j->x_pixel_stride,
              j->x_channels == NULL ? NULL : j->x_channels + group * j->channels, j->out_channels, j->nr,
              j->x + skipped * in_line * j->x_pixel_stride + group * j->channels, j->w + group * j->w_group,
              j->bias == NULL ? NULL : j->bias + group * j->out_channels,
              j->y + first_pixel * j->y_pitch + group * j->out_channels, j->y_pitch, ep);
}

void mlcc_f32_conv_direct_nhwc_parallel(const mlcc_parallel *parallel, mlcc_f32_conv_direct_nhwc_fn kernel,
                                        size_t groups, size_t w_group, MLCC_F32_CONV_DIRECT_NHWC_PARAMS)
{
    const size_t axis = g->out[1] > 1 ? 1u : 2u, unit = axis == 2u ? DIRECT_PIXEL_UNIT : 1u;
    const size_t units = (g->out[axis] + unit - 1u) / unit * groups;
    const float work = (float)(g->out[0] * g->out[1] * g->out[2]) * (float)(groups * out_channels)
                        * (float)(g->kernel[0] * g->kernel[1] * g->kernel[2] * channels);
    const size_t tasks = g->out[0] == 1 ? mlcc_parallel_tasks(parallel, units, work) : 1u;
    struct direct_job job = {kernel, g, axis, channels, x_pixel_stride, x_channels, out_channels, nr, x, w, bias,
                             y, y_pitch, epilogue, groups, w_group, unit, units};
    if (tasks < 2) {
        for (size_t group = 0; group < groups; ++group) direct_group_range(&job, group, 0u, g->out[axis]);
        return;
    }
    mlcc_parallel_ranges(parallel, tasks, units, direct_range, &job);
}
