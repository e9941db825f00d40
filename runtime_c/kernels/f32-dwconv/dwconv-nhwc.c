/* f32-dwconv on the SIMD shim. Per output row, per vector of channels: the row's pixels in tiles of TILE,
 * a 3x3 window (stride 1 or 2 along w) with its nine weight vectors held in registers for the whole row and
 * each input column loaded once per tile, any other window with each weight vector loaded once per tile.
 * Which taps of a row fall inside the input is worked out once per row; along w only the border pixels
 * check theirs, the interior ones read every tap unchecked. Where a vector is half a cache line, 3x3 rows of
 * stride 1 padded by one and of stride 2 run the other way round (CHANNELS_INNER): per tile of pixels, every
 * vector of channels; at AVX-512 too the padded rows at most BORDER_TILE_MAX wide, one tile each. */
#include "mlcc/kernels/f32-dwconv.h"
#include "mlcc/simd.h"

#if MLCC_HAVE_F32V
#include "mlcc/activation-simd.h"
#endif

/* The taps k in [0, kernel) with 0 <= start + k * dilation < extent, as [*lo, *hi) (possibly empty). */
static void taps_inside(ptrdiff_t start, size_t kernel, size_t dilation, size_t extent, size_t *lo, size_t *hi)
{
    const ptrdiff_t step = (ptrdiff_t)dilation, last = (ptrdiff_t)extent - 1 - start;
    const size_t first = start < 0 ? (size_t)((-start + step - 1) / step) : 0u;
    const size_t end = last < 0 ? 0u : (size_t)(last / step) + 1u;
    *hi = MLCC_MIN(end, kernel);
    *lo = MLCC_MIN(first, *hi);
}

/* The epilogue work the SIMD tiles do while the sums are in registers: a residual read per element, and
 * ReLU or Clip. What they cannot do (another activation, a broadcast residual) is left to a pass over the
 * row's stored outputs (post). */
enum post_pass { POST_NONE, POST_ACTIVATION, POST_EPILOGUE };

struct plan {
    const float *residual;            /* NULL: none added in the tiles */
    size_t residual_rs;
    enum mlcc_activation activation;  /* NONE, RELU or CLIP (lo, hi) */
    float lo, hi;
    enum post_pass post;
};

/* What the pixels of one output row share. */
struct row {
    const struct mlcc_f32_conv_geometry *g;
    size_t channels;
    const float *x, *w, *bias;
    float *y;                           /* the row's first output pixel */
    size_t pixel;                       /* its index in the image: the epilogue's row */
    size_t kd_lo, kd_hi, kh_lo, kh_hi;  /* the (kd, kh) taps inside the input */
    ptrdiff_t id0, ih0;                 /* the input (d, h) of tap (0, 0) */
    const struct mlcc_f32_epilogue *epilogue;
    struct plan plan;
};

/* Input pixel 0 of the row tap (kd, kh) reads (a tap inside the input). */
static inline const float *input_row(const struct row *r, size_t kd, size_t kh)
{
    const struct mlcc_f32_conv_geometry *g = r->g;
    const size_t id = (size_t)(r->id0 + (ptrdiff_t)(kd * g->dilation[0]));
    const size_t ih = (size_t)(r->ih0 + (ptrdiff_t)(kh * g->dilation[1]));
    return r->x + (id * g->in[1] + ih) * g->in[2] * r->channels;
}

/* The first weight of row tap (kd, kh). */
static inline const float *weight_row(const struct row *r, size_t kd, size_t kh)
{
    return r->w + (kd * r->g->kernel[1] + kh) * r->g->kernel[2] * r->channels;
}

/* Input column of output pixel ow's tap 0 along w (negative in the left padding). */
static inline ptrdiff_t input_column(const struct mlcc_f32_conv_geometry *g, size_t ow)
{
    return (ptrdiff_t)(ow * g->stride[2]) - (ptrdiff_t)g->pad[2];
}

/* Channels [c0, c1) of output pixel ow, one channel at a time: the whole kernel on targets without a SIMD
 * shim, and the channels fewer than one vector on the others. */
static void pixel_portable(const struct row *r, size_t ow, size_t c0, size_t c1)
{
    const struct mlcc_f32_conv_geometry *g = r->g;
    const size_t channels = r->channels;
    const ptrdiff_t iw0 = input_column(g, ow);
    size_t kw_lo, kw_hi;
    taps_inside(iw0, g->kernel[2], g->dilation[2], g->in[2], &kw_lo, &kw_hi);
    float *MLCC_RESTRICT yp = r->y + ow * channels;
    for (size_t c = c0; c < c1; ++c) yp[c] = r->bias != NULL ? r->bias[c] : 0.0f;
    for (size_t kd = r->kd_lo; kd < r->kd_hi; ++kd) {
        for (size_t kh = r->kh_lo; kh < r->kh_hi; ++kh) {
            const float *xr = input_row(r, kd, kh), *wr = weight_row(r, kd, kh);
            for (size_t kw = kw_lo; kw < kw_hi; ++kw) {
                const float *MLCC_RESTRICT xp = xr + (size_t)(iw0 + (ptrdiff_t)(kw * g->dilation[2])) * channels;
                const float *MLCC_RESTRICT wp = wr + kw * channels;
                for (size_t c = c0; c < c1; ++c) yp[c] += xp[c] * wp[c];
            }
        }
    }
    mlcc_f32_epilogue_apply(r->epilogue, 1, c1 - c0, yp + c0, channels, r->pixel + ow, c0);
}

#if MLCC_HAVE_F32V

#define LANES MLCC_F32V_LANES
#define TILE 4u  /* output pixels per iteration */

/* In WebAssembly a copy of the row per activation: Cranelift turns the tiles' test of it into a jump table
 * per tile and reloads Clip's bounds from the stack (7x7x960 3x3 with Clip: 0.86x the time, 25x5x64: 0.8x
 * in wasmtime); native builds keep one copy (the three were 2-8% slower on AVX-512). */
#if defined(__wasm__)
#define ACTIVATION_COPIES 1
#else
#define ACTIVATION_COPIES 0
#endif

/* The tiles are written as loops over constants (pixels, rows, stride): inlined, they unroll and their
 * accumulators and weights live in registers. They read the row through a local copy: a vector store may
 * alias anything, so fields read through a pointer would be reloaded after every store. */
#if defined(__GNUC__)
#define FORCE_INLINE inline __attribute__((always_inline))
#define NO_INLINE __attribute__((noinline))
#else
#define FORCE_INLINE inline
#define NO_INLINE
#endif

/* Applies the plan's residual (vector p at res + p * res_step) and activation to `count` finished vectors
 * and stores vector p at yp + p * step. */
