/* Single-precision math for targets without a C library; accuracy per function in mlcc/math.h.
 *
 * Each transcendental function reduces its argument to a small interval (by ln 2, pi/2 or a binade) and
 * evaluates a Taylor polynomial there, or a least-squares fit where Taylor converges too slowly (erf);
 * reduction constants are split in parts so the products with the quotient are exact. Float arithmetic only
 * (a single-precision FPU suffices): powf carries y log x in double-float; sin, cos and tan reduce huge
 * arguments by Payne-Hanek in integers.
 */
#include <stdint.h>

#include "mlcc/math.h"

static inline uint32_t bits_of(float x)
{
    union { float f; uint32_t u; } v;
    v.f = x;
    return v.u;
}

static inline float float_of(uint32_t u)
{
    union { uint32_t u; float f; } v;
    v.u = u;
    return v.f;
}

#define LN2_HI 0x1.62ep-1f /* 12 bits: n * LN2_HI is exact for the |n| <= 150 used */
#define LN2_LO 0x1.0bfbe8p-15f
#define LOG2E 0x1.715476p+0f
#define PIO2_HI 0x1.921fb6p+0f
#define PIO2_LO (-0x1.777a5cp-25f)
#define PIO4_HI 0x1.921fb6p-1f
#define PIO4_LO (-0x1.777a5cp-26f)

/* The square root has an instruction on every FPU mlcc targets, except the single-precision-only ones
 * (Cortex-M4F) for double: those get a bit-by-bit integer square root, exact too (math-double.c). */
#if defined(__x86_64__) || defined(__SSE__) || defined(__wasm__) || defined(__aarch64__) || \
    (defined(__ARM_FP) && (__ARM_FP & 4)) || (defined(__riscv_flen) && __riscv_flen >= 32)
#define HAVE_SQRTF_INSTRUCTION 1
#endif
#if defined(MLCC_SOFTWARE_SQRT)  /* tests: the bit-by-bit path on any machine */
#undef HAVE_SQRTF_INSTRUCTION
#endif

#if !defined(HAVE_SQRTF_INSTRUCTION)
/* floor(sqrt(m * 2^(top + 1))) for m in [2^(top-1), 2^(top+1)): one result bit per step, exact. */
static uint32_t isqrt_bits(uint32_t m, int top, int *inexact)
{
    uint64_t ix = (uint64_t)m << 1, q = 0, s = 0, r = (uint64_t)1 << top;
    while (r != 0) {
        const uint64_t t = s + r;
        if (t <= ix) {
            s = t + r;
            ix -= t;
            q += r;
        }
        ix <<= 1;
        r >>= 1;
    }
    *inexact = ix != 0;
    return (uint32_t)q;
}
#endif

float mlcc_sqrtf(float x)
{
#if defined(HAVE_SQRTF_INSTRUCTION)
    return __builtin_sqrtf(x);
#else
    uint32_t u = bits_of(x);
    if (u == 0 || u == 0x80000000u || u == 0x7f800000u || x != x) return x;  /* +-0, +inf, NaN */
    if (u >> 31) return __builtin_nanf("");
    int e = (int)(u >> 23);
    uint32_t m = u & 0x007fffffu;
    if (e == 0) {  /* subnormal: normalise */
        e = 1;
        while (!(m & 0x00800000u)) {
            m <<= 1;
            --e;
        }
    } else {
        m |= 0x00800000u;
    }
    int exponent = e - 150;  /* x = m * 2^exponent */
    if (!(exponent & 1)) {  /* the root scales by 2^((exponent - 25) / 2): make that whole */
        m <<= 1;
        --exponent;
    }
    int inexact;
    uint32_t q = isqrt_bits(m, 24, &inexact);  /* 25 bits: the result and a rounding bit */
    const uint32_t round = q & 1u;
    q >>= 1;
    if (round && (inexact || (q & 1u))) ++q;  /* to nearest, ties to even; a carry bumps the exponent */
    const int p = (exponent - 25) / 2 + 1;
    return float_of(((uint32_t)(p + 150) << 23) + (q - 0x00800000u));
#endif
}

