/* f32-conv: im2col into packed GEMM panels, its adjoint col2im, and the direct depthwise kernel. */
#include "mlcc/kernels/f32-conv.h"

/* The output indices o in [0, out) whose tap lands inside the input: 0 <= o*stride + offset - pad < in,
 * with offset = tap * dilation. Returned as the half-open range [*lo, *hi), possibly empty. */
static void valid_range(size_t out, size_t in, size_t stride, size_t offset, size_t pad, size_t *lo, size_t *hi)
{
    size_t first = 0, end = 0;
    if (offset < pad) first = (pad - offset + stride - 1) / stride;
    if (in + pad > offset) end = (in + pad - offset + stride - 1) / stride;
    *hi = MLCC_MIN(end, out);
    *lo = MLCC_MIN(first, *hi);
}

/* The input index of an output index known to be valid along an axis. */
static size_t source_index(size_t o, size_t stride, size_t offset, size_t pad)
{
    return o * stride + offset - pad;
}

/* A panel's columns cut into runs along the innermost output axis: run r covers columns
 * start[r] .. start[r]+len[r], output row (d[r], h[r]) and output w from w0[r]. */
struct runs {
    size_t count;
    size_t start[MLCC_F32_CONV_MAX_NR], len[MLCC_F32_CONV_MAX_NR];
    size_t d[MLCC_F32_CONV_MAX_NR], h[MLCC_F32_CONV_MAX_NR], w0[MLCC_F32_CONV_MAX_NR];
};

static void split_runs(const size_t out[3], size_t p, size_t np, struct runs *r)
{
    size_t j = 0;
    r->count = 0;
    while (j < np) {
        const size_t q = p + j, ow = q % out[2], row = q / out[2];
        const size_t len = MLCC_MIN(out[2] - ow, np - j);
        r->start[r->count] = j;
        r->len[r->count] = len;
        r->w0[r->count] = ow;
        r->h[r->count] = row % out[1];
        r->d[r->count] = row / out[1];
        r->count++;
        j += len;
    }
}

/* For tap (kd, kh) and output row (od, oh): 1 and the input row's offset in its plane, or 0 if the tap
 * falls in the padding. */
static int input_row(const struct mlcc_f32_conv_geometry *g, size_t od, size_t oh, size_t kd, size_t kh,
                     size_t *offset)
{
    const size_t td = od * g->stride[0] + kd * g->dilation[0], th = oh * g->stride[1] + kh * g->dilation[1];
    if (td < g->pad[0] || td - g->pad[0] >= g->in[0] || th < g->pad[1] || th - g->pad[1] >= g->in[1]) return 0;
    *offset = ((td - g->pad[0]) * g->in[1] + (th - g->pad[1])) * g->in[2];
    return 1;
}

void mlcc_f32_conv_im2col_packed(const struct mlcc_f32_conv_geometry *g, size_t channels,
                                 const float *x, size_t p0, size_t np, size_t nr,
                                 float *MLCC_RESTRICT packed)
{
    const size_t in_plane = g->in[0] * g->in[1] * g->in[2];
    const size_t k = channels * g->kernel[0] * g->kernel[1] * g->kernel[2];
    struct runs runs;
    for (size_t j0 = 0; j0 < np; j0 += nr) {
        const size_t nb = MLCC_MIN(nr, np - j0);
        float *MLCC_RESTRICT panel = packed + (j0 / nr) * k * nr;
        split_runs(g->out, p0 + j0, nb, &runs);
        size_t row = 0;
        for (size_t c = 0; c < channels; ++c) {
            for (size_t kd = 0; kd < g->kernel[0]; ++kd) {
                for (size_t kh = 0; kh < g->kernel[1]; ++kh) {
                    for (size_t kw = 0; kw < g->kernel[2]; ++kw, ++row) {
                        float *MLCC_RESTRICT dst = panel + row * nr;
                        const size_t offset = kw * g->dilation[2];
                        for (size_t r = 0; r < runs.count; ++r) {
                            float *MLCC_RESTRICT d = dst + runs.start[r];
                            size_t src = 0, lo, hi;
                            if (input_row(g, runs.d[r], runs.h[r], kd, kh, &src)) {
                                valid_range(runs.w0[r] + runs.len[r], g->in[2], g->stride[2], offset, g->pad[2], &lo, &hi);
                                lo = MLCC_MAX(lo, runs.w0[r]);
                                hi = MLCC_MAX(hi, lo);
                            } else {
                                lo = hi = runs.w0[r];
                            }
                            const size_t a = lo - runs.w0[r], b = hi - runs.w0[r];
                            for (size_t j = 0; j < a; ++j) d[j] = 0.0f;
                            if (b > a) {
                                const float *s = x + c * in_plane + src + source_index(lo, g->stride[2], offset, g->pad[2]);
                                if (g->stride[2] == 1) {
                                    for (size_t j = a; j < b; ++j) d[j] = s[j - a];
                                } else {
                                    for (size_t j = a; j < b; ++j) d[j] = s[(j - a) * g->stride[2]];
                                }
                            }
                            for (size_t j = b; j < runs.len[r]; ++j) d[j] = 0.0f;
                        }
                        for (size_t j = nb; j < nr; ++j) dst[j] = 0.0f;
                    }
                }
            }
        }
    }
}