static FORCE_INLINE void finish(const struct plan *plan, mlcc_f32v *acc, size_t count, float *yp, size_t step,
                                const float *res, size_t res_step)
{
    if (plan->residual != NULL)
        for (size_t p = 0; p < count; ++p) acc[p] = mlcc_f32v_add(acc[p], mlcc_f32v_load(res + p * res_step));
    if (plan->activation == MLCC_ACTIVATION_RELU) {
        const mlcc_f32v zero = mlcc_f32v_zero();
        for (size_t p = 0; p < count; ++p) acc[p] = mlcc_f32v_max(acc[p], zero);
    } else if (plan->activation == MLCC_ACTIVATION_CLIP) {
        const mlcc_f32v lo = mlcc_f32v_splat(plan->lo), hi = mlcc_f32v_splat(plan->hi);
        for (size_t p = 0; p < count; ++p) acc[p] = mlcc_f32v_min(mlcc_f32v_max(acc[p], lo), hi);
    }
    for (size_t p = 0; p < count; ++p) mlcc_f32v_store(yp + p * step, acc[p]);
}

/* finish for pixels ow .. ow + count of the row at channel c. */
static FORCE_INLINE void finish_pixels(const struct row *r, mlcc_f32v *acc, size_t count, size_t ow, size_t c)
{
    const float *res = r->plan.residual != NULL ? r->plan.residual + (r->pixel + ow) * r->plan.residual_rs + c : NULL;
    finish(&r->plan, acc, count, r->y + ow * r->channels + c, r->channels, res, r->plan.residual_rs);
}

static void activate_vector(const struct mlcc_f32_epilogue *e, float *p)
{
    mlcc_f32v v = mlcc_f32v_load(p);
    if (mlcc_f32v_activate(e, &v, 1)) {
        mlcc_f32v_store(p, v);
        return;
    }
    for (size_t j = 0; j < LANES; ++j) p[j] = mlcc_f32_activate(e, p[j]);  /* no vector form */
}

/* The epilogue work the tiles left (plan.post) on pixels [ow0, ow1) of the row: at channel c, or with
 * `flat` all their channels. */
static void post_pass(const struct row *r, size_t ow0, size_t ow1, size_t c, int flat)
{
    const struct mlcc_f32_epilogue *e = r->epilogue;
    const size_t channels = r->channels;
    float *y = r->y + ow0 * channels + c;
    if (r->plan.post == POST_EPILOGUE) {
        mlcc_f32_epilogue_apply(e, ow1 - ow0, flat ? channels : LANES, y, channels, r->pixel + ow0, c);
    } else if (flat) {  /* whole vectors, then one channel at a time (activating twice is not idempotent) */
        const size_t n = (ow1 - ow0) * channels;
        size_t i = 0;
        for (; i + LANES <= n; i += LANES) activate_vector(e, y + i);
        for (; i < n; ++i) y[i] = mlcc_f32_activate(e, y[i]);
    } else {
        for (size_t ow = ow0; ow < ow1; ++ow) activate_vector(e, y + (ow - ow0) * channels);
    }
}

static inline mlcc_f32v bias_vector(const struct row *r, size_t c)
{
    return r->bias != NULL ? mlcc_f32v_load(r->bias + c) : mlcc_f32v_zero();
}

/* Output pixel ow at channel c, checking which of its taps along w are inside the input (a border pixel). */
static void pixel_vector(const struct row *r, size_t ow, size_t c)
{
    const struct mlcc_f32_conv_geometry *g = r->g;
    const size_t channels = r->channels;
    const ptrdiff_t iw0 = input_column(g, ow);
    size_t kw_lo, kw_hi;
    taps_inside(iw0, g->kernel[2], g->dilation[2], g->in[2], &kw_lo, &kw_hi);
    mlcc_f32v acc = bias_vector(r, c);
    for (size_t kd = r->kd_lo; kd < r->kd_hi; ++kd) {
        for (size_t kh = r->kh_lo; kh < r->kh_hi; ++kh) {
            const float *xr = input_row(r, kd, kh) + c, *wr = weight_row(r, kd, kh) + c;
            for (size_t kw = kw_lo; kw < kw_hi; ++kw) {
                const size_t iw = (size_t)(iw0 + (ptrdiff_t)(kw * g->dilation[2]));
                acc = mlcc_f32v_fma(acc, mlcc_f32v_load(xr + iw * channels), mlcc_f32v_load(wr + kw * channels));
            }
        }
    }
    finish_pixels(r, &acc, 1, ow, c);
}

/* Interior pixels ow .. ow + count (count a constant once inlined) of any window: each weight vector is
 * loaded once and feeds every pixel of the tile. */
static FORCE_INLINE void tile_any(const struct row *r, size_t ow, size_t c, size_t count)
{
    const struct mlcc_f32_conv_geometry *g = r->g;
    const size_t channels = r->channels, step = g->stride[2] * channels, kw_step = g->dilation[2] * channels;
    const size_t iw0 = (size_t)input_column(g, ow);
    mlcc_f32v acc[TILE];
    const mlcc_f32v b = bias_vector(r, c);
    for (size_t p = 0; p < count; ++p) acc[p] = b;
    for (size_t kd = r->kd_lo; kd < r->kd_hi; ++kd) {
        for (size_t kh = r->kh_lo; kh < r->kh_hi; ++kh) {
            const float *xr = input_row(r, kd, kh) + iw0 * channels + c, *wr = weight_row(r, kd, kh) + c;
            for (size_t kw = 0; kw < g->kernel[2]; ++kw) {
                const mlcc_f32v wv = mlcc_f32v_load(wr + kw * channels);
                const float *xk = xr + kw * kw_step;
                for (size_t p = 0; p < count; ++p) acc[p] = mlcc_f32v_fma(acc[p], mlcc_f32v_load(xk + p * step), wv);
            }
        }
    }
    finish_pixels(r, acc, count, ow, c);
}

static void row_any(const struct row *row, size_t c, size_t ow_lo, size_t ow_hi)
{
    const struct row r = *row;
    size_t ow = 0;
    for (; ow < ow_lo; ++ow) pixel_vector(&r, ow, c);
    for (; ow + TILE <= ow_hi; ow += TILE) tile_any(&r, ow, c, TILE);
    for (; ow < ow_hi; ++ow) tile_any(&r, ow, c, 1);
    for (; ow < r.g->out[2]; ++ow) pixel_vector(&r, ow, c);
    if (r.plan.post != POST_NONE) post_pass(&r, 0, r.g->out[2], c, 0);
}

/* Pixels ow .. ow + count of a 3x3 window over `rows` input rows xr (the taps wv[i][kw]) with stride s
 * along w, applying the taps kw in [k0, k1) (all three inside the image, or a border pixel's); count, rows,
 * s, k0 and k1 are constants once inlined. Each input column the tile reads is loaded once and feeds every
 * pixel whose window covers it. */
