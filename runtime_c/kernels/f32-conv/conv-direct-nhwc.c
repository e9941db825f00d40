/* f32-conv: direct convolution of channels-last images with few input channels (a network's stem, or the
 * groups of a grouped convolution), on the SIMD shim (mlcc/simd.h): the output channels are the vector
 * lanes. im2col would copy runs of a channel or three per tap and hand f32-gemm a k of a few dozen; here a
 * block of output pixels along w reads its taps in place: per tap and input channel, one vector of weights
 * per panel vector and one broadcast per pixel. Border
 * pixels (part of the window in the padding along w) run one at a time over their taps inside the input;
 * the interior ends with a block overlapping the one before it (those pixels are written twice). Targets
 * without a shim run the __reference form. */
#include "mlcc/kernels/f32-conv.h"
#include "mlcc/simd.h"
#if MLCC_HAVE_F32V
#include "mlcc/activation-simd.h"
#endif

#if defined(__GNUC__)
#define FORCE_INLINE inline __attribute__((always_inline))
#define NO_INLINE __attribute__((noinline))
#else
#define FORCE_INLINE inline
#define NO_INLINE
#endif

/* The taps k of output o's window along `dim` whose input index lies inside the input, as [*lo, *hi). */
static void taps_inside(const struct mlcc_f32_conv_geometry *g, int dim, size_t o, size_t *lo, size_t *hi)
{
    const size_t start = o * g->stride[dim], step = g->dilation[dim], pad = g->pad[dim], in = g->in[dim];
    size_t k = 0;
    while (k < g->kernel[dim] && start + k * step < pad) ++k;
    *lo = k;
    while (k < g->kernel[dim] && start + k * step < pad + in) ++k;
    *hi = k;
}

void mlcc_f32_conv_direct_nhwc__reference(const struct mlcc_f32_conv_geometry *g, size_t channels,
                                          size_t x_pixel_stride, const int32_t *x_channels, size_t out_channels,
                                          size_t nr, const float *x, const float *w, const float *bias,
                                          float *MLCC_RESTRICT y, size_t y_pitch,
                                          const struct mlcc_f32_epilogue *epilogue)
{
    const size_t k = g->kernel[0] * g->kernel[1] * g->kernel[2] * channels;
    size_t p = 0;
    for (size_t od = 0; od < g->out[0]; ++od) {
        size_t d_lo, d_hi;
        taps_inside(g, 0, od, &d_lo, &d_hi);
        for (size_t oh = 0; oh < g->out[1]; ++oh) {
            size_t h_lo, h_hi;
            taps_inside(g, 1, oh, &h_lo, &h_hi);
            for (size_t ow = 0; ow < g->out[2]; ++ow, ++p) {
                size_t w_lo, w_hi;
                taps_inside(g, 2, ow, &w_lo, &w_hi);
                float *MLCC_RESTRICT yp = y + p * y_pitch;
                /* a panel's nr sums at a time: each tap's row of weights read once, in order */
                for (size_t o0 = 0; o0 < out_channels; o0 += nr) {
                    const size_t live = MLCC_MIN(nr, out_channels - o0);
                    const float *wp = w + o0 * k;
                    for (size_t o = 0; o < live; ++o) yp[o0 + o] = bias == NULL ? 0.0f : bias[o0 + o];
                    for (size_t kd = d_lo; kd < d_hi; ++kd) {
                        const size_t id = od * g->stride[0] + kd * g->dilation[0] - g->pad[0];
                        for (size_t kh = h_lo; kh < h_hi; ++kh) {
                            const size_t ih = oh * g->stride[1] + kh * g->dilation[1] - g->pad[1];
                            for (size_t kw = w_lo; kw < w_hi; ++kw) {
                                const size_t iw = ow * g->stride[2] + kw * g->dilation[2] - g->pad[2];
                                const float *xp = x + ((id * g->in[1] + ih) * g->in[2] + iw) * x_pixel_stride;
                                const float *wt = wp + ((kd * g->kernel[1] + kh) * g->kernel[2] + kw) * channels * nr;
                                for (size_t c = 0; c < channels; ++c) {
                                    const float xc = x_channels == NULL ? xp[c] : xp[x_channels[c]];
                                    for (size_t o = 0; o < live; ++o) yp[o0 + o] += xc * wt[c * nr + o];
                                }
                            }
                        }
                    }
                }
                mlcc_f32_epilogue_apply(epilogue, 1, out_channels, yp, y_pitch, p, 0);
            }
        }
    }
}

