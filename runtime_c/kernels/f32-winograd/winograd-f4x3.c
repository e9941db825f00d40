/* f32-winograd F(4x4, 3x3): the input and output transforms, as matrices one channel at a time (the
 * oracles) and factored on the SIMD shim with the channels as the vector lanes. A target without a shim, and
 * the channels past the last whole vector, take the matrix form. */
#include "mlcc/kernels/f32-winograd.h"
#include "mlcc/simd.h"

#if MLCC_HAVE_F32V
#include "mlcc/activation-simd.h"
#endif

#define ALPHA 6u  /* points per side: a 4-pixel output side plus 3 - 1 */
#define OUT 4u

/* B^T (the input transform) and A^T (the output transform) for the points 0, 1, -1, 2, -2 and infinity. */
static const float input_bt[ALPHA][ALPHA] = {
    {4.0f, 0.0f, -5.0f, 0.0f, 1.0f, 0.0f},
    {0.0f, -4.0f, -4.0f, 1.0f, 1.0f, 0.0f},
    {0.0f, 4.0f, -4.0f, -1.0f, 1.0f, 0.0f},
    {0.0f, -2.0f, -1.0f, 2.0f, 1.0f, 0.0f},
    {0.0f, 2.0f, -1.0f, -2.0f, 1.0f, 0.0f},
    {0.0f, 4.0f, 0.0f, -5.0f, 0.0f, 1.0f},
};
static const float output_at[OUT][ALPHA] = {
    {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 0.0f},
    {0.0f, 1.0f, -1.0f, 2.0f, -2.0f, 0.0f},
    {0.0f, 1.0f, 1.0f, 4.0f, 4.0f, 0.0f},
    {0.0f, 1.0f, -1.0f, 8.0f, -8.0f, 1.0f},
};

/* Where tile t lies: its first output row and column, and the input row and column of its patch's first
 * pixel (negative in the padding). */
struct tile {
    size_t oh, ow;
    ptrdiff_t ih, iw;
};

static struct tile tile_at(const struct mlcc_f32_conv_geometry *g, size_t t)
{
    const size_t tiles_w = (g->out[2] + OUT - 1) / OUT;
    struct tile tile;
    tile.oh = t / tiles_w * OUT;
    tile.ow = t % tiles_w * OUT;
    tile.ih = (ptrdiff_t)tile.oh - (ptrdiff_t)g->pad[1];
    tile.iw = (ptrdiff_t)tile.ow - (ptrdiff_t)g->pad[2];
    return tile;
}

/* Tile t's patch for a piece of the kernel (see mlcc_f32_winograd_input__<isa>): PIECE_STEP taps further down
 * for pieces 2 and 3, further right for 1 and 3. */
#define PIECE_STEP 3
static struct tile patch_at(const struct mlcc_f32_conv_geometry *g, size_t t, size_t piece)
{
    struct tile tile = tile_at(g, t);
    tile.ih += (ptrdiff_t)(PIECE_STEP * (piece / 2));
    tile.iw += (ptrdiff_t)(PIECE_STEP * (piece % 2));
    return tile;
}

/* The input pixel at (ih, iw) (x_pitch floats apart), or NULL in the padding or past the image. */
static const float *input_pixel(const struct mlcc_f32_conv_geometry *g, size_t x_pitch, const float *x,
                                ptrdiff_t ih, ptrdiff_t iw)
{
    if (ih < 0 || iw < 0 || (size_t)ih >= g->in[1] || (size_t)iw >= g->in[2]) return NULL;
    return x + ((size_t)ih * g->in[2] + (size_t)iw) * x_pitch;
}