float mlcc_fabsf(float x) { return float_of(bits_of(x) & 0x7fffffffu); }

float mlcc_copysignf(float x, float y) { return float_of((bits_of(x) & 0x7fffffffu) | (bits_of(y) & 0x80000000u)); }

float mlcc_truncf(float x)
{
    const uint32_t u = bits_of(x);
    const int e = (int)((u >> 23) & 0xffu) - 127;
    if (e >= 23) return x;  /* whole already, or inf, or NaN */
    if (e < 0) return float_of(u & 0x80000000u);
    return float_of(u & ~(0x007fffffu >> e));
}

float mlcc_floorf(float x)
{
    const float t = mlcc_truncf(x);
    return t > x ? t - 1.0f : t;
}

float mlcc_ceilf(float x)
{
    const float t = mlcc_truncf(x);
    return t < x ? t + 1.0f : t;
}

float mlcc_rintf(float x)
{
    /* adding then subtracting 2^23 rounds to a whole number in the (nearest-even) rounding mode */
    const float a = mlcc_fabsf(x);
    if (!(a < 0x1p23f)) return x;
    return mlcc_copysignf((a + 0x1p23f) - 0x1p23f, x);
}

float mlcc_roundf(float x)
{
    float t = mlcc_truncf(x);
    if (mlcc_fabsf(x - t) >= 0.5f) t += mlcc_copysignf(1.0f, x);  /* x - t is exact */
    return t;
}

float mlcc_fminf(float x, float y)
{
    if (x != x) return y;
    if (y != y) return x;
    if (x == y) return (bits_of(x) >> 31) ? x : y;  /* -0 below +0 */
    return x < y ? x : y;
}

float mlcc_fmaxf(float x, float y)
{
    if (x != x) return y;
    if (y != y) return x;
    if (x == y) return (bits_of(x) >> 31) ? y : x;
    return x > y ? x : y;
}

/* The significand of a finite nonzero |x| as a 24-bit integer; *e gets the exponent field (<= 0 when
 * subnormal), so |x| = m * 2^(e - 150). */
static uint32_t significand(uint32_t u, int *e)
{
    *e = (int)(u >> 23);
    uint32_t m = u & 0x007fffffu;
    if (*e != 0) return m | 0x00800000u;
    *e = 1;
    while (!(m & 0x00800000u)) {
        m <<= 1;
        --*e;
    }
    return m;
}

float mlcc_fmodf(float x, float y)
{
    const uint32_t sign = bits_of(x) & 0x80000000u;
    const uint32_t ux = bits_of(x) & 0x7fffffffu, uy = bits_of(y) & 0x7fffffffu;
    if (uy == 0 || ux >= 0x7f800000u || uy > 0x7f800000u) return __builtin_nanf("");
    if (ux < uy) return x;
    if (ux == uy) return float_of(sign);
    int ex, ey;
    uint32_t mx = significand(ux, &ex);
    const uint32_t my = significand(uy, &ey);
    for (; ex > ey; --ex) {  /* long division, keeping only the remainder: exact */
        if (mx >= my) mx -= my;
        mx <<= 1;
    }
    if (mx >= my) mx -= my;
    if (mx == 0) return float_of(sign);
    while (!(mx & 0x00800000u)) {
        mx <<= 1;
        --ey;
    }
    const uint32_t r = ey > 0 ? ((uint32_t)ey << 23) | (mx & 0x007fffffu) : mx >> (1 - ey);
    return float_of(r | sign);
}

/* p * 2^n for n in [-150, 128], rounded once. */
static float scale2f(float p, int n)
{
    if (n > 127) {
        p *= 0x1p127f;
        n -= 127;
    } else if (n < -126) {
        p *= 0x1p-126f;
        n += 126;
    }
    return p * float_of((uint32_t)(n + 127) << 23);
}

