/* qs8-dwconv's oracle and portable fallback: one output value at a time in plain C (see qs8-dwconv.h). */
#include "mlcc/kernels/qs8-dwconv.h"

void mlcc_qs8_dwconv_nhwc__reference(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                     uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                     const struct mlcc_qs8_requant *rq) {
    const size_t channels = g->channels, taps = g->kernel_h * g->kernel_w;
    const int32_t zero = (int32_t)(int8_t)(x_zero ^ a_flip);
    for (size_t oh = 0; oh < g->out_h; ++oh) {
        for (size_t ow = 0; ow < g->out_w; ++ow) {
            uint8_t *yp = y + (oh * g->out_w + ow) * channels;
            for (size_t c = 0; c < channels; ++c) {
                int32_t acc = rq->bias[c];
                for (size_t t = 0; t < taps; ++t) {
                    const uint8_t *src = mlcc_qs8_dwconv_source(g, x, oh, ow, t / g->kernel_w, t % g->kernel_w);
                    acc += (int32_t)w[t * channels + c] * (src ? (int32_t)(int8_t)(src[c] ^ a_flip) : zero);
                }
                yp[c] = mlcc_qs8_requantize(acc, rq->multiplier[c], rq->shift[c], rq);
            }
        }
    }
}