/* every entry point's arguments, passed on */
#define DIRECT_ARGS g, channels, x_pixel_stride, x_channels, out_channels, nr, x, w, bias, y, y_pitch, epilogue

#if MLCC_HAVE_F32V
#define LANES MLCC_F32V_LANES
#define MAX_VECTORS (MLCC_F32_CONV_MAX_NR / LANES)
#define MAX_PIXELS 8u
/* Pixels per block for panels of nv vectors: its nv * pb accumulators, the panel row's nv vectors of weights,
 * a broadcast and one register to spare fit the shim's register file. On AVX2's 16 a block of 3 vectors
 * by 4 pixels needed all 16, and clang shuffled and spilled accumulators at every step of k. */
#define BLOCK_PIXELS(nv) MLCC_MIN(MAX_PIXELS, (MLCC_F32V_REGISTERS - (nv) - 2u) / (nv))
#define ACCUMULATORS (MAX_PIXELS * MAX_VECTORS)

/* What every block of one output row shares. */
struct row {
    const struct mlcc_f32_conv_geometry *g;
    size_t channels, x_pixel_stride, out_channels, nr, k;
    const int32_t *x_channels;      /* where each channel lies from x, or NULL: consecutive */
    const float *x;                 /* the image (this group's first channel) */
    size_t d_lo, d_hi, h_lo, h_hi;  /* taps inside the input along d and h */
    size_t id0, ih0;                /* input index + pad of tap 0 along d and h */
    float *y;                       /* the row's first output pixel */
    size_t y_pitch, p0;             /* p0: that pixel's index, for the residual */
};

/* The output pixels along w whose taps all lie inside the input (ow * stride >= pad and
 * ow * stride - pad + span <= in): [*ow_a, *ow_b). */
static void interior_columns(const struct mlcc_f32_conv_geometry *g, size_t *ow_a, size_t *ow_b)
{
    const size_t span = (g->kernel[2] - 1) * g->dilation[2] + 1;
    *ow_a = MLCC_MIN(g->out[2], (g->pad[2] + g->stride[2] - 1) / g->stride[2]);
    *ow_b = g->in[2] + g->pad[2] < span ? *ow_a
          : MLCC_MAX(*ow_a, MLCC_MIN(g->out[2], (g->in[2] + g->pad[2] - span) / g->stride[2] + 1));
}

/* r set to the output row (od, oh) of the image y: its taps inside the input along d and h, its pixels. */
static FORCE_INLINE void start_row(struct row *r, size_t od, size_t oh, float *y)
{
    const struct mlcc_f32_conv_geometry *g = r->g;
    taps_inside(g, 0, od, &r->d_lo, &r->d_hi);
    r->id0 = od * g->stride[0] - g->pad[0];
    taps_inside(g, 1, oh, &r->h_lo, &r->h_hi);
    r->ih0 = oh * g->stride[1] - g->pad[1];
    r->p0 = (od * g->out[1] + oh) * g->out[2];
    r->y = y + r->p0 * r->y_pitch;
}

/* v with the residual's n lanes cs floats apart (a channel shuffle's; 0: one value per pixel) added to its first n. */
static NO_INLINE mlcc_f32v add_scattered(mlcc_f32v v, const float *r, size_t cs, size_t n)
{
    float part[LANES] = {0.0f};
    for (size_t i = 0; i < n; ++i) part[i] = r[i * cs];
    return mlcc_f32v_add(v, mlcc_f32v_load(part));
}