/* e^r - 1 for |r| <= ln2 / 2 (Taylor to degree 8). */
static float expm1_small(float r)
{
    const float q = 1.0f / 2 + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 +
                    r * (1.0f / 5040 + r * (1.0f / 40320))))));
    return r + r * r * q;
}

/* x = n ln2 + r with |r| <= ln2 / 2 (x finite, |x| < 150). */
static float reduce_ln2(float x, float *r)
{
    const float n = mlcc_rintf(x * LOG2E);
    *r = (x - n * LN2_HI) - n * LN2_LO;
    return n;
}

float mlcc_expf(float x)
{
    if (x != x) return x;
    if (x > 0x1.62e42ep+6f) return __builtin_inff();
    if (x < -104.0f) return 0.0f;
    float r;
    const float n = reduce_ln2(x, &r);
    return scale2f(1.0f + expm1_small(r), (int)n);
}

float mlcc_exp2f(float x)
{
    if (x != x) return x;
    if (x >= 128.0f) return __builtin_inff();
    if (x < -150.0f) return 0.0f;
    const float n = mlcc_rintf(x);
    return scale2f(1.0f + expm1_small((x - n) * 0x1.62e430p-1f), (int)n);  /* x - n is exact */
}

float mlcc_expm1f(float x)
{
    if (x != x) return x;
    if (x > 0x1.62e42ep+6f) return __builtin_inff();
    if (x < -18.0f) return -1.0f;  /* e^x below half an ulp of 1 */
    if (mlcc_fabsf(x) <= 0x1.62e430p-2f) return expm1_small(x);
    float r;
    const int n = (int)reduce_ln2(x, &r);
    const float q = expm1_small(r);
    if (n > 24) return scale2f(1.0f + q, n);  /* the -1 is below the rounding */
    const float t = float_of((uint32_t)(n + 127) << 23);
    return (t - 1.0f) + t * q;  /* 2^n - 1 is exact for |n| <= 24 */
}

/* log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1]: 2 atanh(s), s = f / (2 + f), written so the big
 * terms are exact: f - (f^2 / 2 - s (f^2 / 2 + R)). */
static float log1p_small(float f)
{
    const float s = f / (2.0f + f), z = s * s;
    const float big_r = z * (2.0f / 3 + z * (2.0f / 5 + z * (2.0f / 7 + z * (2.0f / 9))));
    const float hfsq = 0.5f * f * f;
    return f - (hfsq - s * (hfsq + big_r));
}

/* Splits finite positive x into 2^k * (1 + f), 1 + f in [sqrt(1/2), sqrt(2)). */
static int split_binade(float x, float *f)
{
    int k = 0;
    uint32_t u = bits_of(x);
    if (u < 0x00800000u) {  /* subnormal */
        u = bits_of(x * 0x1p25f);
        k = -25;
    }
    u += 0x3f800000u - 0x3f3504f3u;
    k += (int)(u >> 23) - 127;
    *f = float_of((u & 0x007fffffu) + 0x3f3504f3u) - 1.0f;
    return k;
}

float mlcc_logf(float x)
{
    if (x != x || x == __builtin_inff()) return x;
    if (x == 0.0f) return -__builtin_inff();
    if (x < 0.0f) return __builtin_nanf("");
    float f;
    const float k = (float)split_binade(x, &f);
    return k * LN2_HI + (k * LN2_LO + log1p_small(f));
}

float mlcc_log2f(float x) { return mlcc_logf(x) * LOG2E; }

float mlcc_log10f(float x) { return mlcc_logf(x) * 0x1.bcb7b2p-2f; }

float mlcc_log1pf(float x)
{
    if (x != x || x == __builtin_inff()) return x;
    if (x == -1.0f) return -__builtin_inff();
    if (x < -1.0f) return __builtin_nanf("");
    if (mlcc_fabsf(x) < 0x1p-24f) return x;
    const float u = 1.0f + x;
    const float c = (x - (u - 1.0f)) / u;  /* what rounding 1 + x lost, as a change of log u */
    return mlcc_logf(u) + c;
}

