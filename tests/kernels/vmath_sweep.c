/* Measures the vector math (mlcc/simd/math.h, on the shim mlcc/simd.h picks for the target) and its scalar
 * forms (mlcc/simd/math-scalar.h) against the C library in double: every STRIDE-th float bit pattern of the
 * whole range (argv[1], default 997), dense uniform sweeps of [-12, 12] (argv[2] points, default 200001)
 * and of each function's saturation edges (half as many), and the special values. Prints, per function and form, the largest error in result ulps (where
 * the exact result and x are normal floats), the largest absolute error where either is subnormal, the largest
 * absolute error relative to max(|x|, 1) (the GELUs' measure), and how many special values came out
 * wrong. Built and run by test_vmath.py on each ISA. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mlcc/simd.h"
#if MLCC_HAVE_F32V
#include "mlcc/simd/math.h"
#else
#include "mlcc/simd/math-scalar.h"
#endif

#define CHUNK 4096u

enum { EXP, SIGMOID, TANH, ERF, GELU_ERF, GELU_TANH, EXP_NONPOSITIVE, FUNCTIONS };
static const char *const names[FUNCTIONS] = {"exp", "sigmoid", "tanh", "erf", "gelu_erf", "gelu_tanh", "exp_nonpositive"};

/* exp_nonpositive is measured where it is defined, x <= 0 */
static int outside(int f, float x)
{
    return f == EXP_NONPOSITIVE && x > 0.0f;
}

struct stats {
    double ulp, ulp_at, tiny_abs, scaled_abs, scaled_at;
    long special_wrong;
};

static double reference(int f, double x)
{
    switch (f) {
    case EXP:
    case EXP_NONPOSITIVE: return exp(x);
    case SIGMOID: return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
    case TANH: return tanh(x);
    case ERF: return erf(x);
    case GELU_ERF: return 0.5 * x * erfc(-x / sqrt(2.0));
    default: {
        const double u = sqrt(2.0 / 3.14159265358979323846) * (x + 0.044715 * x * x * x);
        return 0.5 * x * (1.0 + tanh(u));
    }
    }
}

static float scalar(int f, float x)
{
    switch (f) {
    case EXP: return mlcc_f32_exp(x);
    case SIGMOID: return mlcc_f32_sigmoid(x);
    case TANH: return mlcc_f32_tanh(x);
    case ERF: return mlcc_f32_erf(x);
    case GELU_ERF: return mlcc_f32_gelu_erf(x);
    case EXP_NONPOSITIVE: return mlcc_f32_exp_nonpositive(x);
    default: return mlcc_f32_gelu_tanh(x);
    }
}

static void apply(int f, int vector, size_t n, const float *x, float *y)
{
    size_t i = 0;
#if MLCC_HAVE_F32V
    for (; vector && i + MLCC_F32V_LANES <= n; i += MLCC_F32V_LANES) {
        const mlcc_f32v v = mlcc_f32v_load(x + i);
        mlcc_f32v r;
        switch (f) {
        case EXP: r = mlcc_f32v_exp(v); break;
        case SIGMOID: r = mlcc_f32v_sigmoid(v); break;
        case TANH: r = mlcc_f32v_tanh(v); break;
        case ERF: r = mlcc_f32v_erf(v); break;
        case GELU_ERF: r = mlcc_f32v_gelu_erf(v); break;
        case EXP_NONPOSITIVE: r = mlcc_f32v_exp_nonpositive(v); break;
        default: r = mlcc_f32v_gelu_tanh(v); break;
        }
        mlcc_f32v_store(y + i, r);
    }
#else
    (void)vector;
#endif
    for (; i < n; ++i) y[i] = scalar(f, x[i]);
}