static FORCE_INLINE void tile_3x3(const struct row *r, const mlcc_f32v wv[3][3], mlcc_f32v b,
                                  const float *const xr[3], size_t rows, size_t s, size_t ow, size_t c, size_t count,
                                  size_t k0, size_t k1)
{
    const size_t channels = r->channels, first = ow * s + k0 - r->g->pad[2];  /* the first input column read */
    mlcc_f32v acc[TILE];
    for (size_t p = 0; p < count; ++p) acc[p] = b;
    for (size_t i = 0; i < rows; ++i) {
        const float *xi = xr[i] + first * channels + c;
        for (size_t j = k0; j < (count - 1) * s + k1; ++j) {
            const mlcc_f32v xv = mlcc_f32v_load(xi + (j - k0) * channels);
            for (size_t p = 0; p < count; ++p)
                if (j >= p * s + k0 && j < p * s + k1) acc[p] = mlcc_f32v_fma(acc[p], xv, wv[i][j - p * s]);
        }
    }
    finish_pixels(r, acc, count, ow, c);
}

/* A border pixel: its own taps along w, in registers for the usual one-pixel padding. */
static FORCE_INLINE void edge_3x3(const struct row *r, const mlcc_f32v wv[3][3], mlcc_f32v b,
                                  const float *const xr[3], size_t rows, size_t s, size_t ow, size_t c)
{
    size_t kw_lo, kw_hi;
    taps_inside(input_column(r->g, ow), 3, 1, r->g->in[2], &kw_lo, &kw_hi);
    if (kw_lo == 1 && kw_hi == 3)
        tile_3x3(r, wv, b, xr, rows, s, ow, c, 1, 1, 3);
    else if (kw_lo == 0 && kw_hi == 2)
        tile_3x3(r, wv, b, xr, rows, s, ow, c, 1, 0, 2);
    else
        pixel_vector(r, ow, c);
}

/* Pixels ow .. ow + count of a stride-1 row with one column of padding on each side, taking the row's left
 * border pixel (left, then ow is 0) or its right one (right) into the tile: pixel p reads the input columns of
 * ow + p - 1 .. ow + p + 1 inside the row, in the order tile_3x3 does. count, left and right are constants once
 * inlined. A border pixel alone would start and finish its own sums (a narrow row, DS-CNN's 5 wide: two of
 * them and a tile of three, 1.5x the time of one tile of five). */
#define BORDER_TILE_MAX 5u

static FORCE_INLINE void tile_3x3_border(const struct row *r, const mlcc_f32v wv[3][3], mlcc_f32v b,
                                         const float *const xr[3], size_t rows, size_t ow, size_t c, size_t count,
                                         int left, int right)
{
    const size_t channels = r->channels;
    mlcc_f32v acc[BORDER_TILE_MAX];
    for (size_t p = 0; p < count; ++p) acc[p] = b;
    for (size_t i = 0; i < rows; ++i) {
        /* j: the input column ow - 1 + j, read by pixels p with p <= j <= p + 2 (tap j - p) */
        for (size_t j = left ? 1u : 0u; j < count + (right ? 1u : 2u); ++j) {
            const mlcc_f32v xv = mlcc_f32v_load(xr[i] + (ow + j - 1u) * channels + c);
            for (size_t p = j > 2u ? j - 2u : 0u; p <= j && p < count; ++p)
                acc[p] = mlcc_f32v_fma(acc[p], xv, wv[i][j - p]);
        }
    }
    finish_pixels(r, acc, count, ow, c);
}

/* A stride-1 row wider than BORDER_TILE_MAX with one column of padding on each side, over three input rows:
 * its border pixels in its first and last tiles. A function of its own, as row_3x3 is (inlined into
 * row_3x3_over it slowed the narrow rows' copy by a fifth). */
static void row_3x3_padded(const struct row *row, size_t c)
{
    const struct row r = *row;
    const size_t width = r.g->out[2];
    const float *xr[3];
    mlcc_f32v wv[3][3];
    for (size_t i = 0; i < 3; ++i) {
        const float *wr = weight_row(&r, 0, r.kh_lo + i) + c;
        xr[i] = input_row(&r, 0, r.kh_lo + i);
        for (size_t kw = 0; kw < 3; ++kw) wv[i][kw] = mlcc_f32v_load(wr + kw * r.channels);
    }
    const mlcc_f32v b = bias_vector(&r, c);
    /* 6: 3 + 3, 7: 4 + 3, wider: 4, the interior's tiles, 4 */
    const size_t first = width < 8u ? width - 3u : 4u, last = width - (width < 8u ? 3u : 4u);
    size_t ow = first;
    if (first == 4u)
        tile_3x3_border(&r, wv, b, xr, 3, 0, c, 4, 1, 0);
    else
        tile_3x3_border(&r, wv, b, xr, 3, 0, c, 3, 1, 0);
    for (; ow + TILE <= last; ow += TILE) tile_3x3(&r, wv, b, xr, 3, 1, ow, c, TILE, 0, 3);
    if (ow + 3 <= last) {
        tile_3x3(&r, wv, b, xr, 3, 1, ow, c, 3, 0, 3);
        ow += 3;
    } else if (ow + 2 <= last) {
        tile_3x3(&r, wv, b, xr, 3, 1, ow, c, 2, 0, 3);
        ow += 2;
    }
    for (; ow < last; ++ow) tile_3x3(&r, wv, b, xr, 3, 1, ow, c, 1, 0, 3);
    if (width - last == 4u)
        tile_3x3_border(&r, wv, b, xr, 3, last, c, 4, 0, 1);
    else
        tile_3x3_border(&r, wv, b, xr, 3, last, c, 3, 0, 1);
    if (r.plan.post != POST_NONE) post_pass(&r, 0, width, c, 0);
}

/* Where a vector is half a cache line (AVX2's 8 floats), the 3x3 rows of stride 1 padded by one
 * (row_3x3_padded's and their first and last) and of stride 2 run the channels innermost: for a tile of
 * pixels, every vector of a block of channels, then the next tile. One vector of channels per pass along the
 * row read half of each input line a pass and ran about one FMA a cycle on MobileNetV2's layers (Zen 4, AVX2:
 * 112x112x32 3x3 at 48% of the FMA peak, a layer small enough for L1 at 68%); the tiles over a block of
 * channels read their input pixels whole and in order (stride 1: 0.78-0.97x the time; stride 2: 0.82-0.88x
 * of two vectors a pass, which this replaces). Blocks of at most CHANNEL_BLOCK channels keep a tile's input
 * pixels and its taps in L1 (14x14x576 as one block: 0.96x, in three: 0.89x). AVX-512's 16-float vectors
 * keep the passes (this order: 0.95-1.09x the time there), except the narrow rows (NARROW_CHANNELS_INNER). */
#if MLCC_F32V_LANES * 4u * 2u == 64u
#define CHANNELS_INNER 1
#else
#define CHANNELS_INNER 0
#endif