/* 2/pi in 32-bit words, after one word of zeros so the window for |x| >= 2^-11 * 2^24 starts inside. */
static const uint32_t two_over_pi[] = {
    0x00000000u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u, 0xdb629599u, 0x3c439041u, 0xfe5163abu,
};

/* High 64 bits of a * b, from 32-bit halves (integer arithmetic only). */
static uint64_t mul_high64(uint64_t a, uint64_t b)
{
    const uint64_t a0 = (uint32_t)a, a1 = a >> 32, b0 = (uint32_t)b, b1 = b >> 32;
    const uint64_t t = a0 * b0, u = a1 * b0 + (t >> 32), v = a0 * b1 + (uint32_t)u;
    return a1 * b1 + (u >> 32) + (v >> 32);
}

/* Payne-Hanek in integers (used for |x| >= 6000): with x = m 2^e (m the 24-bit significand), the bits of 2/pi
 * worth more than 4 / (m 2^e) only add multiples of 4 to x 2/pi and are skipped; 96 bits after them give
 * x 2/pi mod 4 in Q94, exact to 2^-70, of which the top 64 bits are kept (Q62). */
static int reduce_pio2_large(float x, float *r)
{
    const uint32_t u = bits_of(x) & 0x7fffffffu;
    const uint64_t m = (u & 0x7fffffu) | 0x800000u;
    const int skip = (int)(u >> 23) - 150 - 2 + 32;  /* >= 19 for |x| >= 6000 */
    const int w = skip >> 5, sh = skip & 31;
    uint32_t win[3];
    for (int i = 0; i < 3; ++i)
        win[i] = sh == 0 ? two_over_pi[w + i]
                         : (two_over_pi[w + i] << sh) | (w + i + 1 < 8 ? two_over_pi[w + i + 1] >> (32 - sh) : 0u);
    const uint64_t lo = m * win[2], mid = m * win[1] + (lo >> 32);
    const uint32_t top = (uint32_t)(m * win[0]) + (uint32_t)(mid >> 32);
    const uint64_t q62 = ((uint64_t)top << 32) | (uint32_t)mid;       /* x 2/pi mod 4, Q62 */
    const uint64_t n = (q62 + ((uint64_t)1 << 61)) >> 62;               /* nearest, mod 4 below */
    const int64_t frac = (int64_t)(q62 - (n << 62));                    /* in [-1/2, 1/2), Q62 */
    const uint64_t mag = (uint64_t)(frac < 0 ? -frac : frac);
    const int64_t rq60 = (int64_t)mul_high64(mag, 0x6487ed5110b4611aull);  /* times pi/2 (Q62): Q60 */
    const float rf = (float)rq60 * 0x1p-60f;                             /* one rounding */
    const int quadrant = (int)(n & 3);
    if (x < 0.0f) {
        *r = frac < 0 ? rf : -rf;
        return (4 - quadrant) & 3;
    }
    *r = frac < 0 ? -rf : rf;
    return quadrant;
}

/* x = n pi/2 + r, |r| <= ~pi/4; returns n mod 4. Cody-Waite with three float parts of pi/2 for small n,
 * Payne-Hanek in integers beyond. */
static int reduce_pio2(float x, float *r)
{
    if (mlcc_fabsf(x) <= PIO4_HI) {
        *r = x;
        return 0;
    }
    if (mlcc_fabsf(x) < 6000.0f) {  /* n < 2^12: n times each 12-bit part is exact */
        const float n = mlcc_rintf(x * 0x1.45f306p-1f);
        *r = ((x - n * 0x1.922p+0f) - n * (-0x1.2aep-18f)) - n * (-0x1.de973ep-31f);
        return (int)((int32_t)n & 3);
    }
    return reduce_pio2_large(x, r);
}

/* sin and cos on |r| <= pi/4 (Taylor to degrees 9 and 10). */
static float sin_small(float r)
{
    const float z = r * r;
    return r + r * z * (-1.0f / 6 + z * (1.0f / 120 + z * (-1.0f / 5040 + z * (1.0f / 362880))));
}

