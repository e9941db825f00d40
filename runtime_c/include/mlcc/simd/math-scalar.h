/* The scalar forms of the vector math (mlcc/simd/math.h): the same algorithms and coefficients, lane by
 * lane, inline and branch-free so that clang vectorises a loop calling them (libm's expf, erff and tanhf
 * are calls it cannot vectorise), and with no C library (Cortex-M). Accuracy, NaN and infinities: see
 * mlcc/simd/math.h; both forms are measured by tests/kernels/test_vmath.py. Coefficients: our own
 * near-minimax fits, scripts/fit_vmath.py. Needs nothing but C99.
 */
#ifndef MLCC_SIMD_MATH_SCALAR_H
#define MLCC_SIMD_MATH_SCALAR_H

/* exp: x = n ln2 + r with |r| <= ln2 / 2 (Cody-Waite: ln2 in two parts, n * MLCC_EXP_LN2_HI exact), then
 * e^r = 1 + r + r^2 p(r) with p of degree 4, and 2^n made from exponent bits as two factors 2^n1 2^n2
 * (n1 in [-126, 127]) so that subnormal results and the overflow edge come out right. */
#define MLCC_EXP_LO (-104.0f)  /* e^x rounds to 0 below */
#define MLCC_EXP_HI 89.0f      /* and to infinity above */
#define MLCC_EXP_LOG2E 0x1.715476p+0f
#define MLCC_EXP_LN2_HI 0x1.62E400p-1f  /* 15 significant bits: n * LN2_HI is exact for |n| <= 2^9 */
#define MLCC_EXP_LN2_LO 0x1.7F7D1Cp-20f
#define MLCC_EXP_ROUND 0x1.8p23f        /* adding it rounds to an integer (|value| < 2^22) */
#define MLCC_EXP_BIAS 0x1.8000FEp23f    /* MLCC_EXP_ROUND + 127: the sum's low bits are a biased exponent */
#define MLCC_EXP_P0 0x1.fffffcp-2f
#define MLCC_EXP_P1 0x1.555492p-3f
#define MLCC_EXP_P2 0x1.5558f2p-5f
#define MLCC_EXP_P3 0x1.1239dap-7f
#define MLCC_EXP_P4 0x1.6a245ap-10f

/* tanh(x) = x P(x^2) / Q(x^2) on |x| <= 9 (P(0) = Q(0) = 1), clamped to [-1, 1]: it rounds to +-1 beyond. */
#define MLCC_TANH_HI 9.25f
#define MLCC_TANH_P1 0x1.120b0cp-3f
#define MLCC_TANH_P2 0x1.ca2bf8p-9f
#define MLCC_TANH_P3 0x1.59c244p-16f
#define MLCC_TANH_P4 0x1.cad9cap-27f
#define MLCC_TANH_Q1 0x1.de5ad0p-2f
#define MLCC_TANH_Q2 0x1.a7f7b0p-6f
#define MLCC_TANH_Q3 0x1.58856ep-12f
#define MLCC_TANH_Q4 0x1.a17e42p-21f

/* erf(x) = x P(x^2) / Q(x^2) on |x| <= 4 (Q(0) = 1), clamped to [-1, 1]: it rounds to +-1 beyond. */
#define MLCC_ERF_HI 4.125f
#define MLCC_ERF_P0 0x1.20dd74p+0f
#define MLCC_ERF_P1 0x1.8c6336p-3f
#define MLCC_ERF_P2 0x1.b3034ep-5f
#define MLCC_ERF_P3 0x1.fd040cp-9f
#define MLCC_ERF_P4 0x1.2a63cap-12f
#define MLCC_ERF_P5 0x1.0aa754p-19f
#define MLCC_ERF_Q1 0x1.027d14p-1f
#define MLCC_ERF_Q2 0x1.d87abap-4f
#define MLCC_ERF_Q3 0x1.f25200p-7f
#define MLCC_ERF_Q4 0x1.36cc4cp-10f
#define MLCC_ERF_Q5 0x1.39e604p-15f

#define MLCC_SQRT1_2 0.70710678118654752f
#define MLCC_SQRT2_PI 0.79788456080286536f /* sqrt(2 / pi) */

union mlcc_f32_bits {
    float f;
    unsigned u;
};

/* 2^n for a float holding an integer n in [-126, 127] (n = -127 gives 0). */
static inline float mlcc_f32_exp2_int(float n)
{
    union mlcc_f32_bits b;
    b.f = n + MLCC_EXP_BIAS;
    b.u <<= 23;
    return b.f;
}

/* e^r - 1 for r = xc - n ln2, n = xc log2(e) rounded (|r| <= ln2 / 2): the reduction and polynomial of
 * mlcc_f32_exp and mlcc_f32_exp_nonpositive. */
