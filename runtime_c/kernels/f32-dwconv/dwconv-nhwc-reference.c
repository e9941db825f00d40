/* f32-dwconv's oracle: the depthwise convolution one channel at a time in plain C, the taps in (kd, kh, kw)
 * order, as the tests compare mlcc_f32_dwconv_nhwc__<isa> against it. */
#include "mlcc/kernels/f32-dwconv.h"

/* 1 and the index of the input pixel output pixel (od, oh, ow) reads at tap (kd, kh, kw), or 0 when the
 * tap falls in the padding. */
static int nhwc_source(const struct mlcc_f32_conv_geometry *g, size_t od, size_t oh, size_t ow,
                       size_t kd, size_t kh, size_t kw, size_t *pixel)
{
    const size_t td = od * g->stride[0] + kd * g->dilation[0];
    const size_t th = oh * g->stride[1] + kh * g->dilation[1];
    const size_t tw = ow * g->stride[2] + kw * g->dilation[2];
    if (td < g->pad[0] || td - g->pad[0] >= g->in[0] || th < g->pad[1] || th - g->pad[1] >= g->in[1]
        || tw < g->pad[2] || tw - g->pad[2] >= g->in[2])
        return 0;
    *pixel = ((td - g->pad[0]) * g->in[1] + (th - g->pad[1])) * g->in[2] + (tw - g->pad[2]);
    return 1;
}

void mlcc_f32_dwconv_nhwc__reference(const struct mlcc_f32_conv_geometry *g, size_t channels,
                                     const float *x, const float *w, const float *bias,
                                     float *MLCC_RESTRICT y, const struct mlcc_f32_epilogue *epilogue)
{
    const size_t pixels = g->out[0] * g->out[1] * g->out[2];
    for (size_t p = 0; p < pixels; ++p) {
        const size_t ow = p % g->out[2], oh = (p / g->out[2]) % g->out[1], od = p / g->out[2] / g->out[1];
        float *MLCC_RESTRICT yp = y + p * channels;
        if (bias == NULL) {
            for (size_t c = 0; c < channels; ++c) yp[c] = 0.0f;
        } else {
            for (size_t c = 0; c < channels; ++c) yp[c] = bias[c];
        }
        const float *wt = w;
        for (size_t kd = 0; kd < g->kernel[0]; ++kd) {
            for (size_t kh = 0; kh < g->kernel[1]; ++kh) {
                for (size_t kw = 0; kw < g->kernel[2]; ++kw, wt += channels) {
                    size_t pixel;
                    if (!nhwc_source(g, od, oh, ow, kd, kh, kw, &pixel)) continue;
                    const float *MLCC_RESTRICT xp = x + pixel * channels;
                    for (size_t c = 0; c < channels; ++c) yp[c] += xp[c] * wt[c];
                }
            }
        }
        mlcc_f32_epilogue_apply(epilogue, 1, channels, yp, channels, p, 0);
    }
}
