/* Checks one f32-gemm variant (VARIANT, a struct mlcc_f32_gemm_config) against mlcc_f32_gemm__reference at
 * the edges of its tile: m, n and k at exactly one tile, multiples, one less, one more, k = 1 and past the
 * k block, n past the few panels below which A is not packed and the 32 below which it is not broadcast; A
 * row-major with a padded row stride and transposed (column stride != 1), a padded ldc; every bias form, every residual form (full, broadcast
 * rows, per row, strided) and every activation. Twice: with the variant's blocking, and with a tiny one
 * (kc 16, mc two tiles, nc two panels) so that every block loop of the driver turns on small shapes. Then
 * columns of B alike must give columns of C alike, bit for bit, and B packed from its transpose as from itself. Prints one line per failing case and a summary; exits 1 on any failure. Built and run by
 * test_gemm_variants.py on each ISA (natively, under qemu-user, in wasmtime). */
#include <stdio.h>
#include <string.h>

#include "mlcc/kernels/f32-gemm.h"

#define A_ELEMS 65536u
#define B_ELEMS 131072u
#define NAME_OF(x) #x
#define NAME(x) NAME_OF(x)

static float a_buf[A_ELEMS], b_buf[B_ELEMS], packed[B_ELEMS + 64u * 1100u];
static float c_got[4096], c_want[4096], bias_buf[4096], residual_buf[8192];
static uint32_t rng_state = 12345u;

static float uniform(void)
{
    rng_state = rng_state * 1664525u + 1013904223u;
    return (float)(rng_state >> 8) / 8388608.0f - 1.0f;
}

static void fill(float *p, size_t count)
{
    for (size_t i = 0; i < count; ++i) p[i] = uniform();
}

static float absf(float x) { return x < 0.0f ? -x : x; }

/* The activations with their parameters, cycled through the cases. */
static const struct { enum mlcc_activation kind; float a, b; } activations[] = {
    {MLCC_ACTIVATION_NONE, 0.0f, 0.0f},        {MLCC_ACTIVATION_RELU, 0.0f, 0.0f},
    {MLCC_ACTIVATION_CLIP, -0.5f, 0.75f},      {MLCC_ACTIVATION_LEAKY_RELU, 0.1f, 0.0f},
    {MLCC_ACTIVATION_SIGMOID, 0.0f, 0.0f},     {MLCC_ACTIVATION_HARD_SIGMOID, 0.2f, 0.5f},
    {MLCC_ACTIVATION_HARD_SWISH, 0.0f, 0.0f},  {MLCC_ACTIVATION_SILU, 0.0f, 0.0f},
    {MLCC_ACTIVATION_TANH, 0.0f, 0.0f},        {MLCC_ACTIVATION_GELU_ERF, 0.0f, 0.0f},
    {MLCC_ACTIVATION_GELU_TANH, 0.0f, 0.0f},
};
#define ACTIVATIONS (sizeof activations / sizeof activations[0])

static int failures, cases;