static float cos_small(float r)
{
    const float z = r * r, hz = 0.5f * z, w = 1.0f - hz;
    const float tail = z * z * (1.0f / 24 + z * (-1.0f / 720 + z * (1.0f / 40320 + z * (-1.0f / 3628800))));
    return w + (((1.0f - w) - hz) + tail);  /* recovers the rounding of 1 - z / 2 */
}

float mlcc_sinf(float x)
{
    if (x != x || mlcc_fabsf(x) == __builtin_inff()) return x - x;
    float r;
    switch (reduce_pio2(x, &r)) {
    case 0: return sin_small(r);
    case 1: return cos_small(r);
    case 2: return -sin_small(r);
    default: return -cos_small(r);
    }
}

float mlcc_cosf(float x)
{
    if (x != x || mlcc_fabsf(x) == __builtin_inff()) return x - x;
    float r;
    switch (reduce_pio2(x, &r)) {
    case 0: return cos_small(r);
    case 1: return -sin_small(r);
    case 2: return -cos_small(r);
    default: return sin_small(r);
    }
}

float mlcc_tanf(float x)
{
    if (x != x || mlcc_fabsf(x) == __builtin_inff()) return x - x;
    float r;
    const int n = reduce_pio2(x, &r);
    return (n & 1) ? -cos_small(r) / sin_small(r) : sin_small(r) / cos_small(r);
}

/* atan on |a| <= tan(pi/8) (Taylor to degree 19). */
static float atan_small(float a)
{
    const float z = a * a;
    const float p = -1.0f / 3 + z * (1.0f / 5 + z * (-1.0f / 7 + z * (1.0f / 9 + z * (-1.0f / 11 + z * (1.0f / 13 +
                    z * (-1.0f / 15 + z * (1.0f / 17 + z * (-1.0f / 19))))))));
    return a + a * z * p;
}

float mlcc_atanf(float x)
{
    if (x != x) return x;
    float a = mlcc_fabsf(x), r;
    if (a > 0x1p25f) {
        r = PIO2_HI;
    } else if (a > 0x1.3504f4p+1f) {  /* tan(3 pi/8): atan a = pi/2 - atan(1/a) */
        r = PIO2_HI + (PIO2_LO + atan_small(-1.0f / a));
    } else if (a > 0x1.a8279ap-2f) {  /* tan(pi/8): atan a = pi/4 + atan((a - 1) / (a + 1)) */
        r = PIO4_HI + (PIO4_LO + atan_small((a - 1.0f) / (a + 1.0f)));
    } else {
        r = atan_small(a);
    }
    return mlcc_copysignf(r, x);
}

/* asin on |a| <= 1/2, where 1 - a^2 = (1 - a)(1 + a) keeps its precision. */
static float asin_small(float a) { return mlcc_atanf(a / mlcc_sqrtf((1.0f - a) * (1.0f + a))); }

float mlcc_asinf(float x)
{
    const float a = mlcc_fabsf(x);
    if (!(a <= 1.0f)) return x != x ? x : __builtin_nanf("");
    if (a <= 0.5f) return asin_small(x);
    /* asin a = pi/2 - 2 asin(sqrt((1 - a) / 2)); 1 - a is exact */
    const float r = PIO2_HI + (PIO2_LO - 2.0f * asin_small(mlcc_sqrtf((1.0f - a) * 0.5f)));
    return mlcc_copysignf(r, x);
}

float mlcc_acosf(float x)
{
    const float a = mlcc_fabsf(x);
    if (!(a <= 1.0f)) return x != x ? x : __builtin_nanf("");
    if (a <= 0.5f) return PIO2_HI + (PIO2_LO - asin_small(x));
    const float s = 2.0f * asin_small(mlcc_sqrtf((1.0f - a) * 0.5f));
    return x > 0.0f ? s : 2.0f * PIO2_HI + (2.0f * PIO2_LO - s);
}