static void input_channels(const struct mlcc_f32_conv_geometry *g, size_t piece, size_t channels, const float *x,
                           size_t x_pitch, size_t t0, size_t nt, float *MLCC_RESTRICT v, size_t point_stride,
                           size_t tile_stride, size_t c0)
{
    for (size_t t = 0; t < nt; ++t) {
        const struct tile tile = patch_at(g, t0 + t, piece);
        for (size_t c = c0; c < channels; ++c) {
            float d[ALPHA][ALPHA], db[ALPHA][ALPHA];
            for (size_t i = 0; i < ALPHA; ++i)
                for (size_t j = 0; j < ALPHA; ++j) {
                    const float *p = input_pixel(g, x_pitch, x, tile.ih + (ptrdiff_t)i, tile.iw + (ptrdiff_t)j);
                    d[i][j] = p != NULL ? p[c] : 0.0f;
                }
            for (size_t i = 0; i < ALPHA; ++i)  /* d B */
                for (size_t l = 0; l < ALPHA; ++l) {
                    float s = 0.0f;
                    for (size_t j = 0; j < ALPHA; ++j) s += d[i][j] * input_bt[l][j];
                    db[i][l] = s;
                }
            for (size_t k = 0; k < ALPHA; ++k)  /* B^T (d B) */
                for (size_t l = 0; l < ALPHA; ++l) {
                    float s = 0.0f;
                    for (size_t i = 0; i < ALPHA; ++i) s += input_bt[k][i] * db[i][l];
                    v[(k * ALPHA + l) * point_stride + t * tile_stride + c] = s;
                }
        }
    }
}

static void output_channels(const struct mlcc_f32_conv_geometry *g, size_t channels, const float *m,
                            size_t point_stride, size_t t0, size_t nt, const float *bias, float *MLCC_RESTRICT y,
                            size_t y_pitch, const struct mlcc_f32_epilogue *epilogue, size_t c0)
{
    for (size_t t = 0; t < nt; ++t) {
        const struct tile tile = tile_at(g, t0 + t);
        for (size_t c = c0; c < channels; ++c) {
            float ma[ALPHA][OUT];
            for (size_t i = 0; i < ALPHA; ++i)  /* M A */
                for (size_t j = 0; j < OUT; ++j) {
                    float s = 0.0f;
                    for (size_t l = 0; l < ALPHA; ++l)
                        s += m[(i * ALPHA + l) * point_stride + t * channels + c] * output_at[j][l];
                    ma[i][j] = s;
                }
            for (size_t i = 0; i < OUT && tile.oh + i < g->out[1]; ++i)  /* A^T (M A) */
                for (size_t j = 0; j < OUT && tile.ow + j < g->out[2]; ++j) {
                    float s = bias != NULL ? bias[c] : 0.0f;
                    for (size_t k = 0; k < ALPHA; ++k) s += output_at[i][k] * ma[k][j];
                    const size_t pixel = (tile.oh + i) * g->out[2] + tile.ow + j;
                    mlcc_f32_epilogue_apply(epilogue, 1, 1, &s, 1, pixel, c);
                    y[pixel * y_pitch + c] = s;
                }
        }
    }
}

void mlcc_f32_winograd_phase(const struct mlcc_f32_conv_geometry *g, size_t phase, size_t channels, const float *x,
                             size_t x_pitch, float *MLCC_RESTRICT dst)
{
    const size_t rows = g->out[1] + 2, cols = g->out[2] + 2;
    for (size_t u = 0; u < rows; ++u)
        for (size_t v = 0; v < cols; ++v) {
            const float *p = input_pixel(g, x_pitch, x, (ptrdiff_t)(2 * u + phase / 2) - (ptrdiff_t)g->pad[1],
                                         (ptrdiff_t)(2 * v + phase % 2) - (ptrdiff_t)g->pad[2]);
            float *d = dst + (u * cols + v) * channels;
            if (p != NULL) {
                for (size_t c = 0; c < channels; ++c) d[c] = p[c];
            } else {
                for (size_t c = 0; c < channels; ++c) d[c] = 0.0f;
            }
        }
}

/* G for the points 0, 1, -1, 2, -2 and infinity: U = G g G^T (the weight transform). */
static const double weight_g[ALPHA][3] = {
    {1.0 / 4.0, 0.0, 0.0},
    {-1.0 / 6.0, -1.0 / 6.0, -1.0 / 6.0},
    {-1.0 / 6.0, 1.0 / 6.0, -1.0 / 6.0},
    {1.0 / 24.0, 1.0 / 12.0, 1.0 / 6.0},
    {1.0 / 24.0, -1.0 / 12.0, 1.0 / 6.0},
    {0.0, 0.0, 1.0},
};

/* Tap (i, j) of a 3x3 piece of the kernel (see the header): the 3x3 kernel itself, or of a 5x5 one
 * zero-padded to 6x6 the taps 3 apart (stride 1) or of one parity (stride 2). */