/* y[0 .. n) = act's activation of v's first n lanes, one at a time (no vector form). */
static NO_INLINE void store_activated(mlcc_f32v v, float *y, size_t n, const struct mlcc_f32_epilogue *act)
{
    float part[LANES];
    mlcc_f32v_store(part, v);
    for (size_t i = 0; i < n; ++i) y[i] = mlcc_f32_activate(act, part[i]);
}

/* y[0 .. n) = v's first n lanes, through the scalar activation act when not NULL. */
static FORCE_INLINE void store_part(mlcc_f32v v, float *y, size_t n, const struct mlcc_f32_epilogue *act)
{
    if (act != NULL) store_activated(v, y, n, act);
    else if (n == LANES) mlcc_f32v_store(y, v);
    else mlcc_f32v_store_partial(y, v, n);
}

/* acc[pixel i][vector j] += x[i * pixel_step + at[t]] * w[t * nr + j * LANES] for t < n: one loop over the
 * table, one offset read per channel, whatever the permutation (a loop per run of consecutive channels took
 * 1.4x the time on runs of one channel, and capped the runs a table could hold). */
static FORCE_INLINE void accumulate_indexed(size_t pb, size_t nv, mlcc_f32v *acc, const float *x, size_t pixel_step,
                                            const int32_t *at, const float *w, size_t nr, size_t n)
{
    for (size_t t = 0; t < n; ++t) {
        mlcc_f32v wv[MAX_VECTORS];
        const float *xt = x + at[t];
        for (size_t j = 0; j < nv; ++j) wv[j] = mlcc_f32v_load(w + t * nr + j * LANES);
        for (size_t i = 0; i < pb; ++i) {
            const mlcc_f32v a = mlcc_f32v_splat(xt[i * pixel_step]);
            for (size_t j = 0; j < nv; ++j) acc[i * nv + j] = mlcc_f32v_fma(acc[i * nv + j], a, wv[j]);
        }
    }
}

/* The block's residual, activation and stores: vectors 0 .. nv - 1 of each pixel whole, the last one's
 * lanes up to out_channels (the panels and the narrower tail panels `direct` cuts leave no other shape).
 * The accumulators are read only at constant indices (pb and nv constants, every loop unrolled), the rare
 * forms (a scattered residual, an activation without a vector form) on a copy: one loop indexing acc at
 * run time keeps all of it on the stack through the k loop. */
static FORCE_INLINE void finish_block(size_t pb, size_t nv, mlcc_f32v *acc, const struct row *r, size_t ow,
                                      size_t o0, const struct mlcc_f32_epilogue *e)
{
    const size_t last = MLCC_MIN(LANES, r->out_channels - o0 - (nv - 1u) * LANES);  /* lanes of vector nv - 1 */
    if (e != NULL && e->residual != NULL) {
        const float *res = e->residual + (r->p0 + ow) * e->residual_rs + o0 * e->residual_cs;
        if (e->residual_cs == 1) {
            for (size_t i = 0; i < pb; ++i, res += e->residual_rs) {
                for (size_t j = 0; j + 1u < nv; ++j)
                    acc[i * nv + j] = mlcc_f32v_add(acc[i * nv + j], mlcc_f32v_load(res + j * LANES));
                const float *tail = res + (nv - 1u) * LANES;
                acc[i * nv + nv - 1u] = mlcc_f32v_add(acc[i * nv + nv - 1u], last == LANES
                                                      ? mlcc_f32v_load(tail) : mlcc_f32v_load_partial(tail, last));
            }
        } else {
            mlcc_f32v copy[ACCUMULATORS];
            for (size_t t = 0; t < pb * nv; ++t) copy[t] = acc[t];
            for (size_t i = 0; i < pb; ++i)
                for (size_t j = 0; j < nv; ++j)
                    copy[i * nv + j] = add_scattered(copy[i * nv + j], res + i * e->residual_rs + j * LANES * e->residual_cs,
                                                     e->residual_cs, j + 1u < nv ? LANES : last);
            for (size_t t = 0; t < pb * nv; ++t) acc[t] = copy[t];
        }
    }
    if (e != NULL && !mlcc_f32v_activate_held(e, acc, pb * nv)) {
        mlcc_f32v copy[ACCUMULATORS];
        for (size_t t = 0; t < pb * nv; ++t) copy[t] = acc[t];
        for (size_t i = 0; i < pb; ++i)
            for (size_t j = 0; j < nv; ++j)
                store_activated(copy[i * nv + j], r->y + (ow + i) * r->y_pitch + o0 + j * LANES,
                                j + 1u < nv ? LANES : last, e);
        return;
    }
    for (size_t i = 0; i < pb; ++i) {
        float *yp = r->y + (ow + i) * r->y_pitch + o0;
        for (size_t j = 0; j + 1u < nv; ++j) mlcc_f32v_store(yp + j * LANES, acc[i * nv + j]);
        if (last == LANES) mlcc_f32v_store(yp + (nv - 1u) * LANES, acc[i * nv + nv - 1u]);
        else mlcc_f32v_store_partial(yp + (nv - 1u) * LANES, acc[i * nv + nv - 1u], last);
    }
}