static void check(const struct mlcc_f32_gemm_config *cfg, size_t m, size_t n, size_t k, int transposed,
                  int bias_form, int residual_form, size_t act, int with_epilogue)
{
    const size_t a_rs = transposed ? 1 : k + 3, a_cs = transposed ? m + 2 : 1, ldc = n + 5;
    const float alpha = (cases % 3 == 0) ? 0.5f : 1.0f, beta = (cases % 2 == 0) ? 1.0f : -1.5f;
    /* bias forms: none, one per column, one per row, full [m][n] */
    static const size_t bias_rs[4] = {0, 0, 1, 0}, bias_cs[4] = {0, 1, 0, 1};
    const size_t brs = bias_form == 3 ? n : bias_rs[bias_form], bcs = bias_cs[bias_form];
    /* residual forms: none, full [m][n + 2], one row for all, one per row, every other column */
    static const size_t res_rs[5] = {0, 0, 0, 1, 0}, res_cs[5] = {0, 1, 1, 0, 2};
    const size_t rrs = residual_form == 1 ? n + 2 : residual_form == 4 ? 2 * n : res_rs[residual_form];
    struct mlcc_f32_epilogue epilogue = {activations[act].kind, activations[act].a, activations[act].b,
                                         residual_form ? residual_buf : NULL, rrs, res_cs[residual_form]};
    const struct mlcc_f32_epilogue *e = with_epilogue ? &epilogue : NULL;
    const float *bias = bias_form ? bias_buf : NULL;
    ++cases;
    fill(a_buf, (transposed ? k * a_cs : m * a_rs));
    fill(b_buf, k * n);
    fill(bias_buf, m * n);
    fill(residual_buf, 2 * m * n + 2 * n);
    for (size_t i = 0; i < m * ldc; ++i) c_got[i] = c_want[i] = 99.0f;
    mlcc_f32_gemm_pack_b(k, n, b_buf, n, 1, cfg->nr, packed);
    mlcc_f32_gemm(cfg, m, n, k, a_buf, a_rs, a_cs, packed, c_got, ldc, alpha, bias, brs, bcs, beta, e);
    mlcc_f32_gemm__reference(m, n, k, a_buf, a_rs, a_cs, b_buf, n, 1, c_want, ldc, alpha, bias, brs, bcs, beta, e);
    for (size_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < ldc; ++j) {
            float scale = 1.0f;  /* the magnitude the sum's rounding error scales with */
            if (j < n) {
                for (size_t p = 0; p < k; ++p) scale += absf(a_buf[i * a_rs + p * a_cs] * b_buf[p * n + j]);
                scale += 4.0f;  /* bias and residual are below 1.5 in magnitude */
            }
            const float got = c_got[i * ldc + j], want = c_want[i * ldc + j];
            if (!(absf(got - want) <= 1e-5f * scale)) {
                if (failures < 20)
                    printf("FAIL m=%zu n=%zu k=%zu transposed=%d bias=%d residual=%d activation=%zu epilogue=%d: "
                           "c[%zu][%zu] = %g, reference %g\n", m, n, k, transposed, bias_form, residual_form, act,
                           with_epilogue, i, j, (double)got, (double)want);
                ++failures;
                return;
            }
        }
    }
}

/* Columns of B alike give columns of C alike, bit for bit, in every row: each row's columns are all summed in
 * one order, whichever kernel and panel grouping they fall to (a network with constant weights, as the zoo
 * ships them, must not tell its classes apart by rounding). */
static void check_equal_columns(const struct mlcc_f32_gemm_config *cfg)
{
    const size_t nr = cfg->nr, ms[] = {1, 2, cfg->mr + 1}, ns[] = {nr + 1, 4 * nr + 5, 9 * nr, 33 * nr + 3};
    for (size_t im = 0; im < sizeof ms / sizeof ms[0]; ++im)
        for (size_t in = 0; in < sizeof ns / sizeof ns[0]; ++in) {
            const size_t m = ms[im], n = ns[in], k = 67;
            if (k * n > B_ELEMS || m * n > 4096) continue;
            ++cases;
            fill(a_buf, m * k);
            for (size_t q = 0; q < k; ++q) {
                const float v = uniform();
                for (size_t j = 0; j < n; ++j) b_buf[q * n + j] = v;
            }
            mlcc_f32_gemm_pack_b(k, n, b_buf, n, 1, nr, packed);
            mlcc_f32_gemm(cfg, m, n, k, a_buf, k, 1, packed, c_got, n, 1.0f, NULL, 0, 0, 1.0f, NULL);
            for (size_t i = 0; i < m; ++i)
                for (size_t j = 1; j < n; ++j)
                    if (c_got[i * n + j] != c_got[i * n]) {
                        if (failures < 20)
                            printf("FAIL equal columns m=%zu n=%zu: c[%zu][%zu] = %.9g, c[%zu][0] = %.9g\n", m, n, i, j,
                                   (double)c_got[i * n + j], i, (double)c_got[i * n]);
                        ++failures;
                        i = m;
                        break;
                    }
        }
}