static float piece_tap(const float *w, size_t kernel, size_t stride, size_t piece, size_t i, size_t j)
{
    if (kernel == 3u) return w[i * 3u + j];
    const size_t row = stride == 2u ? piece / 2u + 2u * i : PIECE_STEP * (piece / 2u) + i;
    const size_t col = stride == 2u ? piece % 2u + 2u * j : PIECE_STEP * (piece % 2u) + j;
    return row < 5u && col < 5u ? w[row * 5u + col] : 0.0f;
}

void mlcc_f32_winograd_transform_weights(const float *w, size_t groups, size_t out_channels, size_t in_channels,
                                         size_t kernel, size_t stride, size_t nr, float *MLCC_RESTRICT u)
{
    const size_t pieces = kernel == 5u ? 4u : 1u, k = pieces * in_channels;
    const size_t columns = (out_channels + nr - 1u) / nr * nr, point_floats = columns * k;
    for (size_t group = 0; group < groups; ++group) {
        float *const u_group = u + group * MLCC_F32_WINOGRAD_POINTS * point_floats;
        for (size_t o = 0; o < columns; ++o)
            for (size_t kk = 0; kk < k; ++kk) {
                float *const dst = u_group + o / nr * k * nr + kk * nr + o % nr;
                if (o >= out_channels) {  /* the last panel's padding */
                    for (size_t point = 0; point < MLCC_F32_WINOGRAD_POINTS; ++point) dst[point * point_floats] = 0.0f;
                    continue;
                }
                const size_t piece = kk / in_channels, c = kk % in_channels;
                const float *const taps = w + ((group * out_channels + o) * in_channels + c) * kernel * kernel;
                double g[3][3];
                for (size_t i = 0; i < 3u; ++i)
                    for (size_t j = 0; j < 3u; ++j) g[i][j] = (double)piece_tap(taps, kernel, stride, piece, i, j);
                for (size_t i = 0; i < ALPHA; ++i)
                    for (size_t l = 0; l < ALPHA; ++l) {
                        double sum = 0.0;
                        for (size_t a = 0; a < 3u; ++a)
                            for (size_t b = 0; b < 3u; ++b) sum += weight_g[i][a] * g[a][b] * weight_g[l][b];
                        dst[(i * ALPHA + l) * point_floats] = (float)sum;
                    }
            }
    }
}

void mlcc_f32_winograd_input__reference(const struct mlcc_f32_conv_geometry *g, size_t piece, size_t channels,
                                        const float *x, size_t x_pitch, size_t t0, size_t nt,
                                        float *MLCC_RESTRICT v, size_t point_stride, size_t tile_stride)
{
    input_channels(g, piece, channels, x, x_pitch, t0, nt, v, point_stride, tile_stride, 0);
}

void mlcc_f32_winograd_output__reference(const struct mlcc_f32_conv_geometry *g, size_t channels, const float *m,
                                         size_t point_stride, size_t t0, size_t nt, const float *bias,
                                         float *MLCC_RESTRICT y, size_t y_pitch,
                                         const struct mlcc_f32_epilogue *epilogue)
{
    output_channels(g, channels, m, point_stride, t0, nt, bias, y, y_pitch, epilogue, 0);
}

#if MLCC_HAVE_F32V

#define LANES MLCC_F32V_LANES

#if defined(__GNUC__)
#define FORCE_INLINE inline __attribute__((always_inline))
#else
#define FORCE_INLINE inline
#endif

/* r = B^T d for six vectors d[0], d[step], ..: B^T's rows factored into shared sums. */
static FORCE_INLINE void input_1d(const mlcc_f32v *d, size_t step, mlcc_f32v *r, size_t r_step)
{
    const mlcc_f32v d0 = d[0], d1 = d[step], d2 = d[2 * step], d3 = d[3 * step], d4 = d[4 * step],
                    d5 = d[5 * step];
    const mlcc_f32v four = mlcc_f32v_splat(4.0f), two = mlcc_f32v_splat(2.0f), minus5 = mlcc_f32v_splat(-5.0f);
    const mlcc_f32v d4_d2 = mlcc_f32v_sub(d4, d2);
    r[0] = mlcc_f32v_fma(mlcc_f32v_fma(d4, d2, minus5), d0, four);
    r[1 * r_step] = mlcc_f32v_sub(mlcc_f32v_add(d3, d4), mlcc_f32v_mul(four, mlcc_f32v_add(d1, d2)));
    r[2 * r_step] = mlcc_f32v_fma(mlcc_f32v_sub(d4, d3), four, mlcc_f32v_sub(d1, d2));
    r[3 * r_step] = mlcc_f32v_fma(d4_d2, two, mlcc_f32v_sub(d3, d1));
    r[4 * r_step] = mlcc_f32v_fma(d4_d2, two, mlcc_f32v_sub(d1, d3));
    r[5 * r_step] = mlcc_f32v_fma(mlcc_f32v_fma(d5, d3, minus5), d1, four);
}