/* Output pixels ow .. ow + pb of the row, channels o0 .. o0 + nv * LANES (panel wp, its bias bp or NULL),
 * over the taps kw_lo .. kw_hi along w; pb, nv and `indexed` (the channels read through r->x_channels) are
 * constants once inlined. */
static FORCE_INLINE void block(size_t pb, size_t nv, int indexed, const struct row *r, size_t ow, size_t kw_lo, size_t kw_hi,
                               size_t o0, const float *wp, const float *bp, const struct mlcc_f32_epilogue *e)
{
    const struct mlcc_f32_conv_geometry *g = r->g;
    const size_t c_n = r->channels, nr = r->nr, xs = r->x_pixel_stride;
    const size_t pixel_step = g->stride[2] * xs, tap_step = g->dilation[2] * xs;
    mlcc_f32v acc[ACCUMULATORS];
    for (size_t i = 0; i < pb; ++i)
        for (size_t j = 0; j < nv; ++j) acc[i * nv + j] = bp == NULL ? mlcc_f32v_zero() : mlcc_f32v_load(bp + j * LANES);
    /* the taps along w as runs of contiguous floats: one run of every tap's channels when the pixels hold
     * just this group's channels and the taps are adjacent; each tap's channels through the table when the
     * channels are permuted */
    const int one_run = !indexed && g->dilation[2] == 1 && xs == c_n;
    const size_t runs = one_run ? 1 : kw_hi - kw_lo, run_length = one_run ? (kw_hi - kw_lo) * c_n : c_n;
    /* input index of this block's first tap inside the input along w (pad added: never below it) */
    const size_t iw = ow * g->stride[2] + kw_lo * g->dilation[2] - g->pad[2];
    for (size_t kd = r->d_lo; kd < r->d_hi && kw_lo < kw_hi; ++kd) {
        const size_t id = r->id0 + kd * g->dilation[0];
        for (size_t kh = r->h_lo; kh < r->h_hi; ++kh) {
            const size_t ih = r->ih0 + kh * g->dilation[1];
            const float *xr = r->x + ((id * g->in[1] + ih) * g->in[2] + iw) * xs;
            const float *wr = wp + ((kd * g->kernel[1] + kh) * g->kernel[2] + kw_lo) * c_n * nr;
            for (size_t run = 0; run < runs; ++run, xr += tap_step, wr += run_length * nr) {
                if (indexed) {
                    accumulate_indexed(pb, nv, acc, xr, pixel_step, r->x_channels, wr, nr, c_n);
                    continue;
                }
                for (size_t t = 0; t < run_length; ++t) {
                    mlcc_f32v wv[MAX_VECTORS];
                    for (size_t j = 0; j < nv; ++j) wv[j] = mlcc_f32v_load(wr + t * nr + j * LANES);
                    for (size_t i = 0; i < pb; ++i) {
                        const mlcc_f32v a = mlcc_f32v_splat(xr[i * pixel_step + t]);
                        for (size_t j = 0; j < nv; ++j) acc[i * nv + j] = mlcc_f32v_fma(acc[i * nv + j], a, wv[j]);
                    }
                }
            }
        }
    }
    finish_block(pb, nv, acc, r, ow, o0, e);
}