float mlcc_sinhf(float x)
{
    const float a = mlcc_fabsf(x);
    if (x != x || a == __builtin_inff()) return x;
    float r;
    if (a < 1.0f) {
        const float t = mlcc_expm1f(a);
        r = 0.5f * (t + t / (t + 1.0f));
    } else if (a < 88.0f) {
        const float e = mlcc_expf(a);
        r = 0.5f * (e - 1.0f / e);
    } else {  /* e^a / 2 overflows only after the halving: square e^(a/2) */
        const float h = mlcc_expf(0.5f * a);
        r = (0.5f * h) * h;
    }
    return mlcc_copysignf(r, x);
}

float mlcc_coshf(float x)
{
    const float a = mlcc_fabsf(x);
    if (x != x) return x;
    if (a < 0x1p-12f) return 1.0f;
    if (a < 88.0f) {
        const float e = mlcc_expf(a);
        return 0.5f * (e + 1.0f / e);
    }
    const float h = mlcc_expf(0.5f * a);
    return (0.5f * h) * h;
}

float mlcc_tanhf(float x)
{
    const float a = mlcc_fabsf(x);
    if (x != x) return x;
    float r;
    if (a > 9.1f) {
        r = 1.0f;  /* 1 - tanh(a) is below half an ulp of 1 */
    } else if (a >= 1.0f) {
        r = 1.0f - 2.0f / (mlcc_expm1f(2.0f * a) + 2.0f);
    } else if (a > 0x1p-12f) {
        const float t = mlcc_expm1f(-2.0f * a);
        r = -t / (t + 2.0f);
    } else {
        return x;
    }
    return mlcc_copysignf(r, x);
}

float mlcc_asinhf(float x)
{
    const float a = mlcc_fabsf(x);
    if (x != x || a == __builtin_inff()) return x;
    float r;
    if (a > 0x1p12f) {
        r = mlcc_logf(a) + 0x1.62e430p-1f;  /* asinh a = log(2a) + O(1 / a^2) */
    } else if (a > 2.0f) {
        r = mlcc_logf(2.0f * a + 1.0f / (mlcc_sqrtf(a * a + 1.0f) + a));
    } else {
        const float z = a * a;
        r = mlcc_log1pf(a + z / (1.0f + mlcc_sqrtf(1.0f + z)));
    }
    return mlcc_copysignf(r, x);
}

float mlcc_acoshf(float x)
{
    if (x != x || x == __builtin_inff()) return x;
    if (x < 1.0f) return __builtin_nanf("");
    if (x > 0x1p12f) return mlcc_logf(x) + 0x1.62e430p-1f;
    if (x > 2.0f) return mlcc_logf(2.0f * x - 1.0f / (x + mlcc_sqrtf(x * x - 1.0f)));
    const float t = x - 1.0f;  /* exact */
    return mlcc_log1pf(t + mlcc_sqrtf(2.0f * t + t * t));
}

float mlcc_atanhf(float x)
{
    const float a = mlcc_fabsf(x);
    if (x != x) return x;
    if (a > 1.0f) return __builtin_nanf("");
    if (a == 1.0f) return mlcc_copysignf(__builtin_inff(), x);
    const float r = a < 0.5f ? 0.5f * mlcc_log1pf(2.0f * a + 2.0f * a * a / (1.0f - a))
                             : 0.5f * mlcc_log1pf(2.0f * a / (1.0f - a));
    return mlcc_copysignf(r, x);
}

/* erf: a polynomial in a^2 for |a| < 1 (erf(a) / a - 1, fitted), else 1 - e^(-a^2) G(1/a) with
 * G = erfc(a) e^(a^2) fitted in 1/a on [1, 3.92]; past 3.92 erf rounds to 1. Least-squares fits on
 * Chebyshev nodes against mpmath, relative errors 1.4e-9 and 1.6e-8. */