/* o = A^T m for six vectors m[0], m[step], ..: four outputs. */
static FORCE_INLINE void output_1d(const mlcc_f32v *m, size_t step, mlcc_f32v *o, size_t o_step)
{
    const mlcc_f32v m0 = m[0], m1 = m[step], m2 = m[2 * step], m3 = m[3 * step], m4 = m[4 * step],
                    m5 = m[5 * step];
    const mlcc_f32v sum12 = mlcc_f32v_add(m1, m2), diff12 = mlcc_f32v_sub(m1, m2);
    const mlcc_f32v sum34 = mlcc_f32v_add(m3, m4), diff34 = mlcc_f32v_sub(m3, m4);
    o[0] = mlcc_f32v_add(mlcc_f32v_add(m0, sum12), sum34);
    o[1 * o_step] = mlcc_f32v_fma(diff12, diff34, mlcc_f32v_splat(2.0f));
    o[2 * o_step] = mlcc_f32v_fma(sum12, sum34, mlcc_f32v_splat(4.0f));
    o[3 * o_step] = mlcc_f32v_add(mlcc_f32v_fma(diff12, diff34, mlcc_f32v_splat(8.0f)), m5);
}

/* One tile's patch at channel c: the whole patch inside the input (edge 0) reads every pixel unchecked. */
static FORCE_INLINE void input_tile(const struct mlcc_f32_conv_geometry *g, size_t x_pitch, const float *x,
                                    struct tile tile, size_t c, float *MLCC_RESTRICT v, size_t point_stride,
                                    int edge)
{
    mlcc_f32v d[ALPHA][ALPHA], db[ALPHA][ALPHA];
    for (size_t i = 0; i < ALPHA; ++i) {
        for (size_t j = 0; j < ALPHA; ++j) {
            const float *p = edge ? input_pixel(g, x_pitch, x, tile.ih + (ptrdiff_t)i, tile.iw + (ptrdiff_t)j)
                                  : x + (((size_t)tile.ih + i) * g->in[2] + (size_t)tile.iw + j) * x_pitch;
            d[i][j] = p != NULL ? mlcc_f32v_load(p + c) : mlcc_f32v_zero();
        }
        input_1d(d[i], 1, db[i], 1);
    }
    for (size_t l = 0; l < ALPHA; ++l) input_1d(&db[0][l], ALPHA, &d[0][l], ALPHA);
    for (size_t k = 0; k < ALPHA; ++k)
        for (size_t l = 0; l < ALPHA; ++l) mlcc_f32v_store(v + (k * ALPHA + l) * point_stride + c, d[k][l]);
}

void MLCC_ISA_NAME(mlcc_f32_winograd_input)(const struct mlcc_f32_conv_geometry *g, size_t piece, size_t channels,
                                            const float *x, size_t x_pitch, size_t t0, size_t nt, float *MLCC_RESTRICT v,
                                            size_t point_stride, size_t tile_stride)
{
    const size_t whole = channels / LANES * LANES;
    for (size_t t = 0; t < nt; ++t) {
        const struct tile tile = patch_at(g, t0 + t, piece);
        const int edge = tile.ih < 0 || tile.iw < 0 || (size_t)tile.ih + ALPHA > g->in[1]
                         || (size_t)tile.iw + ALPHA > g->in[2];
        float *vt = v + t * tile_stride;
        if (edge) {
            for (size_t c = 0; c < whole; c += LANES) input_tile(g, x_pitch, x, tile, c, vt, point_stride, 1);
        } else {
            for (size_t c = 0; c < whole; c += LANES) input_tile(g, x_pitch, x, tile, c, vt, point_stride, 0);
        }
    }
    if (whole < channels) input_channels(g, piece, channels, x, x_pitch, t0, nt, v, point_stride, tile_stride, whole);
}

/* How the vector code applies an epilogue: in registers (a residual read a vector at a time, an activation
 * with a vector form), or after storing the pixel's vector, element by element. */