/* One panel of the row: border pixels singly, the interior in blocks of pb. */
static FORCE_INLINE void panel_row(size_t pb, size_t nv, int indexed, const struct row *r, size_t ow_a, size_t ow_b,
                                   size_t o0, const float *wp, const float *bp, const struct mlcc_f32_epilogue *e)
{
    const struct mlcc_f32_conv_geometry *g = r->g;
    size_t lo, hi;
    for (size_t ow = 0; ow < g->out[2]; ++ow) {
        if (ow == ow_a && ow_b - ow_a >= pb) {  /* the interior: every tap along w inside */
            for (; ow + pb <= ow_b; ow += pb) block(pb, nv, indexed, r, ow, 0, g->kernel[2], o0, wp, bp, e);
            if (ow < ow_b) block(pb, nv, indexed, r, ow_b - pb, 0, g->kernel[2], o0, wp, bp, e);
            ow = ow_b;
            if (ow == g->out[2]) break;
        }
        taps_inside(g, 2, ow, &lo, &hi);
        block(1, nv, indexed, r, ow, lo, hi, o0, wp, bp, e);
    }
}

/* Pixel pairs, for out_channels at most half a vector (a stem's 8 on AVX-512) with the output's pixels
 * out_channels apart and the channels read in order: lanes [0, oc) hold pixel p's channels and [oc, 2 oc)
 * pixel p + 1's, against each weight row repeated twice, so no lane computes a zero (a 512-bit multiply-add
 * costs two 256-bit ones on AMD Zen 4). Each lane sums its terms in the single-pixel blocks' order. */
#define PAIR_MAX_K 64u   /* weight rows (taps x channels) repeated on the stack */
#define PAIR_BLOCK 4u    /* pairs per block */

struct pairs {
    mlcc_f32v w[PAIR_MAX_K];  /* row t of the panel, twice */
    mlcc_f32v bias;           /* the bias, twice, or zero */
    mlcc_f32vm upper;         /* the lanes of pixel p + 1 */
    size_t lanes;             /* 2 oc: a whole vector, or the lanes stored of one */
};

/* Output pixels ow .. ow + 2 pp of the row's interior (every tap along w inside), pp pairs (a constant once
 * inlined); the epilogue's residual (if any) is contiguous and fills the vector (pairs_apply). */
static FORCE_INLINE void block_pairs(size_t pp, const struct row *r, size_t ow, const struct pairs *q,
                                     const struct mlcc_f32_epilogue *e)
{
    const struct mlcc_f32_conv_geometry *g = r->g;
    const size_t c_n = r->channels, xs = r->x_pixel_stride;
    const size_t pixel_step = g->stride[2] * xs, tap_step = g->dilation[2] * xs;
    mlcc_f32v acc[PAIR_BLOCK];
    for (size_t i = 0; i < pp; ++i) acc[i] = q->bias;
    const int one_run = g->dilation[2] == 1 && xs == c_n;
    const size_t runs = one_run ? 1 : g->kernel[2], run_length = one_run ? g->kernel[2] * c_n : c_n;
    const size_t iw = ow * g->stride[2] - g->pad[2];
    for (size_t kd = r->d_lo; kd < r->d_hi; ++kd) {
        const size_t id = r->id0 + kd * g->dilation[0];
        for (size_t kh = r->h_lo; kh < r->h_hi; ++kh) {
            const size_t ih = r->ih0 + kh * g->dilation[1];
            const float *xr = r->x + ((id * g->in[1] + ih) * g->in[2] + iw) * xs;
            const mlcc_f32v *wr = q->w + (kd * g->kernel[1] + kh) * g->kernel[2] * c_n;
            for (size_t run = 0; run < runs; ++run, xr += tap_step, wr += run_length) {
                for (size_t t = 0; t < run_length; ++t) {
                    const mlcc_f32v wv = wr[t];
                    for (size_t i = 0; i < pp; ++i) {
                        const float *xp = xr + 2u * i * pixel_step + t;
                        const mlcc_f32v a = mlcc_f32v_select(q->upper, mlcc_f32v_splat(xp[pixel_step]), mlcc_f32v_splat(xp[0]));
                        acc[i] = mlcc_f32v_fma(acc[i], a, wv);
                    }
                }
            }
        }
    }
    const size_t oc = r->out_channels;
    if (e != NULL && e->residual != NULL)
        for (size_t i = 0; i < pp; ++i)
            acc[i] = mlcc_f32v_add(acc[i], mlcc_f32v_load(e->residual + (r->p0 + ow + 2u * i) * oc));
    const struct mlcc_f32_epilogue *scalar_act = e == NULL || mlcc_f32v_activate_held(e, acc, pp) ? NULL : e;
    for (size_t i = 0; i < pp; ++i) {
        float *yp = r->y + (ow + 2u * i) * oc;
        store_part(acc[i], yp, q->lanes, scalar_act);
    }
}

