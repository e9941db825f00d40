/* Checks the SIMD forms of layer normalisation (f32-norm), of softmax and log-softmax along rows and
 * strided (f32-softmax) and the f32-vmath array functions against their scalar references: row lengths and inner sizes around the lane count
 * (1 to 2 * 16 + 3) and a transformer's 384, a large common offset (the two-pass variance), a -inf score,
 * bias or none. Prints one line per failing case and a summary; exits 1 on any failure. Built and
 * run by test_families.py (f32-norm/manifest.toml). */
#include <math.h>
#include <stdio.h>

#include "edges.h"
#include "mlcc/kernels/f32-norm.h"
#include "mlcc/kernels/f32-softmax.h"
#include "mlcc/kernels/f32-vmath.h"

#define ELEMS 8192u

static float x[ELEMS], scale[ELEMS], bias[ELEMS], got[ELEMS], want[ELEMS], work[2u * ELEMS];

/* |got - want| <= atol + rtol |want|, NaN where NaN */
static void compare(const char *what, size_t a, size_t b, size_t count, float rtol, float atol)
{
    cases += 1;
    for (size_t i = 0; i < count; ++i) {
        const int bad = isnan(want[i]) ? !isnan(got[i])
                                       : got[i] != want[i] && !(fabsf(got[i] - want[i]) <= atol + rtol * fabsf(want[i]));
        if (bad) {
            printf("%s %zu %zu: [%zu] %.9g, want %.9g\n", what, a, b, i, got[i], want[i]);
            failures += 1;
            return;
        }
    }
}

static void fill(size_t count, float offset, float spread)
{
    for (size_t i = 0; i < count; ++i) x[i] = offset + spread * uniform();
}

int main(void)
{
    static const size_t lengths[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 35, 64, 67, 128, 384};
    const size_t count = sizeof lengths / sizeof lengths[0];
    for (size_t i = 0; i < ELEMS; ++i) {
        scale[i] = 0.5f + uniform();
        bias[i] = uniform();
    }
    for (size_t a = 0; a < count; ++a) {
        const size_t n = lengths[a], rows = 3;
        for (int with_bias = 0; with_bias < 2; ++with_bias) {
            fill(rows * n, with_bias ? 1000.0f : 0.0f, 4.0f);
            MLCC_ISA_NAME(mlcc_f32_norm_layer)(rows, n, x, scale, with_bias ? bias : NULL, 1e-5f, got);
            mlcc_f32_norm_layer__reference(rows, n, x, scale, with_bias ? bias : NULL, 1e-5f, want);
            /* around 1000 the mean itself is only good to ~1e-3 (either summation order) */
            compare("layer_norm", n, (size_t)with_bias, rows * n, 1e-5f, with_bias ? 2e-3f : 1e-5f);
        }
        fill(rows * n, 0.0f, 20.0f);
        x[n] = -INFINITY;  /* a masked score */
        MLCC_ISA_NAME(mlcc_f32_softmax_rows)(rows, n, x, got);
        mlcc_f32_softmax_rows__reference(rows, n, x, want);
        compare("softmax_rows", n, 0, rows * n, 1e-5f, 1e-7f);
        MLCC_ISA_NAME(mlcc_f32_logsoftmax_rows)(rows, n, x, got);
        mlcc_f32_logsoftmax_rows__reference(rows, n, x, want);
        compare("logsoftmax_rows", n, 0, rows * n, 1e-5f, 1e-5f);
        for (size_t b = 0; b < count && lengths[b] * n * 2 <= ELEMS; ++b) {
            const size_t inner = lengths[b], outer = 2;
            if (outer * n * inner > ELEMS) continue;
            fill(outer * n * inner, 0.0f, 20.0f);
            MLCC_ISA_NAME(mlcc_f32_softmax_strided)(outer, n, inner, x, got, work);
            mlcc_f32_softmax_strided__reference(outer, n, inner, x, want, work);
            compare("softmax_strided", n, inner, outer * n * inner, 1e-5f, 1e-7f);
            MLCC_ISA_NAME(mlcc_f32_logsoftmax_strided)(outer, n, inner, x, got, work);
            mlcc_f32_logsoftmax_strided__reference(outer, n, inner, x, want, work);
            compare("logsoftmax_strided", n, inner, outer * n * inner, 1e-5f, 1e-5f);
        }
    }
    for (size_t a = 0; a < count; ++a) {  /* vector lanes and tails against the reference forms, in place */
        const size_t n = lengths[a];
        fill(n, 0.0f, 6.0f);
#define CHECK_VMATH(fn)                                                         \
        mlcc_f32_vmath_##fn##__reference(n, x, want);                           \
        for (size_t i = 0; i < n; ++i) got[i] = x[i];                           \
        MLCC_ISA_NAME(mlcc_f32_vmath_##fn)(n, got, got);                        \
        compare("vmath_" #fn, n, 0, n, 1e-6f, 2e-6f); /* GELUs: 2.5e-7 max(|x|, 1) */
        CHECK_VMATH(exp)
        CHECK_VMATH(sigmoid)
        CHECK_VMATH(tanh)
        CHECK_VMATH(erf)
        CHECK_VMATH(gelu_erf)
        CHECK_VMATH(gelu_tanh)
    }
    printf("%d of %d cases differ\n", failures, cases);
    return failures != 0;
}