static int epilogue_in_registers(const struct mlcc_f32_epilogue *e)
{
    if (e == NULL) return 1;
    mlcc_f32v probe = mlcc_f32v_zero();
    return (e->residual == NULL || e->residual_cs == 1) && mlcc_f32v_activate(e, &probe, 1);
}

void MLCC_ISA_NAME(mlcc_f32_winograd_output)(const struct mlcc_f32_conv_geometry *g, size_t channels, const float *m,
                                             size_t point_stride, size_t t0, size_t nt, const float *bias,
                                             float *MLCC_RESTRICT y, size_t y_pitch, const struct mlcc_f32_epilogue *epilogue)
{
    const size_t whole = channels / LANES * LANES;
    const int in_registers = epilogue_in_registers(epilogue);
    const float *residual = epilogue != NULL ? epilogue->residual : NULL;
    for (size_t t = 0; t < nt; ++t) {
        const struct tile tile = tile_at(g, t0 + t);
        const size_t rows = MLCC_MIN(OUT, g->out[1] - tile.oh), cols = MLCC_MIN(OUT, g->out[2] - tile.ow);
        for (size_t c = 0; c < whole; c += LANES) {
            mlcc_f32v mv[ALPHA][ALPHA], ma[ALPHA][OUT], out[OUT][OUT];
            for (size_t i = 0; i < ALPHA; ++i) {
                for (size_t l = 0; l < ALPHA; ++l)
                    mv[i][l] = mlcc_f32v_load(m + (i * ALPHA + l) * point_stride + t * channels + c);
                output_1d(mv[i], 1, ma[i], 1);
            }
            for (size_t j = 0; j < OUT; ++j) output_1d(&ma[0][j], OUT, &out[0][j], OUT);
            const mlcc_f32v b = bias != NULL ? mlcc_f32v_load(bias + c) : mlcc_f32v_zero();
            for (size_t i = 0; i < OUT; ++i)
                for (size_t j = 0; j < OUT; ++j) out[i][j] = mlcc_f32v_add(out[i][j], b);
            if (in_registers && epilogue != NULL) {  /* the pixels past the output are computed, not stored */
                if (residual != NULL)
                    for (size_t i = 0; i < rows; ++i)
                        for (size_t j = 0; j < cols; ++j) {
                            const size_t pixel = (tile.oh + i) * g->out[2] + tile.ow + j;
                            out[i][j] = mlcc_f32v_add(out[i][j], mlcc_f32v_load(residual + pixel * epilogue->residual_rs + c));
                        }
                mlcc_f32v_activate(epilogue, &out[0][0], OUT * OUT);
            }
            for (size_t i = 0; i < rows; ++i) {
                for (size_t j = 0; j < cols; ++j) {
                    const size_t pixel = (tile.oh + i) * g->out[2] + tile.ow + j;
                    mlcc_f32v sum = out[i][j];
                    if (!in_registers) {  /* on a copy: y may be the residual itself */
                        float lanes[LANES];
                        mlcc_f32v_store(lanes, sum);
                        mlcc_f32_epilogue_apply(epilogue, 1, LANES, lanes, LANES, pixel, c);
                        sum = mlcc_f32v_load(lanes);
                    }
                    mlcc_f32v_store(y + pixel * y_pitch + c, sum);
                }
            }
        }
    }
    if (whole < channels) output_channels(g, channels, m, point_stride, t0, nt, bias, y, y_pitch, epilogue, whole);
}

#else /* no SIMD shim: the matrix forms */

void MLCC_ISA_NAME(mlcc_f32_winograd_input)(const struct mlcc_f32_conv_geometry *g, size_t piece, size_t channels,
                                            const float *x, size_t x_pitch, size_t t0, size_t nt, float *MLCC_RESTRICT v,
                                            size_t point_stride, size_t tile_stride)
{
    input_channels(g, piece, channels, x, x_pitch, t0, nt, v, point_stride, tile_stride, 0);
}

void MLCC_ISA_NAME(mlcc_f32_winograd_output)(const struct mlcc_f32_conv_geometry *g, size_t channels, const float *m,
                                             size_t point_stride, size_t t0, size_t nt, const float *bias,
                                             float *MLCC_RESTRICT y, size_t y_pitch, const struct mlcc_f32_epilogue *epilogue)
{
    output_channels(g, channels, m, point_stride, t0, nt, bias, y, y_pitch, epilogue, 0);
}

#endif