/* B packed from its transpose (columns contiguous over k, b_rs 1: attention's K^T) gives the panels of B
 * packed row by row, bit for bit: k past each step of 4 of SIMD128's transposes, n with a short panel. */
static void check_pack_transposed(const struct mlcc_f32_gemm_config *cfg)
{
    static float transposed[B_ELEMS], want[B_ELEMS + 64u * 1100u];
    const size_t nr = cfg->nr, ks[] = {1, 3, 4, 7, 67}, ns[] = {nr - 1, nr, 3 * nr + 2};
    for (size_t ik = 0; ik < sizeof ks / sizeof ks[0]; ++ik)
        for (size_t in = 0; in < sizeof ns / sizeof ns[0]; ++in) {
            const size_t k = ks[ik], n = ns[in], ld = k + 1, floats = (n + nr - 1) / nr * nr * k;
            ++cases;
            fill(b_buf, k * n);
            for (size_t p = 0; p < k; ++p)
                for (size_t j = 0; j < n; ++j) transposed[j * ld + p] = b_buf[p * n + j];
            mlcc_f32_gemm_pack_b(k, n, b_buf, n, 1, nr, want);
            mlcc_f32_gemm_pack_b(k, n, transposed, 1, ld, nr, packed);
            if (memcmp(packed, want, floats * sizeof(float)) != 0) {
                if (failures < 20) printf("FAIL pack_b of B transposed k=%zu n=%zu\n", k, n);
                ++failures;
            }
        }
}

static void check_all(const struct mlcc_f32_gemm_config *cfg)
{
    const size_t mr = cfg->mr, nr = cfg->nr, kc = cfg->kc;
    const size_t ms[] = {1, mr - 1, mr, mr + 1, 2 * mr, 3 * mr + 2};
    /* nr + nr / 2: a right-edge tile of whole vectors where the tile has two or more (its own path); 32 * nr + 3:
     * A packed with each element broadcast, for a variant that asks; 3 * nr + 5 and 4 * nr + 5: a row kernel's
     * panels streamed together, the last short, then one short panel alone */
    const size_t ns[] = {1, nr - 1, nr, nr + 1, nr + nr / 2, 2 * nr + 3, 3 * nr + 5, 4 * nr + 5, 32 * nr + 3};
    /* k past each remainder of a row kernel's unroll by 4 (2, 7, kc + 3 with kc a multiple of 4) */
    const size_t ks[] = {1, 2, 7, 64, kc + 3};
    size_t act = 0;
    for (size_t im = 0; im < sizeof ms / sizeof ms[0]; ++im)
        for (size_t in = 0; in < sizeof ns / sizeof ns[0]; ++in)
            for (size_t ik = 0; ik < sizeof ks / sizeof ks[0]; ++ik) {
                const size_t m = ms[im], n = ns[in], k = ks[ik];
                if (k > kc && (im % 2 == 0 || in % 2 == 0)) continue;  /* past the k block: a few shapes do */
                if ((m + 2) * (k + 3) > A_ELEMS || k * n > B_ELEMS || m * (n + 5) > 4096) continue;
                for (int transposed = 0; transposed < 2; ++transposed)
                    for (int form = 0; form < 5; ++form, act = (act + 1) % ACTIVATIONS)
                        check(cfg, m, n, k, transposed, form % 4, form, act, form != 0 || transposed);
            }
}

int main(void)
{
    const struct mlcc_f32_gemm_config *cfg = &VARIANT;
    check_all(cfg);
    check_all(&MLCC_F32_GEMM_BLOCKED(VARIANT, 16u, 2u * cfg->mr, 2u * cfg->nr));
    check_equal_columns(cfg);
    check_pack_transposed(cfg);
    printf("%s: %d cases, %d failures\n", NAME(VARIANT), cases, failures);
    return failures != 0;
}