static inline float mlcc_f32_expm1_reduced(float xc, float n)
{
    float r = n * -MLCC_EXP_LN2_HI + xc;
    r = n * -MLCC_EXP_LN2_LO + r;
    float p = MLCC_EXP_P4 * r + MLCC_EXP_P3;
    p = p * r + MLCC_EXP_P2;
    p = p * r + MLCC_EXP_P1;
    p = p * r + MLCC_EXP_P0;
    return p * (r * r) + r;
}

static inline float mlcc_f32_exp(float x)
{
    const float xc = x < MLCC_EXP_LO ? MLCC_EXP_LO : (x > MLCC_EXP_HI ? MLCC_EXP_HI : x);  /* NaN stays */
    const float n = (xc * MLCC_EXP_LOG2E + MLCC_EXP_ROUND) - MLCC_EXP_ROUND;
    const float n1 = n < -126.0f ? -126.0f : (n > 127.0f ? 127.0f : n);
    const float q = mlcc_f32_expm1_reduced(xc, n);
    const float s1 = mlcc_f32_exp2_int(n1);
    return (q * s1 + s1) * mlcc_f32_exp2_int(n - n1);
}

/* e^x for x <= 0, as a softmax exponentiates x - max: mlcc_f32_exp without the overflow side, and results
 * below the smallest normal float (x < -87.34) flushed to zero, from 2^-127 = 0 in exponent bits. */
#define MLCC_EXP_FLUSH (-88.0f)  /* n = -127 from here down to x >= -88.37 */
static inline float mlcc_f32_exp_nonpositive(float x)
{
    const float xc = x < MLCC_EXP_FLUSH ? MLCC_EXP_FLUSH : x;  /* NaN stays */
    const float n = (xc * MLCC_EXP_LOG2E + MLCC_EXP_ROUND) - MLCC_EXP_ROUND;
    const float q = mlcc_f32_expm1_reduced(xc, n);
    const float s = mlcc_f32_exp2_int(n);
    return q * s + s;
}

/* 1 / (1 + e^-x), from e = e^-|x| <= 1: e / (1 + e), or 1 minus that for x > 0. */
static inline float mlcc_f32_sigmoid(float x)
{
    const float e = mlcc_f32_exp(x < 0.0f ? x : -x);
    const float f = e / (1.0f + e);
    return x > 0.0f ? 1.0f - f : f;
}

static inline float mlcc_f32_clamp1(float y)
{
    return y < -1.0f ? -1.0f : (y > 1.0f ? 1.0f : y);
}

static inline float mlcc_f32_tanh(float x)
{
    const float xc = x < -MLCC_TANH_HI ? -MLCC_TANH_HI : (x > MLCC_TANH_HI ? MLCC_TANH_HI : x);
    const float t = xc * xc;
    float p = MLCC_TANH_P4 * t + MLCC_TANH_P3;
    p = p * t + MLCC_TANH_P2;
    p = p * t + MLCC_TANH_P1;
    p = p * t + 1.0f;
    float q = MLCC_TANH_Q4 * t + MLCC_TANH_Q3;
    q = q * t + MLCC_TANH_Q2;
    q = q * t + MLCC_TANH_Q1;
    q = q * t + 1.0f;
    return mlcc_f32_clamp1(xc * p / q);
}

static inline float mlcc_f32_erf(float x)
{
    const float xc = x < -MLCC_ERF_HI ? -MLCC_ERF_HI : (x > MLCC_ERF_HI ? MLCC_ERF_HI : x);
    const float t = xc * xc;
    float p = MLCC_ERF_P5 * t + MLCC_ERF_P4;
    p = p * t + MLCC_ERF_P3;
    p = p * t + MLCC_ERF_P2;
    p = p * t + MLCC_ERF_P1;
    p = p * t + MLCC_ERF_P0;
    float q = MLCC_ERF_Q5 * t + MLCC_ERF_Q4;
    q = q * t + MLCC_ERF_Q3;
    q = q * t + MLCC_ERF_Q2;
    q = q * t + MLCC_ERF_Q1;
    q = q * t + 1.0f;
    return mlcc_f32_clamp1(xc * p / q);
}

/* x Phi(x) = x (1 + erf(x / sqrt 2)) / 2 */
static inline float mlcc_f32_gelu_erf(float x)
{
    return x * (0.5f * mlcc_f32_erf(x * MLCC_SQRT1_2) + 0.5f);
}

/* x (1 + tanh(u)) / 2 with u = sqrt(2 / pi) (x + 0.044715 x^3), as x sigmoid(2u) */
static inline float mlcc_f32_gelu_tanh(float x)
{
    const float u2 = (2.0f * MLCC_SQRT2_PI) * (0.044715f * x * x * x + x);
    return x * mlcc_f32_sigmoid(u2);
}

#endif /* MLCC_SIMD_MATH_SCALAR_H */