void mlcc_f32_conv_col2im_add(const struct mlcc_f32_conv_geometry *g, size_t channels,
                              const float *col, size_t ldcol, size_t p0, size_t np,
                              float *MLCC_RESTRICT y)
{
    const size_t in_plane = g->in[0] * g->in[1] * g->in[2];
    struct runs runs;
    for (size_t j0 = 0; j0 < np; j0 += MLCC_F32_CONV_MAX_NR) {
        const size_t nb = MLCC_MIN(MLCC_F32_CONV_MAX_NR, np - j0);
        split_runs(g->out, p0 + j0, nb, &runs);
        size_t row = 0;
        for (size_t c = 0; c < channels; ++c) {
            for (size_t kd = 0; kd < g->kernel[0]; ++kd) {
                for (size_t kh = 0; kh < g->kernel[1]; ++kh) {
                    for (size_t kw = 0; kw < g->kernel[2]; ++kw, ++row) {
                        const float *src_row = col + row * ldcol + j0;
                        const size_t offset = kw * g->dilation[2];
                        for (size_t r = 0; r < runs.count; ++r) {
                            size_t dst, lo, hi;
                            if (!input_row(g, runs.d[r], runs.h[r], kd, kh, &dst)) continue;
                            valid_range(runs.w0[r] + runs.len[r], g->in[2], g->stride[2], offset, g->pad[2], &lo, &hi);
                            float *MLCC_RESTRICT yrow = y + c * in_plane + dst;
                            const float *s = src_row + runs.start[r];
                            for (size_t o = MLCC_MAX(lo, runs.w0[r]); o < hi; ++o)
                                yrow[source_index(o, g->stride[2], offset, g->pad[2])] += s[o - runs.w0[r]];
                        }
                    }
                }
            }
        }
    }
}

void mlcc_f32_conv_depthwise__reference(const struct mlcc_f32_conv_geometry *g, size_t channels, size_t multiplier,
                                        const float *x, const float *w, const float *bias,
                                        float *MLCC_RESTRICT y, const struct mlcc_f32_epilogue *epilogue)
{
    const size_t in_plane = g->in[0] * g->in[1] * g->in[2];
    const size_t out_w = g->out[2], out_plane = g->out[0] * g->out[1] * out_w;
    const size_t taps = g->kernel[0] * g->kernel[1] * g->kernel[2];
    for (size_t o = 0; o < channels * multiplier; ++o) {
        const float *plane = x + (o / multiplier) * in_plane;
        const float *filter = w + o * taps;
        float *MLCC_RESTRICT yo = y + o * out_plane;
        const float b = bias == NULL ? 0.0f : bias[o];
        for (size_t i = 0; i < out_plane; ++i) yo[i] = b;
        for (size_t od = 0; od < g->out[0]; ++od) {
            for (size_t oh = 0; oh < g->out[1]; ++oh) {
                float *MLCC_RESTRICT yrow = yo + (od * g->out[1] + oh) * out_w;
                for (size_t kd = 0; kd < g->kernel[0]; ++kd) {
                    for (size_t kh = 0; kh < g->kernel[1]; ++kh) {
                        size_t row;
                        if (!input_row(g, od, oh, kd, kh, &row)) continue;
                        const float *xrow = plane + row;
                        for (size_t kw = 0; kw < g->kernel[2]; ++kw) {
                            const float wv = filter[(kd * g->kernel[1] + kh) * g->kernel[2] + kw];
                            const size_t offset = kw * g->dilation[2];
                            size_t lo, hi;
                            valid_range(out_w, g->in[2], g->stride[2], offset, g->pad[2], &lo, &hi);
                            if (lo == hi) continue;
                            const float *s = xrow + source_index(lo, g->stride[2], offset, g->pad[2]);
                            if (g->stride[2] == 1) {
                                for (size_t i = 0; i < hi - lo; ++i) yrow[lo + i] += wv * s[i];
                            } else {
                                for (size_t i = 0; i < hi - lo; ++i) yrow[lo + i] += wv * s[i * g->stride[2]];
                            }
                        }
                    }
                }
            }
        }
        mlcc_f32_epilogue_apply(epilogue, 1, out_plane, yo, out_plane, o, 0);
    }
}