/* Whether a one-vector panel runs as pixel pairs. */
static int pairs_apply(const struct mlcc_f32_conv_geometry *g, size_t channels, size_t out_channels, size_t nr,
                       size_t y_pitch, const struct mlcc_f32_epilogue *e)
{
    const size_t k = g->kernel[0] * g->kernel[1] * g->kernel[2] * channels, lanes = 2u * out_channels;
    if (nr != LANES || lanes > LANES || y_pitch != out_channels || k > PAIR_MAX_K) return 0;
    return e == NULL || e->residual == NULL
           || (lanes == LANES && e->residual_cs == 1 && e->residual_rs == out_channels);
}

/* The panel's weight rows and bias repeated twice, and the lane mask of pixel p + 1. */
static void pairs_prepare(struct pairs *q, size_t k, size_t out_channels, size_t nr, const float *w,
                          const float *bias)
{
    const size_t lanes = 2u * out_channels;
    float row[LANES], index[LANES];
    for (size_t t = 0; t < k; ++t) {
        for (size_t j = 0; j < LANES; ++j) row[j] = j < lanes ? w[t * nr + j % out_channels] : 0.0f;
        q->w[t] = mlcc_f32v_load(row);
    }
    for (size_t j = 0; j < LANES; ++j) {
        row[j] = bias != NULL && j < lanes ? bias[j % out_channels] : 0.0f;
        index[j] = (float)j;
    }
    q->bias = mlcc_f32v_load(row);
    q->upper = mlcc_f32v_lt(mlcc_f32v_splat((float)out_channels - 0.5f), mlcc_f32v_load(index));
    q->lanes = lanes;
}

/* The row as pixel pairs: the interior in blocks of PAIR_BLOCK pairs (the last overlapping the one before it),
 * border pixels and narrow interiors singly as panel_row runs them. */
static FORCE_INLINE void row_pairs(const struct row *r, size_t ow_a, size_t ow_b, const struct pairs *q,
                                   const float *w, const float *bp, const struct mlcc_f32_epilogue *e)
{
    const struct mlcc_f32_conv_geometry *g = r->g;
    const size_t span = 2u * PAIR_BLOCK;
    size_t lo, hi;
    for (size_t ow = 0; ow < g->out[2]; ++ow) {
        if (ow == ow_a && ow_b - ow_a >= span) {
            for (; ow + span <= ow_b; ow += span) block_pairs(PAIR_BLOCK, r, ow, q, e);
            if (ow < ow_b) block_pairs(PAIR_BLOCK, r, ow_b - span, q, e);
            ow = ow_b;
            if (ow == g->out[2]) break;
        }
        taps_inside(g, 2, ow, &lo, &hi);
        block(1, 1, 0, r, ow, lo, hi, 0, w, bp, e);
    }
}

