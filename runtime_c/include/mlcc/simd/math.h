/* Vector exp, sigmoid, tanh, erf and the GELUs on the SIMD shim the including file chose (mlcc/simd.h or
 * one mlcc/simd/<isa>.h, included first), each lane computed as its scalar form in
 * mlcc/simd/math-scalar.h (same algorithm and coefficients; the scalar form is what tails and targets
 * without vectors use). Float only, no tables, no branches, no C library.
 *
 * Accuracy over the whole float range, measured by tests/kernels/test_vmath.py against the C library in
 * double (every 997th float and dense sweeps of [-12, 12] and of the saturation edges; vector and scalar
 * forms on AVX-512, AVX2, SIMD128, NEON, RVV and scalar-only targets), where x and the result are normal:
 *   exp      <= 1 ulp (0.98 measured); subnormal results within 1 subnormal ulp; +inf from x > 88.72
 *   exp_nonpositive (x <= 0, softmax)  <= 1 ulp (0.95) where the result is normal; 0 where it would be subnormal
 *   sigmoid  <= 2.5 ulp (2.2)
 *   tanh     <= 5.5 ulp (5.2); exactly +-1 for |x| >= 9.25
 *   erf      <= 6.5 ulp (6.0); exactly +-1 for |x| >= 4.125
 *   GELU (erf, tanh)  abs error <= 2.5e-7 max(|x|, 1) (2.3e-7)
 *   sqrt     correctly rounded (the compiler's vector square root; tests/kernels/lrn_edges.c checks it bit
 *            for bit against sqrtf through the f32-lrn kernels)
 * Armv7 NEON flushes subnormal inputs and results to zero and divides by a refined reciprocal estimate:
 * there sigmoid is within 3.5 ulp, tanh 6 and erf 6.5.
 * NaN in gives NaN out. exp(+inf) = +inf, exp(-inf) = 0, sigmoid(+-inf) = 1 and 0, tanh and erf of +-inf
 * = +-1; the GELUs of +inf are +inf and of -inf NaN, as their defining formulas give.
 */
#ifndef MLCC_SIMD_MATH_H
#define MLCC_SIMD_MATH_H

#include "mlcc/simd/math-scalar.h"

/* 2^n for lanes holding integers n in [-126, 127] (n = -127 gives 0). */
static inline mlcc_f32v mlcc_f32v_exp2_int(mlcc_f32v n)
{
    return mlcc_f32v_from_bits(mlcc_i32v_shl(mlcc_f32v_bits(mlcc_f32v_add(n, mlcc_f32v_splat(MLCC_EXP_BIAS))), 23u));
}

/* e^r - 1 for r = xc - n ln2, n = xc log2(e) rounded (|r| <= ln2 / 2): the reduction and polynomial of
 * mlcc_f32v_exp and mlcc_f32v_exp_nonpositive, as mlcc_f32_expm1_reduced lane by lane. */
static inline mlcc_f32v mlcc_f32v_expm1_reduced(mlcc_f32v xc, mlcc_f32v n)
{
    mlcc_f32v r = mlcc_f32v_fma(xc, n, mlcc_f32v_splat(-MLCC_EXP_LN2_HI));
    r = mlcc_f32v_fma(r, n, mlcc_f32v_splat(-MLCC_EXP_LN2_LO));
    mlcc_f32v p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_EXP_P3), mlcc_f32v_splat(MLCC_EXP_P4), r);
    p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_EXP_P2), p, r);
    p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_EXP_P1), p, r);
    p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_EXP_P0), p, r);
    return mlcc_f32v_fma(r, p, mlcc_f32v_mul(r, r));
}

static inline mlcc_f32v mlcc_f32v_exp(mlcc_f32v x)
{
    const mlcc_f32v round = mlcc_f32v_splat(MLCC_EXP_ROUND);
    const mlcc_f32v xc = mlcc_f32v_min(mlcc_f32v_max(x, mlcc_f32v_splat(MLCC_EXP_LO)), mlcc_f32v_splat(MLCC_EXP_HI));
    const mlcc_f32v n = mlcc_f32v_sub(mlcc_f32v_fma(round, xc, mlcc_f32v_splat(MLCC_EXP_LOG2E)), round);
    const mlcc_f32v n1 = mlcc_f32v_min(mlcc_f32v_max(n, mlcc_f32v_splat(-126.0f)), mlcc_f32v_splat(127.0f));
    const mlcc_f32v q = mlcc_f32v_expm1_reduced(xc, n);
    const mlcc_f32v s1 = mlcc_f32v_exp2_int(n1);
    const mlcc_f32v e = mlcc_f32v_mul(mlcc_f32v_fma(s1, q, s1), mlcc_f32v_exp2_int(mlcc_f32v_sub(n, n1)));
    return mlcc_f32v_select(mlcc_f32v_isnan(x), x, e);  /* the shims' min/max may drop a NaN */
}

/* e^x for x <= 0 (a softmax's x - max) as mlcc_f32_exp_nonpositive: exp's results where they are normal,
 * else 0; a third fewer operations than mlcc_f32v_exp. */
static inline mlcc_f32v mlcc_f32v_exp_nonpositive(mlcc_f32v x)
{
    const mlcc_f32v round = mlcc_f32v_splat(MLCC_EXP_ROUND);
    const mlcc_f32v xc = mlcc_f32v_max(x, mlcc_f32v_splat(MLCC_EXP_FLUSH));
    const mlcc_f32v n = mlcc_f32v_sub(mlcc_f32v_fma(round, xc, mlcc_f32v_splat(MLCC_EXP_LOG2E)), round);
    const mlcc_f32v q = mlcc_f32v_expm1_reduced(xc, n);
    const mlcc_f32v s = mlcc_f32v_exp2_int(n);
    return mlcc_f32v_select(mlcc_f32v_isnan(x), x, mlcc_f32v_fma(s, s, q));
}