/* Padded stride-1 rows at most BORDER_TILE_MAX wide (DS-CNN's 25x5x64) run channels innermost at AVX2's and
 * AVX-512's widths alike: the whole row one tile for a block of channels. A pass per vector of channels
 * (row_3x3_over's tile_3x3_border) took 1.7x the time at AVX2, 1.25-1.4x at AVX-512 (Zen 4). */
#if CHANNELS_INNER || MLCC_F32V_LANES == 16u
#define NARROW_CHANNELS_INNER 1
#else
#define NARROW_CHANNELS_INNER 0
#endif

#if NARROW_CHANNELS_INNER
#define CHANNEL_BLOCK 256u
/* The interior tiles of a padded stride-1 row: 6 sums, 9 taps and an input vector fill AVX2's 16 registers
 * (MobileNetV2's 112x112x32, 56x56x144 and 14x14 layers 0.94-0.96x the time of 4 pixels; 5 pixels: 0.97-1.2x,
 * 8: spilled, 3x). At least BORDER_TILE_MAX, the tiles' sums array. */
#define SPAN_TILE 6u

/* Pixels ow .. ow + count of a 3x3 row over `rows` input rows xr with stride s along w, for the channels
 * [c0, c1), the channels innermost: the tile's input pixels are read whole and in order, the taps loaded per
 * vector of channels. Pixel p applies the taps kw in [k0, k1), except the first with `left` (kw 1 and 2) and
 * the last with `right` (kw 0 and 1): a stride-1 row's border pixels inside its tiles (tile_3x3_border), or a
 * border pixel alone (edge_3x3). pad: the padding along w (a constant where known: the geometry's reload
 * per tile cost 112x112x32 4%). Each sum takes its taps in tile_3x3's order. Everything the channel loop
 * reads is a local, so the stores do not make it reload the row's fields. rows, s, count, k0, k1, left and
 * right are constants once inlined. */
static FORCE_INLINE void span_3x3(const struct row *r, const float *const xr[3], size_t rows, size_t s, size_t pad,
                                  size_t c0, size_t c1, size_t ow, size_t count, size_t k0, size_t k1, int left,
                                  int right)
{
    const size_t channels = r->channels, last = c1 - LANES;
    /* j: the input column ow * s - pad + j, read by pixels p with p * s + klo(p) <= j < p * s + khi(p) */
#define KLO(p) (left && (p) == 0 ? 1u : k0)
#define KHI(p) (right && (p) == count - 1 ? 2u : k1)
    const size_t j0 = KLO(0), j1 = (count - 1) * s + KHI(count - 1);
    const float *xs[3];
    for (size_t i = 0; i < rows; ++i) xs[i] = xr[i] + (ow * s + j0 - pad) * channels;
    const float *w = weight_row(r, 0, r->kh_lo), *bias = r->bias;
    float *y = r->y + ow * channels;
    const float *res = r->plan.residual != NULL ? r->plan.residual + (r->pixel + ow) * r->plan.residual_rs : NULL;
    const size_t res_step = r->plan.residual_rs;
    const enum mlcc_activation act = r->plan.activation;
    const mlcc_f32v lo = mlcc_f32v_splat(r->plan.lo), hi = mlcc_f32v_splat(r->plan.hi), zero = mlcc_f32v_zero();
    for (size_t c = c0;; c = MLCC_MIN(c + LANES, last)) {
        mlcc_f32v acc[SPAN_TILE], wv[3][3];
        for (size_t i = 0; i < rows; ++i)
            for (size_t kw = 0; kw < 3; ++kw) wv[i][kw] = mlcc_f32v_load(w + (i * 3 + kw) * channels + c);
        const mlcc_f32v b = bias != NULL ? mlcc_f32v_load(bias + c) : zero;
        for (size_t p = 0; p < count; ++p) acc[p] = b;
        for (size_t i = 0; i < rows; ++i) {
            for (size_t j = j0; j < j1; ++j) {
                const mlcc_f32v xv = mlcc_f32v_load(xs[i] + (j - j0) * channels + c);
                for (size_t p = 0; p < count; ++p)
                    if (j >= p * s + KLO(p) && j < p * s + KHI(p)) acc[p] = mlcc_f32v_fma(acc[p], xv, wv[i][j - p * s]);
            }
        }
        if (res != NULL)
            for (size_t p = 0; p < count; ++p) acc[p] = mlcc_f32v_add(acc[p], mlcc_f32v_load(res + p * res_step + c));
        if (act == MLCC_ACTIVATION_RELU)
            for (size_t p = 0; p < count; ++p) acc[p] = mlcc_f32v_max(acc[p], zero);
        else if (act == MLCC_ACTIVATION_CLIP)
            for (size_t p = 0; p < count; ++p) acc[p] = mlcc_f32v_min(mlcc_f32v_max(acc[p], lo), hi);
        for (size_t p = 0; p < count; ++p) mlcc_f32v_store(y + p * channels + c, acc[p]);
        if (c == last) break;
    }
#undef KLO
#undef KHI
}

/* The channel blocks of a row: [c0, c1) in turn, none narrower than a vector. */
#define FOR_CHANNEL_BLOCKS(channels, c0, c1)                                                                     \
    for (size_t blocks_ = ((channels) + CHANNEL_BLOCK - 1) / CHANNEL_BLOCK,                                     \
                block_ = ((channels) / blocks_ + LANES - 1) / LANES * LANES, c0 = 0, c1 = 0;                   \
         c0 < (channels) && ((c1 = (channels) - c0 < block_ + LANES ? (channels) : c0 + block_), 1); c0 = c1)

/* A padded stride-1 row 3 to BORDER_TILE_MAX pixels wide over `rows` input rows (a constant once inlined): the
 * whole row one tile, both border pixels in it, a block of channels at a time. */
static FORCE_INLINE void row_3x3_narrow_channels_inner(const struct row *row, size_t rows)
{
    const struct row r = *row;
    const size_t width = r.g->out[2];
    const float *xr[3] = {r.x, r.x, r.x};
    for (size_t i = 0; i < rows; ++i) xr[i] = input_row(&r, 0, r.kh_lo + i);
    FOR_CHANNEL_BLOCKS(r.channels, c0, c1) {
        if (width == 5)
            span_3x3(&r, xr, rows, 1, 1, c0, c1, 0, 5, 0, 3, 1, 1);
        else if (width == 4)
            span_3x3(&r, xr, rows, 1, 1, c0, c1, 0, 4, 0, 3, 1, 1);
        else
            span_3x3(&r, xr, rows, 1, 1, c0, c1, 0, 3, 0, 3, 1, 1);
    }
    if (r.plan.post != POST_NONE) post_pass(&r, 0, width, 0, 1);
}

static NO_INLINE void row_3x3_narrow3_channels_inner(const struct row *r)
{
    row_3x3_narrow_channels_inner(r, 3);
}

static NO_INLINE void row_3x3_narrow2_channels_inner(const struct row *r)
{
    row_3x3_narrow_channels_inner(r, 2);
}