/* The image as pixel pairs (pairs_apply): a function of its own, so the panels' code stays as it was. */
static NO_INLINE void pairs_image(const struct mlcc_f32_conv_geometry *g, size_t channels, size_t x_pixel_stride,
                                  size_t out_channels, size_t nr, const float *x, const float *w, const float *bias,
                                  float *MLCC_RESTRICT y, const struct mlcc_f32_epilogue *epilogue)
{
    const size_t k = g->kernel[0] * g->kernel[1] * g->kernel[2] * channels;
    struct row r = {g, channels, x_pixel_stride, out_channels, nr, k, NULL, x, 0, 0, 0, 0, 0, 0, y, out_channels, 0};
    struct pairs q;
    pairs_prepare(&q, k, out_channels, nr, w, bias);
    float bias_tail[MLCC_F32_CONV_MAX_NR] = {0.0f};  /* the bias, zero past out_channels */
    if (bias != NULL)
        for (size_t o = 0; o < out_channels; ++o) bias_tail[o] = bias[o];
    size_t ow_a, ow_b;
    interior_columns(g, &ow_a, &ow_b);
    for (size_t od = 0; od < g->out[0]; ++od)
        for (size_t oh = 0; oh < g->out[1]; ++oh) {
            start_row(&r, od, oh, y);
            row_pairs(&r, ow_a, ow_b, &q, w, bias == NULL ? NULL : bias_tail, epilogue);
        }
}

/* Every panel of the row, nv vectors wide (a constant once inlined), in blocks of BLOCK_PIXELS(nv). */
static FORCE_INLINE void row_panels(size_t nv, int indexed, const struct row *r, size_t ow_a, size_t ow_b, const float *w,
                                    const float *bias, const float *bias_tail, const struct mlcc_f32_epilogue *e)
{
    for (size_t o0 = 0; o0 < r->out_channels; o0 += r->nr) {
        const float *wp = w + o0 * r->k;  /* panel o0 / nr: k rows of nr */
        const float *bp = bias == NULL ? NULL : o0 + r->nr <= r->out_channels ? bias + o0 : bias_tail;
        panel_row(BLOCK_PIXELS(nv), nv, indexed, r, ow_a, ow_b, o0, wp, bp, e);
    }
}

/* The image in panels of nv vectors: nr == nv * LANES. */
static FORCE_INLINE void panels(size_t nv, int indexed, MLCC_F32_CONV_DIRECT_NHWC_PARAMS)
{
    const size_t k = g->kernel[0] * g->kernel[1] * g->kernel[2] * channels;
    struct row r = {g, channels, x_pixel_stride, out_channels, nr, k, x_channels, x, 0, 0, 0, 0, 0, 0, y, y_pitch, 0};
    float bias_tail[MLCC_F32_CONV_MAX_NR] = {0.0f};  /* the last panel's bias, zero past out_channels */
    if (bias != NULL && out_channels % nr != 0)
        for (size_t o = out_channels / nr * nr; o < out_channels; ++o) bias_tail[o % nr] = bias[o];
    size_t ow_a, ow_b;
    interior_columns(g, &ow_a, &ow_b);
    for (size_t od = 0; od < g->out[0]; ++od)
        for (size_t oh = 0; oh < g->out[1]; ++oh) {
            start_row(&r, od, oh, y);
            row_panels(nv, indexed, &r, ow_a, ow_b, w, bias, bias_tail, epilogue);
        }
}

/* The entry points for panels of 1, 2 and 3 vectors (the panel width's rows stay nr floats), plain and
 * reading channels through a table. */
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_1v)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_2v)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_3v)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_1v_permuted)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_2v_permuted)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_3v_permuted)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS);

/* The image in panels of nv vectors, but a last panel with fewer live vectors runs as a panel of those
 * alone (34 channels on AVX2: 3 + 2 vectors, not 3 + 3), in the larger blocks its fewer accumulators leave
 * registers for. Through its own entry point: inlined here it would bloat every panel width's code. nv and
 * `indexed` are constants in each entry point, so a width refers only to the narrower ones of its kind (a
 * model links what it can run). */