static inline mlcc_f32v mlcc_f32v_sigmoid(mlcc_f32v x)
{
    const mlcc_f32v one = mlcc_f32v_splat(1.0f);
    const mlcc_f32v e = mlcc_f32v_exp(mlcc_f32v_sub(mlcc_f32v_zero(), mlcc_f32v_abs(x)));
    const mlcc_f32v f = mlcc_f32v_div(e, mlcc_f32v_add(one, e));
    return mlcc_f32v_select(mlcc_f32v_lt(mlcc_f32v_zero(), x), mlcc_f32v_sub(one, f), f);
}

static inline mlcc_f32v mlcc_f32v_tanh(mlcc_f32v x)
{
    const mlcc_f32v one = mlcc_f32v_splat(1.0f), hi = mlcc_f32v_splat(MLCC_TANH_HI);
    const mlcc_f32v xc = mlcc_f32v_min(mlcc_f32v_max(x, mlcc_f32v_sub(mlcc_f32v_zero(), hi)), hi);
    const mlcc_f32v t = mlcc_f32v_mul(xc, xc);
    mlcc_f32v p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_TANH_P3), mlcc_f32v_splat(MLCC_TANH_P4), t);
    p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_TANH_P2), p, t);
    p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_TANH_P1), p, t);
    p = mlcc_f32v_fma(one, p, t);
    mlcc_f32v q = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_TANH_Q3), mlcc_f32v_splat(MLCC_TANH_Q4), t);
    q = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_TANH_Q2), q, t);
    q = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_TANH_Q1), q, t);
    q = mlcc_f32v_fma(one, q, t);
    const mlcc_f32v y = mlcc_f32v_div(mlcc_f32v_mul(xc, p), q);
    return mlcc_f32v_select(mlcc_f32v_isnan(x), x, mlcc_f32v_min(mlcc_f32v_max(y, mlcc_f32v_sub(mlcc_f32v_zero(), one)), one));
}

static inline mlcc_f32v mlcc_f32v_erf(mlcc_f32v x)
{
    const mlcc_f32v one = mlcc_f32v_splat(1.0f), hi = mlcc_f32v_splat(MLCC_ERF_HI);
    const mlcc_f32v xc = mlcc_f32v_min(mlcc_f32v_max(x, mlcc_f32v_sub(mlcc_f32v_zero(), hi)), hi);
    const mlcc_f32v t = mlcc_f32v_mul(xc, xc);
    mlcc_f32v p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_ERF_P4), mlcc_f32v_splat(MLCC_ERF_P5), t);
    p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_ERF_P3), p, t);
    p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_ERF_P2), p, t);
    p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_ERF_P1), p, t);
    p = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_ERF_P0), p, t);
    mlcc_f32v q = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_ERF_Q4), mlcc_f32v_splat(MLCC_ERF_Q5), t);
    q = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_ERF_Q3), q, t);
    q = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_ERF_Q2), q, t);
    q = mlcc_f32v_fma(mlcc_f32v_splat(MLCC_ERF_Q1), q, t);
    q = mlcc_f32v_fma(one, q, t);
    const mlcc_f32v y = mlcc_f32v_div(mlcc_f32v_mul(xc, p), q);
    return mlcc_f32v_select(mlcc_f32v_isnan(x), x, mlcc_f32v_min(mlcc_f32v_max(y, mlcc_f32v_sub(mlcc_f32v_zero(), one)), one));
}

static inline mlcc_f32v mlcc_f32v_gelu_erf(mlcc_f32v x)
{
    const mlcc_f32v half = mlcc_f32v_splat(0.5f);
    return mlcc_f32v_mul(x, mlcc_f32v_fma(half, half, mlcc_f32v_erf(mlcc_f32v_mul(x, mlcc_f32v_splat(MLCC_SQRT1_2)))));
}

static inline mlcc_f32v mlcc_f32v_gelu_tanh(mlcc_f32v x)
{
    const mlcc_f32v x3 = mlcc_f32v_mul(mlcc_f32v_mul(x, x), mlcc_f32v_mul(x, mlcc_f32v_splat(0.044715f)));
    return mlcc_f32v_mul(x, mlcc_f32v_sigmoid(mlcc_f32v_mul(mlcc_f32v_splat(2.0f * MLCC_SQRT2_PI), mlcc_f32v_add(x3, x))));
}

/* sqrt, correctly rounded as IEEE 754 asks: the compiler's vector square root on the shim's lanes (one
 * instruction on AVX2, AVX-512, SIMD128, AArch64 and RVV; Armv7 NEON has none and takes VFP's per lane). */
static inline mlcc_f32v mlcc_f32v_sqrt(mlcc_f32v x)
{
    typedef float lanes __attribute__((vector_size(MLCC_F32V_LANES * sizeof(float))));
    lanes v;
    __builtin_memcpy(&v, &x, sizeof v);  /* the shims' types are all this one's bits (SIMD128's are ints) */
#if defined(__clang__)
    v = __builtin_elementwise_sqrt(v);
#else  /* GCC (a system compiler building the C for x86-64) has no elementwise builtin: it vectorises this */
    for (size_t i = 0; i < MLCC_F32V_LANES; ++i) v[i] = __builtin_sqrtf(v[i]);
#endif
    __builtin_memcpy(&x, &v, sizeof x);
    return x;
}

#endif /* MLCC_SIMD_MATH_H */