/* A narrow row with two or three of its taps along h inside the input, a copy for each. */
static void row_3x3_narrow(const struct row *r)
{
    if (r->kh_hi - r->kh_lo == 3)
        row_3x3_narrow3_channels_inner(r);
    else
        row_3x3_narrow2_channels_inner(r);
}
#endif

#if CHANNELS_INNER
/* row_3x3_padded (over `rows` input rows, a constant once inlined) for every channel, a tile of pixels and a
 * block of channels at a time. */
static FORCE_INLINE void row_3x3_padded_channels_inner(const struct row *row, size_t rows)
{
    const struct row r = *row;
    const size_t width = r.g->out[2];
    const float *xr[3] = {r.x, r.x, r.x};
    for (size_t i = 0; i < rows; ++i) xr[i] = input_row(&r, 0, r.kh_lo + i);
    FOR_CHANNEL_BLOCKS(r.channels, c0, c1) {
        const size_t first = width < 8u ? width - 3u : 4u, last = width - (width < 8u ? 3u : 4u);
        size_t ow = first;
        if (first == 4u)
            span_3x3(&r, xr, rows, 1, 1, c0, c1, 0, 4, 0, 3, 1, 0);
        else
            span_3x3(&r, xr, rows, 1, 1, c0, c1, 0, 3, 0, 3, 1, 0);
        for (; ow + SPAN_TILE <= last; ow += SPAN_TILE) span_3x3(&r, xr, rows, 1, 1, c0, c1, ow, SPAN_TILE, 0, 3, 0, 0);
        if (ow + TILE <= last) {
            span_3x3(&r, xr, rows, 1, 1, c0, c1, ow, TILE, 0, 3, 0, 0);
            ow += TILE;
        }
        if (ow + 3 <= last) {
            span_3x3(&r, xr, rows, 1, 1, c0, c1, ow, 3, 0, 3, 0, 0);
            ow += 3;
        } else if (ow + 2 <= last) {
            span_3x3(&r, xr, rows, 1, 1, c0, c1, ow, 2, 0, 3, 0, 0);
            ow += 2;
        }
        for (; ow < last; ++ow) span_3x3(&r, xr, rows, 1, 1, c0, c1, ow, 1, 0, 3, 0, 0);
        if (width - last == 4u)
            span_3x3(&r, xr, rows, 1, 1, c0, c1, last, 4, 0, 3, 0, 1);
        else
            span_3x3(&r, xr, rows, 1, 1, c0, c1, last, 3, 0, 3, 0, 1);
    }
    if (r.plan.post != POST_NONE) post_pass(&r, 0, width, 0, 1);
}

/* A border pixel of row_3x3_channels_inner for the channels [c0, c1): edge_3x3's cases. */
static FORCE_INLINE void edge_3x3_channels_inner(const struct row *r, const float *const xr[3], size_t rows,
                                                 size_t s, size_t pad, size_t c0, size_t c1, size_t ow)
{
    size_t kw_lo, kw_hi;
    taps_inside(input_column(r->g, ow), 3, 1, r->g->in[2], &kw_lo, &kw_hi);
    if (kw_lo == 1 && kw_hi == 3) {
        span_3x3(r, xr, rows, s, pad, c0, c1, ow, 1, 1, 3, 0, 0);
    } else if (kw_lo == 0 && kw_hi == 2) {
        span_3x3(r, xr, rows, s, pad, c0, c1, ow, 1, 0, 2, 0, 0);
    } else {
        for (size_t c = c0;; c = MLCC_MIN(c + LANES, c1 - LANES)) {
            pixel_vector(r, ow, c);
            if (c == c1 - LANES) break;
        }
    }
}

/* row_3x3_over (rows and s constants once inlined) for every channel, a tile of pixels and a block of
 * channels at a time. */
static FORCE_INLINE void row_3x3_channels_inner(const struct row *row, size_t rows, size_t s, size_t ow_lo,
                                                size_t ow_hi)
{
    const struct row r = *row;
    const size_t pad = r.g->pad[2];
    const float *xr[3] = {r.x, r.x, r.x};
    for (size_t i = 0; i < rows; ++i) xr[i] = input_row(&r, 0, r.kh_lo + i);
    FOR_CHANNEL_BLOCKS(r.channels, c0, c1) {
        size_t ow = 0;
        for (; ow < ow_lo; ++ow) edge_3x3_channels_inner(&r, xr, rows, s, pad, c0, c1, ow);
        for (; ow + TILE <= ow_hi; ow += TILE) span_3x3(&r, xr, rows, s, pad, c0, c1, ow, TILE, 0, 3, 0, 0);
        if (ow + 3 <= ow_hi) {
            span_3x3(&r, xr, rows, s, pad, c0, c1, ow, 3, 0, 3, 0, 0);
            ow += 3;
        } else if (ow + 2 <= ow_hi) {
            span_3x3(&r, xr, rows, s, pad, c0, c1, ow, 2, 0, 3, 0, 0);
            ow += 2;
        }
        for (; ow < ow_hi; ++ow) span_3x3(&r, xr, rows, s, pad, c0, c1, ow, 1, 0, 3, 0, 0);
        for (; ow < r.g->out[2]; ++ow) edge_3x3_channels_inner(&r, xr, rows, s, pad, c0, c1, ow);
    }
    if (r.plan.post != POST_NONE) post_pass(&r, 0, r.g->out[2], 0, 1);
}

static NO_INLINE void row_3x3_padded3_channels_inner(const struct row *r)
{
    row_3x3_padded_channels_inner(r, 3);
}

static NO_INLINE void row_3x3_padded2_channels_inner(const struct row *r)
{
    row_3x3_padded_channels_inner(r, 2);
}

static NO_INLINE void row_3x3_stride2_channels_inner(const struct row *r, size_t ow_lo, size_t ow_hi)
{
    if (r->kh_hi - r->kh_lo == 3)
        row_3x3_channels_inner(r, 3, 2, ow_lo, ow_hi);
    else
        row_3x3_channels_inner(r, 2, 2, ow_lo, ow_hi);
}

/* A 3x3 row (CHANNELS_3X3 or _PADDED) with two or three of its taps along h inside the input, channels
 * innermost: padded stride-1 rows or stride-2 rows, a copy for each row count. */
static void row_3x3_by_tiles(const struct row *r, int padded, size_t ow_lo, size_t ow_hi)
{
    if (padded && r->kh_hi - r->kh_lo == 3)
        row_3x3_padded3_channels_inner(r);
    else if (padded)
        row_3x3_padded2_channels_inner(r);
    else
        row_3x3_stride2_channels_inner(r, ow_lo, ow_hi);
}
#endif

/* One row at channel c for a 3x3 window over `rows` input rows with stride s along w: the weights of the
 * row's taps loaded once for the whole row, into registers when rows and s are constants. */