static void measure(int f, int vector, size_t n, const float *x, struct stats *s)
{
    static float y[CHUNK];
    apply(f, vector, n, x, y);
    for (size_t i = 0; i < n; ++i) {
        if (isnan(x[i]) || isinf(x[i]) || outside(f, x[i])) continue;
        const double want = reference(f, x[i]);
        const double err = fabs((double)y[i] - want);
        const double scaled = err / fmax(fabs((double)x[i]), 1.0);
        if (scaled > s->scaled_abs || isnan(y[i])) {
            s->scaled_abs = isnan(y[i]) ? INFINITY : scaled;
            s->scaled_at = x[i];
        }
        if (isinf((float)want)) {
            if ((float)want != y[i] && s->ulp < INFINITY) {
                s->ulp = INFINITY;
                s->ulp_at = x[i];
            }
        } else if (fabs(want) >= FLT_MIN && (x[i] == 0.0f || fabsf(x[i]) >= FLT_MIN)) {
            int e;
            frexp(want, &e);  /* want = m 2^e, 0.5 <= |m| < 1: a float ulp is 2^(e - 24) */
            const double ulp = isnan(y[i]) ? INFINITY : err / ldexp(1.0, e - 24);
            if (ulp > s->ulp) {
                s->ulp = ulp;
                s->ulp_at = x[i];
            }
        } else if (err > s->tiny_abs) {
            s->tiny_abs = err;
        }
    }
}

static int same(float got, float want)
{
    return isnan(want) ? isnan(got) != 0 : got == want;
}

/* NaN in, NaN out; the infinities; signed zeros are not checked (none of these cares). */
static long special_wrong(int f, int vector)
{
    static const float inputs[4] = {NAN, -NAN, INFINITY, -INFINITY};
    const float wants[FUNCTIONS][4] = {
        {NAN, NAN, INFINITY, 0.0f}, {NAN, NAN, 1.0f, 0.0f}, {NAN, NAN, 1.0f, -1.0f},
        {NAN, NAN, 1.0f, -1.0f},    {NAN, NAN, INFINITY, NAN}, {NAN, NAN, INFINITY, NAN},
        {NAN, NAN, INFINITY, 0.0f},
    };
    float x[64], y[64];
    long wrong = 0;
    for (size_t i = 0; i < 64; ++i) x[i] = inputs[i % 4];
    apply(f, vector, 64, x, y);
    for (size_t i = 0; i < 64; ++i) {
        if (!outside(f, x[i]) && !same(y[i], wants[f][i % 4])) {
            if (wrong == 0) printf("# %s %s(%g) = %g, want %g\n", vector ? "vector" : "scalar", names[f], x[i], y[i], wants[f][i % 4]);
            wrong += 1;
        }
    }
    return wrong;
}

static void sweep_range(int f, int vector, float lo, float hi, size_t count, struct stats *s)
{
    static float x[CHUNK];
    for (size_t done = 0; done < count;) {
        const size_t n = count - done < CHUNK ? count - done : CHUNK;
        for (size_t i = 0; i < n; ++i) x[i] = lo + (hi - lo) * (float)((double)(done + i) / (double)(count - 1));
        measure(f, vector, n, x, s);
        done += n;
    }
}

int main(int argc, char **argv)
{
    const unsigned stride = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 997u;
    const size_t dense = argc > 2 ? (size_t)strtoul(argv[2], NULL, 10) : 200001u;
    static const float edges[FUNCTIONS][2] = {{-110.0f, -80.0f}, {-110.0f, -80.0f}, {7.0f, 10.0f},
                                              {3.0f, 4.5f},      {-8.0f, -4.0f},    {-8.0f, -4.0f},
                                              {-110.0f, -80.0f}};
    static float x[CHUNK];
    for (int vector = 0; vector <= MLCC_HAVE_F32V; ++vector) {
        for (int f = 0; f < FUNCTIONS; ++f) {
            struct stats s;
            memset(&s, 0, sizeof s);
            size_t n = 0;
            for (unsigned long long bits = 0; bits < 0x100000000ull; bits += stride) {
                const unsigned u = (unsigned)bits;
                memcpy(&x[n], &u, sizeof u);
                if (++n == CHUNK) {
                    measure(f, vector, n, x, &s);
                    n = 0;
                }
            }
            measure(f, vector, n, x, &s);
            sweep_range(f, vector, -12.0f, 12.0f, dense, &s);
            sweep_range(f, vector, edges[f][0], edges[f][1], dense / 2u + 1u, &s);
            sweep_range(f, vector, -edges[f][1], -edges[f][0], dense / 2u + 1u, &s);
            s.special_wrong = special_wrong(f, vector);
            printf("%s %s ulp %.3f at %.9g tiny_abs %.3g scaled_abs %.3g at %.9g special_wrong %ld\n", names[f],
                   vector ? "vector" : "scalar", s.ulp, s.ulp_at, s.tiny_abs, s.scaled_abs, s.scaled_at,
                   s.special_wrong);
        }
    }
    return 0;
}
