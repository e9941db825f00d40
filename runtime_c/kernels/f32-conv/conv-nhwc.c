/* f32-conv in channels-last (N[D]HWC) layout: im2col rows for f32-gemm's A operand (the depthwise kernel is
 * f32-dwconv's). */
#include <string.h>

#include "mlcc/kernels/f32-conv.h"

/* n floats from src to dst, or zeros when src is NULL. Runs of a few channels (a 3-channel stem) cost
 * less as a plain loop than as a library call. */
static void put_run(float *MLCC_RESTRICT dst, const float *src, size_t n)
{
    if (n >= 16) {
        if (src == NULL)
            memset(dst, 0, n * sizeof(float));
        else
            memcpy(dst, src, n * sizeof(float));
    } else if (src == NULL) {
        for (size_t i = 0; i < n; ++i) dst[i] = 0.0f;
    } else {
        for (size_t i = 0; i < n; ++i) dst[i] = src[i];
    }
}

/* Whether index o * stride + offset - pad lies in [0, in); sets *at to it when it does. */
static int inside(size_t o, size_t stride, size_t offset, size_t pad, size_t in, size_t *at)
{
    const size_t t = o * stride + offset;
    if (t < pad || t - pad >= in) return 0;
    *at = t - pad;
    return 1;
}

void mlcc_f32_conv_im2col_nhwc(const struct mlcc_f32_conv_geometry *g, size_t channels, size_t x_pixel_stride,
                               const float *x, size_t p0, size_t np, float *MLCC_RESTRICT a)
{
    const size_t kw_taps = g->kernel[2], row_len = kw_taps * channels;
    const size_t last_w = (kw_taps - 1) * g->dilation[2];
    /* a kernel row's taps read one contiguous run when adjacent pixels hold just this group's channels */
    const int whole_rows = g->dilation[2] == 1 && x_pixel_stride == channels;
    size_t ow = p0 % g->out[2], oh = (p0 / g->out[2]) % g->out[1], od = p0 / g->out[2] / g->out[1];
    for (size_t i = 0; i < np; ++i) {
        float *MLCC_RESTRICT row = a + i * g->kernel[0] * g->kernel[1] * row_len;
        size_t iw0 = 0;
        const int w_inside = inside(ow, g->stride[2], 0, g->pad[2], g->in[2], &iw0)
                             && iw0 + last_w < g->in[2];
        for (size_t kd = 0; kd < g->kernel[0]; ++kd) {
            size_t id = 0;
            const int d_inside = inside(od, g->stride[0], kd * g->dilation[0], g->pad[0], g->in[0], &id);
            for (size_t kh = 0; kh < g->kernel[1]; ++kh, row += row_len) {
                size_t ih = 0;
                if (!d_inside || !inside(oh, g->stride[1], kh * g->dilation[1], g->pad[1], g->in[1], &ih)) {
                    put_run(row, NULL, row_len);
                    continue;
                }
                const float *line = x + (id * g->in[1] + ih) * g->in[2] * x_pixel_stride;
                if (w_inside && whole_rows) {
                    put_run(row, line + iw0 * channels, row_len);
                    continue;
                }
                for (size_t kw = 0; kw < kw_taps; ++kw) {
                    size_t iw = 0;
                    const int w_ok = inside(ow, g->stride[2], kw * g->dilation[2], g->pad[2], g->in[2], &iw);
                    put_run(row + kw * channels, w_ok ? line + iw * x_pixel_stride : NULL, channels);
                }
            }
        }
        if (++ow == g->out[2]) {
            ow = 0;
            if (++oh == g->out[1]) {
                oh = 0;
                ++od;
            }
        }
    }
}