static FORCE_INLINE void row_3x3_over(const struct row *row, size_t rows, size_t s, enum mlcc_activation act,
                                      size_t c, size_t ow_lo, size_t ow_hi)
{
    struct row r = *row;
    r.plan.activation = act;  /* a constant in each wasm copy (ACTIVATION_COPIES) */
    const float *xr[3] = {r.x, r.x, r.x};
    mlcc_f32v wv[3][3];
    for (size_t i = 0; i < rows; ++i) {
        const float *wr = weight_row(&r, 0, r.kh_lo + i) + c;
        xr[i] = input_row(&r, 0, r.kh_lo + i);
        for (size_t kw = 0; kw < 3; ++kw) wv[i][kw] = mlcc_f32v_load(wr + kw * r.channels);
    }
    const mlcc_f32v b = bias_vector(&r, c);
    const size_t width = r.g->out[2];
    if (s == 1 && r.g->pad[2] == 1 && r.g->in[2] == width && width >= 3 && width <= BORDER_TILE_MAX) {
        if (width == 5)
            tile_3x3_border(&r, wv, b, xr, rows, 0, c, 5, 1, 1);
        else if (width == 4)
            tile_3x3_border(&r, wv, b, xr, rows, 0, c, 4, 1, 1);
        else
            tile_3x3_border(&r, wv, b, xr, rows, 0, c, 3, 1, 1);
        if (r.plan.post != POST_NONE) post_pass(&r, 0, width, c, 0);
        return;
    }
    size_t ow = 0;
    for (; ow < ow_lo; ++ow) edge_3x3(&r, wv, b, xr, rows, s, ow, c);
    for (; ow + TILE <= ow_hi; ow += TILE) tile_3x3(&r, wv, b, xr, rows, s, ow, c, TILE, 0, 3);
    /* the rest as one tile when two or three pixels (a 5-wide row's interior is three) */
    if (ow + 3 <= ow_hi) {
        tile_3x3(&r, wv, b, xr, rows, s, ow, c, 3, 0, 3);
        ow += 3;
    } else if (ow + 2 <= ow_hi) {
        tile_3x3(&r, wv, b, xr, rows, s, ow, c, 2, 0, 3);
        ow += 2;
    }
    for (; ow < ow_hi; ++ow) tile_3x3(&r, wv, b, xr, rows, s, ow, c, 1, 0, 3);
    for (; ow < r.g->out[2]; ++ow) edge_3x3(&r, wv, b, xr, rows, s, ow, c);
    if (r.plan.post != POST_NONE) post_pass(&r, 0, r.g->out[2], c, 0);
}

/* A row with two of its three taps along h inside the input (the first or last of an image padded by one):
 * a copy each for stride 1 and 2, the taps in registers (as the generic copy, with `rows` unknown, kept them
 * on the stack: 7x7x960 and 7x7x544 1.2x, 14x14x272 1.15x the time at AVX2). A function of its own: inlined
 * beside the three-row copies it slowed DS-CNN's 25x5x64 by a fifth at AVX-512. */
static NO_INLINE void row_3x3_two_rows(const struct row *r, enum mlcc_activation act, size_t c, size_t ow_lo,
                                       size_t ow_hi)
{
    if (r->g->stride[2] == 1)
        row_3x3_over(r, 2, 1, act, c, ow_lo, ow_hi);
    else
        row_3x3_over(r, 2, 2, act, c, ow_lo, ow_hi);
}

/* A 3x3 window (one depth tap, dilation 1 along w, stride 1 or 2 along w); the rows with all three taps
 * inside the input get a copy each for stride 1 and 2, those with two (row_3x3_two_rows) likewise. */
static FORCE_INLINE void row_3x3_act(const struct row *r, enum mlcc_activation act, size_t c, size_t ow_lo,
                                     size_t ow_hi)
{
    const size_t rows = r->kd_hi > r->kd_lo ? r->kh_hi - r->kh_lo : 0u;
    if (rows == 3 && r->g->stride[2] == 1)
        row_3x3_over(r, 3, 1, act, c, ow_lo, ow_hi);
    else if (rows == 3)
        row_3x3_over(r, 3, 2, act, c, ow_lo, ow_hi);
    else if (rows == 2)
        row_3x3_two_rows(r, act, c, ow_lo, ow_hi);
    else
        row_3x3_over(r, rows, r->g->stride[2], act, c, ow_lo, ow_hi);
}

static void row_3x3(const struct row *r, size_t c, size_t ow_lo, size_t ow_hi)
{
    const enum mlcc_activation act = r->plan.activation;
    if (ACTIVATION_COPIES && act == MLCC_ACTIVATION_CLIP)
        row_3x3_act(r, MLCC_ACTIVATION_CLIP, c, ow_lo, ow_hi);
    else if (ACTIVATION_COPIES && act == MLCC_ACTIVATION_RELU)
        row_3x3_act(r, MLCC_ACTIVATION_RELU, c, ow_lo, ow_hi);
    else
        row_3x3_act(r, ACTIVATION_COPIES ? MLCC_ACTIVATION_NONE : act, c, ow_lo, ow_hi);
}

/* pixel_portable for the flat rows' border pixels (below), the `channels` (a constant once inlined) sums held in
 * registers across the taps instead of reloaded from the output at each. */
static FORCE_INLINE void pixel_few(const struct row *r, size_t ow, size_t channels)
{
    const struct mlcc_f32_conv_geometry *g = r->g;
    const ptrdiff_t iw0 = input_column(g, ow);
    size_t kw_lo, kw_hi;
    taps_inside(iw0, g->kernel[2], g->dilation[2], g->in[2], &kw_lo, &kw_hi);
    float sum[LANES / 2u];
    for (size_t c = 0; c < channels; ++c) sum[c] = r->bias != NULL ? r->bias[c] : 0.0f;
    for (size_t kd = r->kd_lo; kd < r->kd_hi; ++kd) {
        for (size_t kh = r->kh_lo; kh < r->kh_hi; ++kh) {
            const float *xr = input_row(r, kd, kh), *wr = weight_row(r, kd, kh);
            for (size_t kw = kw_lo; kw < kw_hi; ++kw) {
                const float *xp = xr + (size_t)(iw0 + (ptrdiff_t)(kw * g->dilation[2])) * channels;
                const float *wp = wr + kw * channels;
                for (size_t c = 0; c < channels; ++c) sum[c] += xp[c] * wp[c];
            }
        }
    }
    float *MLCC_RESTRICT yp = r->y + ow * channels;
    for (size_t c = 0; c < channels; ++c) yp[c] = sum[c];
    mlcc_f32_epilogue_apply(r->epilogue, 1, channels, yp, channels, r->pixel + ow, 0);
}