static FORCE_INLINE void direct(size_t nv, int indexed, MLCC_F32_CONV_DIRECT_NHWC_PARAMS)
{
    const size_t tail = out_channels % nr, tail_vectors = (tail + LANES - 1u) / LANES;
    if (nv == 1u && !indexed && pairs_apply(g, channels, out_channels, nr, y_pitch, epilogue)) {
        pairs_image(g, channels, x_pixel_stride, out_channels, nr, x, w, bias, y, epilogue);
        return;
    }
    if (tail == 0u || tail_vectors >= nv) {
        panels(nv, indexed, g, channels, x_pixel_stride, x_channels, out_channels, nr, x, w, bias, y, y_pitch, epilogue);
        return;
    }
    const size_t full = out_channels - tail, k = g->kernel[0] * g->kernel[1] * g->kernel[2] * channels;
    if (full > 0u) panels(nv, indexed, g, channels, x_pixel_stride, x_channels, full, nr, x, w, bias, y, y_pitch, epilogue);
    struct mlcc_f32_epilogue shifted;
    if (epilogue != NULL && epilogue->residual != NULL) {
        shifted = *epilogue;
        shifted.residual += full * epilogue->residual_cs;
        epilogue = &shifted;
    }
    const float *const w_last = w + full * k, *const bias_last = bias == NULL ? NULL : bias + full;
#define DIRECT_TAIL g, channels, x_pixel_stride, x_channels, tail, nr, x, w_last, bias_last, y + full, y_pitch, epilogue
    if (indexed) {
        if (tail_vectors == 1u && nv > 1u) MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_1v_permuted)(DIRECT_TAIL);
        else if (tail_vectors == 2u && nv > 2u) MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_2v_permuted)(DIRECT_TAIL);
        else if (tail_vectors == 3u && nv > 3u) MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_3v_permuted)(DIRECT_TAIL);
    } else {
        if (tail_vectors == 1u && nv > 1u) MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_1v)(DIRECT_TAIL);
        else if (tail_vectors == 2u && nv > 2u) MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_2v)(DIRECT_TAIL);
        else if (tail_vectors == 3u && nv > 3u) MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_3v)(DIRECT_TAIL);
    }
#undef DIRECT_TAIL
}
#endif

/* One entry point per panel width and kind, so a model links only the one it runs (and no shim: the
 * __reference form). */
#if MLCC_HAVE_F32V
#define DIRECT(nv, indexed) direct(nv, indexed, DIRECT_ARGS)
#else
#define DIRECT(nv, indexed) mlcc_f32_conv_direct_nhwc__reference(DIRECT_ARGS)
#endif
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_1v)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS) { DIRECT(1u, 0); }
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_2v)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS) { DIRECT(2u, 0); }
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_3v)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS) { DIRECT(3u, 0); }
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_4v)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS) { DIRECT(4u, 0); }
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_1v_permuted)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS) { DIRECT(1u, 1); }
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_2v_permuted)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS) { DIRECT(2u, 1); }
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_3v_permuted)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS) { DIRECT(3u, 1); }
void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_4v_permuted)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS) { DIRECT(4u, 1); }

#if MLCC_HAVE_F32V
static void entry(size_t nv, MLCC_F32_CONV_DIRECT_NHWC_PARAMS)
{
    if (x_channels != NULL) {
        switch (nv) {
        case 1: MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_1v_permuted)(DIRECT_ARGS); return;
        case 2: MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_2v_permuted)(DIRECT_ARGS); return;
        case 3: MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_3v_permuted)(DIRECT_ARGS); return;
        default: MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_4v_permuted)(DIRECT_ARGS); return;
        }
    }
    switch (nv) {
    case 1: MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_1v)(DIRECT_ARGS); return;
    case 2: MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_2v)(DIRECT_ARGS); return;
    case 3: MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_3v)(DIRECT_ARGS); return;
    default: MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc_4v)(DIRECT_ARGS); return;
    }
}
#endif

void MLCC_ISA_NAME(mlcc_f32_conv_direct_nhwc)(MLCC_F32_CONV_DIRECT_NHWC_PARAMS)
{
#if MLCC_HAVE_F32V
    if (nr % LANES == 0 && nr <= 4 * LANES && nr <= MLCC_F32_CONV_MAX_NR) {
        entry(nr / LANES, DIRECT_ARGS);
        return;
    }
#endif
    mlcc_f32_conv_direct_nhwc__reference(DIRECT_ARGS);
}