float mlcc_erff(float x)
{
    const float a = mlcc_fabsf(x);
    if (x != x) return x;
    float r;
    if (a < 1.0f) {
        const float z = a * a;
        const float p = (0x1.20dd76p+0f - 1.0f) + z * (-0x1.812740p-2f + z * (0x1.ce2d40p-4f + z * (-0x1.b7fd3cp-6f +
                        z * (0x1.5422a6p-8f + z * (-0x1.a4b50ep-11f + z * 0x1.4b4662p-14f)))));
        return x + x * p;
    } else if (a < 3.92f) {
        const float v = 1.0f / a;
        const float g = 0x1.01a5dep-13f + v * (0x1.1f9ca0p-1f + v * (0x1.53167cp-6f + v * (-0x1.816d9ap-2f +
                        v * (0x1.d9f06cp-3f + v * (0x1.e5d998p-3f + v * (-0x1.12a638p-1f + v * (0x1.c0df50p-2f +
                        v * (-0x1.708554p-3f + v * 0x1.f85fecp-6f))))))));
        r = 1.0f - mlcc_expf(-a * a) * g;
    } else {
        r = 1.0f;
    }
    return mlcc_copysignf(r, x);
}

/* Double-float arithmetic (a value as hi + lo), exact by Dekker's and Knuth's algorithms. Each step is its
 * own statement so that no FMA contraction can change a rounding the algorithm depends on. */
typedef struct { float hi, lo; } float2;

static float2 two_sum(float a, float b)
{
    const float s = a + b;
    const float bb = s - a;
    const float e = (a - (s - bb)) + (b - bb);
    return (float2){s, e};
}

static float2 two_prod(float a, float b)  /* |a|, |b| < 2^100 */
{
    const float p = a * b;
    const float ca = 4097.0f * a, cb = 4097.0f * b;
    const float ah = ca - (ca - a), bh = cb - (cb - b);
    const float al = a - ah, bl = b - bh;
    const float e1 = ah * bh - p;
    const float e2 = e1 + ah * bl;
    const float e3 = e2 + al * bh;
    return (float2){p, e3 + al * bl};
}

/* 1/c (9 bits, so r = z/c - 1 stays below 2^-5) and -log(1/c) as hi + lo, for z in 16 slices of
 * [0x1.66p-1, 0x1.66p+0); the slice holding 1 has c = 1 so log x near 1 keeps its relative accuracy. */
static const struct { float invc, logc_hi, logc_lo; } log_table[16] = {
    {0x1.6600000000000p+0f, -0x1.5767720000000p-2f, 0x1.1754b20000000p-27f},
    {0x1.5700000000000p+0f, -0x1.2b93040000000p-2f, 0x1.51d8b60000000p-28f},
    {0x1.4980000000000p+0f, -0x1.0274dc0000000p-2f, -0x1.6c23300000000p-30f},
    {0x1.3c80000000000p+0f, -0x1.b2797e0000000p-3f, -0x1.c8c6420000000p-28f},
    {0x1.3100000000000p+0f, -0x1.66acd40000000p-3f, -0x1.3956a80000000p-30f},
    {0x1.2600000000000p+0f, -0x1.1b72ae0000000p-3f, 0x1.5a130c0000000p-28f},
    {0x1.1b80000000000p+0f, -0x1.a1ef1e0000000p-4f, 0x1.fe78ca0000000p-30f},
    {0x1.1200000000000p+0f, -0x1.16536e0000000p-4f, -0x1.d46f5c0000000p-29f},
    {0x1.0980000000000p+0f, -0x1.2a7ec20000000p-5f, -0x1.0a743a0000000p-32f},
    {0x1.0000000000000p+0f, 0.0f, 0.0f},
    {0x1.e500000000000p-1f, 0x1.bbcec00000000p-5f, -0x1.cb85f00000000p-32f},
    {0x1.ca00000000000p-1f, 0x1.c885800000000p-4f, 0x1.bc4b240000000p-32f},
    {0x1.b200000000000p-1f, 0x1.527e5e0000000p-3f, 0x1.286d640000000p-29f},
    {0x1.9c00000000000p-1f, 0x1.bd08740000000p-3f, -0x1.f109d40000000p-29f},
    {0x1.8800000000000p-1f, 0x1.1178e80000000p-2f, 0x1.13f23e0000000p-29f},
    {0x1.7600000000000p-1f, 0x1.419b420000000p-2f, 0x1.eaf4640000000p-29f},
};