/* A border pixel of a flat row: channels divides LANES and is less than it, a power of two below it. */
static void pixel_flat(const struct row *r, size_t ow)
{
    switch (r->channels) {
    case 1: pixel_few(r, ow, 1); break;
    case 2: pixel_few(r, ow, 2); break;
    case 4: pixel_few(r, ow, 4); break;
    case 8: pixel_few(r, ow, 8); break;
    default: pixel_portable(r, ow, 0, r->channels);
    }
}

/* Fewer channels than a vector holds, LANES a multiple of them, stride 1 along w: the row's interior is one
 * run of pixels x channels, taken LANES floats (LANES / channels whole pixels) at a time against weights
 * repeated to the vector's width (wt: one vector per tap). */
#define FLAT_MAX_TAPS 64u

static FORCE_INLINE void tile_flat(const struct row *r, const mlcc_f32v *wt, mlcc_f32v b, size_t ow, size_t count)
{
    const struct mlcc_f32_conv_geometry *g = r->g;
    const size_t channels = r->channels, kw_step = g->dilation[2] * channels;
    const size_t iw0 = (size_t)input_column(g, ow);
    mlcc_f32v acc[TILE];
    for (size_t p = 0; p < count; ++p) acc[p] = b;
    for (size_t kd = r->kd_lo; kd < r->kd_hi; ++kd) {
        for (size_t kh = r->kh_lo; kh < r->kh_hi; ++kh) {
            const float *xr = input_row(r, kd, kh) + iw0 * channels;
            const mlcc_f32v *wr = wt + (kd * g->kernel[1] + kh) * g->kernel[2];
            for (size_t kw = 0; kw < g->kernel[2]; ++kw) {
                const float *xk = xr + kw * kw_step;
                for (size_t p = 0; p < count; ++p)
                    acc[p] = mlcc_f32v_fma(acc[p], mlcc_f32v_load(xk + p * LANES), wr[kw]);
            }
        }
    }
    const float *res = r->plan.residual != NULL ? r->plan.residual + (r->pixel + ow) * channels : NULL;
    finish(&r->plan, acc, count, r->y + ow * channels, LANES, res, LANES);
}

static void row_flat(const struct row *row, const mlcc_f32v *wt, mlcc_f32v b, size_t ow_lo, size_t ow_hi)
{
    const struct row r = *row;
    const size_t channels = r.channels, per = LANES / channels;
    size_t ow = 0;
    for (; ow < ow_lo; ++ow) pixel_flat(&r, ow);
    if (ow_hi - ow_lo >= per) {
        for (; ow + TILE * per <= ow_hi; ow += TILE * per) tile_flat(&r, wt, b, ow, TILE);
        for (; ow + per <= ow_hi; ow += per) tile_flat(&r, wt, b, ow, 1);
        if (ow < ow_hi) {  /* the last vector overlaps the one before it */
            tile_flat(&r, wt, b, ow_hi - per, 1);
            ow = ow_hi;
        }
        if (r.plan.post != POST_NONE) post_pass(&r, ow_lo, ow_hi, 0, 1);
    }
    for (; ow < ow_hi; ++ow) pixel_flat(&r, ow);
    for (ow = ow_hi; ow < r.g->out[2]; ++ow) pixel_flat(&r, ow);
}

/* tile_flat for a 3x3 window (one depth tap, dilation 1 along w) over `rows` input rows xr with the taps wv
 * (rows and count constants once inlined: the taps stay in registers for the whole row). */
static FORCE_INLINE void tile_flat_3x3(const struct row *r, const mlcc_f32v wv[3][3], mlcc_f32v b,
                                       const float *const xr[3], size_t rows, size_t ow, size_t count)
{
    const size_t channels = r->channels, first = (ow - r->g->pad[2]) * channels;
    mlcc_f32v acc[TILE];
    for (size_t p = 0; p < count; ++p) acc[p] = b;
    for (size_t i = 0; i < rows; ++i)
        for (size_t kw = 0; kw < 3; ++kw)
            for (size_t p = 0; p < count; ++p)
                acc[p] = mlcc_f32v_fma(acc[p], mlcc_f32v_load(xr[i] + first + kw * channels + p * LANES), wv[i][kw]);
    const float *res = r->plan.residual != NULL ? r->plan.residual + (r->pixel + ow) * channels : NULL;
    finish(&r->plan, acc, count, r->y + ow * channels, LANES, res, LANES);
}

/* row_flat for a 3x3 window: the row's taps loaded once, for `rows` (a constant in each copy) input rows. */
static FORCE_INLINE void row_flat_3x3_over(const struct row *row, const mlcc_f32v *wt, mlcc_f32v b, size_t rows,
                                           size_t ow_lo, size_t ow_hi)
{
    const struct row r = *row;
    const size_t channels = r.channels, per = LANES / channels;
    const float *xr[3] = {r.x, r.x, r.x};
    mlcc_f32v wv[3][3];
    for (size_t i = 0; i < rows; ++i) {
        xr[i] = input_row(&r, 0, r.kh_lo + i);
        for (size_t kw = 0; kw < 3; ++kw) wv[i][kw] = wt[(r.kh_lo + i) * 3 + kw];
    }
    size_t ow = 0;
    for (; ow < ow_lo; ++ow) pixel_flat(&r, ow);
    if (ow_hi - ow_lo >= per) {
        for (; ow + TILE * per <= ow_hi; ow += TILE * per) tile_flat_3x3(&r, wv, b, xr, rows, ow, TILE);
        for (; ow + per <= ow_hi; ow += per) tile_flat_3x3(&r, wv, b, xr, rows, ow, 1);
        if (ow < ow_hi) {  /* the last vector overlaps the one before it */
            tile_flat_3x3(&r, wv, b, xr, rows, ow_hi - per, 1);
            ow = ow_hi;
        }
        if (r.plan.post != POST_NONE) post_pass(&r, ow_lo, ow_hi, 0, 1);
    }
    for (; ow < ow_hi; ++ow) pixel_flat(&r, ow);
    for (ow = ow_hi; ow < r.g->out[2]; ++ow) pixel_flat(&r, ow);
}

static void row_flat_3x3(const struct row *r, const mlcc_f32v *wt, mlcc_f32v b, size_t ow_lo, size_t ow_hi)
{
    const size_t rows = r->kd_hi > r->kd_lo ? r->kh_hi - r->kh_lo : 0u;
    if (rows == 3)
        row_flat_3x3_over(r, wt, b, 3, ow_lo, ow_hi);
    else
        row_flat_3x3_over(r, wt, b, rows, ow_lo, ow_hi);
}

/* A vector of w[0 .. channels) repeated LANES / channels times. */
static mlcc_f32v repeated(const float *w, size_t channels)
{
    float lanes[LANES];
    for (size_t j = 0; j < LANES; ++j) lanes[j] = w[j % channels];
    return mlcc_f32v_load(lanes);
}

#endif /* MLCC_HAVE_F32V */

/* The kernel's path for this channel count and window. */
enum path { PORTABLE, CHANNELS, CHANNELS_3X3, CHANNELS_3X3_PADDED, FLAT, FLAT_3X3 };

void MLCC_ISA_NAME(mlcc_f32_dwconv_nhwc_rows)(const struct mlcc_f32_conv_geometry *g, size_t channels,
                                              const float *x, const float *w, const float *bias,
                                              float *MLCC_RESTRICT y, const struct mlcc_f32_epilogue *epilogue,
                                              size_t row0, size_t row1)
{
    /* the interior along w: output pixels whose every tap is inside the input */
    const size_t span = (g->kernel[2] - 1) * g->dilation[2];
    const size_t ow_lo = MLCC_MIN((g->pad[2] + g->stride[2] - 1) / g->stride[2], g->out[2]);
    size_t ow_hi = g->in[2] + g->pad[2] > span ? (g->in[2] + g->pad[2] - span - 1) / g->stride[2] + 1 : 0u;
    ow_hi = ow_hi < ow_lo ? ow_lo : MLCC_MIN(ow_hi, g->out[2]);
    enum path path = PORTABLE;
#if MLCC_HAVE_F32V
    const size_t taps = g->kernel[0] * g->kernel[1] * g->kernel[2];
    mlcc_f32v wt[FLAT_MAX_TAPS], b = mlcc_f32v_zero();
    if (channels >= LANES) {
        path = g->kernel[0] == 1 && g->kernel[1] == 3 && g->kernel[2] == 3 && g->dilation[2] == 1
                       && (g->stride[2] == 1 || g->stride[2] == 2)
                   ? CHANNELS_3X3
                   : CHANNELS;
        /* (WebAssembly's rows keep their copy per activation: not measured there) */
        if (path == CHANNELS_3X3 && !ACTIVATION_COPIES && g->stride[2] == 1 && g->pad[2] == 1
            && g->in[2] == g->out[2] && g->out[2] > BORDER_TILE_MAX)
            path = CHANNELS_3X3_PADDED;
    } else if (LANES % channels == 0 && g->stride[2] == 1 && taps <= FLAT_MAX_TAPS) {
        path = g->kernel[0] == 1 && g->kernel[1] == 3 && g->kernel[2] == 3 && g->dilation[2] == 1 ? FLAT_3X3 : FLAT;
        for (size_t t = 0; t < taps; ++t) wt[t] = repeated(w + t * channels, channels);
        if (bias != NULL) b = repeated(bias, channels);
    }
#endif
    struct row r = {g, channels, x, w, bias, y, 0, 0, 0, 0, 0, 0, 0, epilogue,
                    {NULL, 0, MLCC_ACTIVATION_NONE, 0.0f, 0.0f, POST_NONE}};
    if (epilogue != NULL) {
        const int vector_residual = epilogue->residual_cs == 1 && (path < FLAT || epilogue->residual_rs == channels);
        if (epilogue->residual != NULL && !vector_residual) {
            r.plan.post = POST_EPILOGUE;
        } else {
            r.plan.residual = epilogue->residual;
            r.plan.residual_rs = epilogue->residual_rs;
            if (epilogue->activation == MLCC_ACTIVATION_RELU || epilogue->activation == MLCC_ACTIVATION_CLIP) {
                r.plan.activation = epilogue->activation;
                r.plan.lo = epilogue->a;
                r.plan.hi = epilogue->b;
            } else if (epilogue->activation != MLCC_ACTIVATION_NONE) {
                r.plan.post = POST_ACTIVATION;
            }
        }
    }
    for (size_t out_row = row0; out_row < row1; ++out_row) {
        const size_t od = out_row / g->out[1], oh = out_row % g->out[1];
        r.id0 = (ptrdiff_t)(od * g->stride[0]) - (ptrdiff_t)g->pad[0];
        taps_inside(r.id0, g->kernel[0], g->dilation[0], g->in[0], &r.kd_lo, &r.kd_hi);
        {
            r.ih0 = (ptrdiff_t)(oh * g->stride[1]) - (ptrdiff_t)g->pad[1];
            taps_inside(r.ih0, g->kernel[1], g->dilation[1], g->in[1], &r.kh_lo, &r.kh_hi);
            r.pixel = (od * g->out[1] + oh) * g->out[2];
            r.y = y + r.pixel * channels;
            switch (path) {
#if MLCC_HAVE_F32V
            case CHANNELS:
            case CHANNELS_3X3:
            case CHANNELS_3X3_PADDED: {
                /* a last partial vector overlaps the one before it; rows with all three taps inside the
                 * input along h take row_3x3_padded where it applies */
                const size_t last = channels - LANES;
                const int padded = path == CHANNELS_3X3_PADDED && r.kd_hi > r.kd_lo && r.kh_hi - r.kh_lo == 3;
#if NARROW_CHANNELS_INNER || CHANNELS_INNER
                const size_t rows = r.kd_hi > r.kd_lo ? r.kh_hi - r.kh_lo : 0u;
#endif
#if NARROW_CHANNELS_INNER
                if (path == CHANNELS_3X3 && (rows == 2 || rows == 3) && g->stride[2] == 1 && g->pad[2] == 1
                    && g->in[2] == g->out[2] && g->out[2] >= 3 && g->out[2] <= BORDER_TILE_MAX) {
                    row_3x3_narrow(&r);
                    break;
                }
#endif
#if CHANNELS_INNER
                if (path != CHANNELS && (rows == 2 || rows == 3)
                    && (path == CHANNELS_3X3_PADDED || g->stride[2] == 2)) {
                    row_3x3_by_tiles(&r, path == CHANNELS_3X3_PADDED, ow_lo, ow_hi);
                    break;
                }
#endif
                for (size_t c = 0;; c = MLCC_MIN(c + LANES, last)) {
                    if (padded)
                        row_3x3_padded(&r, c);
                    else if (path != CHANNELS)
                        row_3x3(&r, c, ow_lo, ow_hi);
                    else
                        row_any(&r, c, ow_lo, ow_hi);
                    if (c == last) break;
                }
                break;
            }
            case FLAT:
                row_flat(&r, wt, b, ow_lo, ow_hi);
                break;
            case FLAT_3X3:
                row_flat_3x3(&r, wt, b, ow_lo, ow_hi);
                break;
#endif
            default:
                for (size_t ow = 0; ow < g->out[2]; ++ow) pixel_portable(&r, ow, 0, channels);
            }
        }
    }
}

void MLCC_ISA_NAME(mlcc_f32_dwconv_nhwc)(const struct mlcc_f32_conv_geometry *g, size_t channels,
                                         const float *x, const float *w, const float *bias,
                                         float *MLCC_RESTRICT y, const struct mlcc_f32_epilogue *epilogue)
{
    MLCC_ISA_NAME(mlcc_f32_dwconv_nhwc_rows)(g, channels, x, w, bias, y, epilogue, 0u, g->out[0] * g->out[1]);
}