/* log x (x positive, finite) as hi + lo with relative error near 2^-34. */
static float2 log_double_float(float x)
{
    int k = 0;
    uint32_t u = bits_of(x);
    if (u < 0x00800000u) {  /* subnormal */
        u = bits_of(x * 0x1p25f);
        k = -25;
    }
    const uint32_t off = u - 0x3f330000u;
    const int i = (int)((off >> 19) & 15);
    k += (int32_t)off >> 23;
    const float z = float_of(u - (off & 0xff800000u));
    const float2 p = two_prod(z, log_table[i].invc);
    const float r = p.hi - 1.0f;  /* exact: p.hi is within 2^-5 of 1; log(p.hi + p.lo) = log(1 + r) + p.lo / p.hi */
    const float2 r2 = two_prod(r, r);  /* -r^2 / 2 joins the high sum: rounding it would cost 2^-35 */
    const float tail = r2.hi * r * (1.0f / 3 + r * (-0.25f + r * (0.2f + r * (-1.0f / 6 + r * (1.0f / 7)))));
    const float2 a = two_sum((float)k * LN2_HI, log_table[i].logc_hi);  /* k LN2_HI is exact */
    const float2 b = two_sum(a.hi, r);
    const float2 c = two_sum(b.hi, -0.5f * r2.hi);
    const float lo = ((a.lo + b.lo) + c.lo) + ((float)k * LN2_LO + log_table[i].logc_lo) +
                     ((p.lo / p.hi - 0.5f * r2.lo) + tail);
    return two_sum(c.hi, lo);
}

/* 1 when y is an odd whole number, 0 when even, -1 when not whole (y finite). */
static int parity(float y)
{
    if (mlcc_fabsf(y) >= 0x1p24f) return 0;
    if (mlcc_truncf(y) != y) return -1;
    return (int)((int32_t)y & 1);
}

/* Special cases as C99 Annex F; the rest is e^(y log|x|) with y log|x| in double-float, so the error of
 * log x is not multiplied by y, and e^(a + b) = e^a (1 + b) for the low part. Float arithmetic only. */
float mlcc_powf(float x, float y)
{
    const float inf = __builtin_inff();
    if (y == 0.0f || x == 1.0f) return 1.0f;
    if (x != x || y != y) return x + y;
    const float ax = mlcc_fabsf(x), ay = mlcc_fabsf(y);
    if (ay == inf) {
        if (ax == 1.0f) return 1.0f;
        return (ax > 1.0f) == (y > 0.0f) ? inf : 0.0f;
    }
    const int odd = parity(y);
    if (x == 0.0f || ax == inf) {
        const float big = (x == 0.0f) == (y < 0.0f) ? inf : 0.0f;  /* 0^-y and inf^y are infinite */
        return odd == 1 ? mlcc_copysignf(big, x) : big;
    }
    if (x < 0.0f && odd < 0) return __builtin_nanf("");
    const float2 l = log_double_float(ax);
    const float guess = y * l.hi;  /* |log x| >= 2^-25 here, so a finite result needs |y| < 2^33 */
    float r;
    if (guess > 89.0f) {
        r = inf;
    } else if (guess < -104.0f) {
        r = 0.0f;
    } else {
        const float2 t = two_prod(y, l.hi);
        const float t_lo = t.lo + y * l.lo;
        const float n = mlcc_rintf(t.hi * LOG2E);
        const float rest = t_lo - n * LN2_LO;
        const float2 a = two_sum(t.hi - n * LN2_HI, rest);  /* t.hi - n LN2_HI is exact */
        const float q = expm1_small(a.hi);
        r = scale2f(1.0f + (q + (a.lo + q * a.lo)), (int)n);
    }
    return x < 0.0f && odd == 1 ? -r : r;
}
