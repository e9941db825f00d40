/* Double-precision math for targets without a C library (accuracy in mlcc/math.h), for models that ask for
 * float64: float math never calls it (math.c). Same methods as math.c with longer polynomials.
 * On a single-precision FPU (Cortex-M4F) the compiler runtime (libgcc or compiler-rt) does the double
 * arithmetic in software.
 */
#include <stdint.h>

#include "mlcc/math.h"

static inline uint64_t bits_of(double x)
{
    union { double f; uint64_t u; } v;
    v.f = x;
    return v.u;
}

static inline double double_of(uint64_t u)
{
    union { uint64_t u; double f; } v;
    v.u = u;
    return v.f;
}

#define SIGN 0x8000000000000000u
#define MANTISSA 0x000fffffffffffffu
#define HIDDEN 0x0010000000000000u
#define LN2_HI 0x1.62e42ffp-1 /* 32 bits: n * LN2_HI is exact for the |n| <= 1075 used */
#define LN2_LO (-0x1.718432a1b0e26p-35)
#define LOG2E 0x1.71547652b82fep+0

#if defined(__x86_64__) || defined(__SSE2__) || defined(__wasm__) || defined(__aarch64__) || \
    (defined(__ARM_FP) && (__ARM_FP & 8)) || (defined(__riscv_flen) && __riscv_flen >= 64)
#define HAVE_SQRT_INSTRUCTION 1
#endif
#if defined(MLCC_SOFTWARE_SQRT)  /* tests: the bit-by-bit path on any machine */
#undef HAVE_SQRT_INSTRUCTION
#endif

double mlcc_sqrt(double x)
{
#if defined(HAVE_SQRT_INSTRUCTION)
    return __builtin_sqrt(x);
#else
    const uint64_t u = bits_of(x);
    if ((u << 1) == 0 || u == 0x7ff0000000000000u || x != x) return x;  /* +-0, +inf, NaN */
    if (u >> 63) return __builtin_nan("");
    int e = (int)(u >> 52);
    uint64_t m = u & MANTISSA;
    if (e == 0) {
        e = 1;
        while (!(m & HIDDEN)) {
            m <<= 1;
            --e;
        }
    } else {
        m |= HIDDEN;
    }
    int exponent = e - 1075;  /* x = m * 2^exponent */
    if (exponent & 1) {  /* the root scales by 2^((exponent - 54) / 2): make that whole */
        m <<= 1;
        --exponent;
    }
    /* floor(sqrt(m * 2^54)), 54 bits (the result and a rounding bit), one bit per step */
    uint64_t ix = m << 1, q = 0, s = 0, r = (uint64_t)1 << 53;
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
    const uint64_t round = q & 1u;
    q >>= 1;
    if (round && (ix != 0 || (q & 1u))) ++q;  /* to nearest, ties to even; a carry bumps the exponent */
    const int p = (exponent - 54) / 2 + 1;
    return double_of(((uint64_t)(p + 1075) << 52) + (q - HIDDEN));
#endif
}

double mlcc_fabs(double x) { return double_of(bits_of(x) & ~SIGN); }

double mlcc_copysign(double x, double y) { return double_of((bits_of(x) & ~SIGN) | (bits_of(y) & SIGN)); }

double mlcc_trunc(double x)
{
    const uint64_t u = bits_of(x);
    const int e = (int)((u >> 52) & 0x7ffu) - 1023;
    if (e >= 52) return x;
    if (e < 0) return double_of(u & SIGN);
    return double_of(u & ~(MANTISSA >> e));
}

double mlcc_floor(double x)
{
    const double t = mlcc_trunc(x);
    return t > x ? t - 1.0 : t;
}

double mlcc_ceil(double x)
{
    const double t = mlcc_trunc(x);
    return t < x ? t + 1.0 : t;
}

double mlcc_rint(double x)
{
    const double a = mlcc_fabs(x);
    if (!(a < 0x1p52)) return x;
    return mlcc_copysign((a + 0x1p52) - 0x1p52, x);
}

double mlcc_round(double x)
{
    double t = mlcc_trunc(x);
    if (mlcc_fabs(x - t) >= 0.5) t += mlcc_copysign(1.0, x);
    return t;
}

double mlcc_fmin(double x, double y)
{
    if (x != x) return y;
    if (y != y) return x;
    if (x == y) return (bits_of(x) >> 63) ? x : y;
    return x < y ? x : y;
}

double mlcc_fmax(double x, double y)
{
    if (x != x) return y;
    if (y != y) return x;
    if (x == y) return (bits_of(x) >> 63) ? y : x;
    return x > y ? x : y;
}

static uint64_t significand(uint64_t u, int *e)
{
    *e = (int)(u >> 52);
    uint64_t m = u & MANTISSA;
    if (*e != 0) return m | HIDDEN;
    *e = 1;
    while (!(m & HIDDEN)) {
        m <<= 1;
        --*e;
    }
    return m;
}

double mlcc_fmod(double x, double y)
{
    const uint64_t sign = bits_of(x) & SIGN;
    const uint64_t ux = bits_of(x) & ~SIGN, uy = bits_of(y) & ~SIGN;
    if (uy == 0 || ux >= 0x7ff0000000000000u || uy > 0x7ff0000000000000u) return __builtin_nan("");
    if (ux < uy) return x;
    if (ux == uy) return double_of(sign);
    int ex, ey;
    uint64_t mx = significand(ux, &ex);
    const uint64_t my = significand(uy, &ey);
    for (; ex > ey; --ex) {
        if (mx >= my) mx -= my;
        mx <<= 1;
    }
    if (mx >= my) mx -= my;
    if (mx == 0) return double_of(sign);
    while (!(mx & HIDDEN)) {
        mx <<= 1;
        --ey;
    }
    const uint64_t r = ey > 0 ? ((uint64_t)ey << 52) | (mx & MANTISSA) : mx >> (1 - ey);
    return double_of(r | sign);
}

/* p * 2^n for n in [-1075, 1024], rounded once. */
static double scale2(double p, int n)
{
    if (n > 1023) {
        p *= 0x1p1023;
        n -= 1023;
    } else if (n < -1022) {
        p *= 0x1p-1022;
        n += 1022;
    }
    return p * double_of((uint64_t)(n + 1023) << 52);
}

/* e^r - 1 for |r| <= ln2 / 2 (Taylor to degree 14). */
static double expm1_small(double r)
{
    double q = 1.0 / 87178291200.0;
    static const double inverse_factorials[] = {  /* 1/13! down to 1/2! */
        1.0 / 6227020800.0, 1.0 / 479001600.0, 1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0,
        1.0 / 40320.0, 1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 1.0 / 2.0,
    };
    for (int i = 0; i < 12; ++i) q = inverse_factorials[i] + r * q;
    return r + r * r * q;
}

static double reduce_ln2(double x, double *r)
{
    const double n = mlcc_rint(x * LOG2E);
    *r = (x - n * LN2_HI) - n * LN2_LO;
    return n;
}

double mlcc_exp(double x)
{
    if (x != x) return x;
    if (x > 0x1.62e42fefa39efp+9) return __builtin_inf();
    if (x < -746.0) return 0.0;
    double r;
    const double n = reduce_ln2(x, &r);
    return scale2(1.0 + expm1_small(r), (int)n);
}

double mlcc_expm1(double x)
{
    if (x != x) return x;
    if (x > 0x1.62e42fefa39efp+9) return __builtin_inf();
    if (x < -38.0) return -1.0;
    if (mlcc_fabs(x) <= 0x1.62e42fefa39efp-2) return expm1_small(x);
    double r;
    const int n = (int)reduce_ln2(x, &r);
    const double q = expm1_small(r);
    if (n > 53) return scale2(1.0 + q, n);
    const double t = double_of((uint64_t)(n + 1023) << 52);
    return (t - 1.0) + t * q;
}

/* log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1], as in math.c (series to s^23). */
static double log1p_small(double f)
{
    const double s = f / (2.0 + f), z = s * s;
    double big_r = 2.0 / 23;
    for (int k = 21; k >= 3; k -= 2) big_r = 2.0 / k + z * big_r;
    big_r *= z;
    const double hfsq = 0.5 * f * f;
    return f - (hfsq - s * (hfsq + big_r));
}

static int split_binade(double x, double *f)
{
    int k = 0;
    uint64_t u = bits_of(x);
    if (u < HIDDEN) {
        u = bits_of(x * 0x1p54);
        k = -54;
    }
    u += 0x3ff0000000000000u - 0x3fe6a09e667f3bcdu;
    k += (int)(u >> 52) - 1023;
    *f = double_of((u & MANTISSA) + 0x3fe6a09e667f3bcdu) - 1.0;
    return k;
}

double mlcc_log(double x)
{
    if (x != x || x == __builtin_inf()) return x;
    if (x == 0.0) return -__builtin_inf();
    if (x < 0.0) return __builtin_nan("");
    double f;
    const double k = (double)split_binade(x, &f);
    return k * LN2_HI + (k * LN2_LO + log1p_small(f));
}

double mlcc_log1p(double x)
{
    if (x != x || x == __builtin_inf()) return x;
    if (x == -1.0) return -__builtin_inf();
    if (x < -1.0) return __builtin_nan("");
    if (mlcc_fabs(x) < 0x1p-53) return x;
    const double u = 1.0 + x;
    return mlcc_log(u) + (x - (u - 1.0)) / u;
}

/* x = n pi/2 + r, |r| <= ~pi/4, pi/2 in three parts of 33, 33 and 53 bits; returns n mod 4. */
static int reduce_pio2(double x, double *r)
{
    if (mlcc_fabs(x) <= 0x1.921fb54442d18p-1) {
        *r = x;
        return 0;
    }
    const double n = mlcc_rint(x * 0x1.45f306dc9c883p-1);
    *r = ((x - n * 0x1.921fb544p+0) - n * 0x1.0b4611a6p-34) - n * 0x1.3198a2e037073p-69;
    return (int)((int64_t)mlcc_fmod(n, 4.0) & 3);
}

/* sin and cos on |r| <= pi/4 (Taylor to degrees 17 and 18). */
static double sin_small(double r)
{
    static const double c[] = {  /* -1/15!, 1/13!, ..., -1/3! */
        -1.0 / 1307674368000.0, 1.0 / 6227020800.0, -1.0 / 39916800.0, 1.0 / 362880.0, -1.0 / 5040.0,
        1.0 / 120.0, -1.0 / 6.0,
    };
    const double z = r * r;
    double p = 1.0 / 355687428096000.0;  /* 1/17! */
    for (int i = 0; i < 7; ++i) p = c[i] + z * p;
    return r + r * z * p;
}

static double cos_small(double r)
{
    static const double c[] = {  /* 1/16!, -1/14!, ..., 1/4! */
        1.0 / 20922789888000.0, -1.0 / 87178291200.0, 1.0 / 479001600.0, -1.0 / 3628800.0, 1.0 / 40320.0,
        -1.0 / 720.0, 1.0 / 24.0,
    };
    const double z = r * r, hz = 0.5 * z, w = 1.0 - hz;
    double p = -1.0 / 6402373705728000.0;  /* -1/18! */
    for (int i = 0; i < 7; ++i) p = c[i] + z * p;
    return w + (((1.0 - w) - hz) + z * z * p);  /* recovers the rounding of 1 - z / 2 */
}

double mlcc_sin(double x)
{
    if (x != x || mlcc_fabs(x) == __builtin_inf()) return x - x;
    double r;
    switch (reduce_pio2(x, &r)) {
    case 0: return sin_small(r);
    case 1: return cos_small(r);
    case 2: return -sin_small(r);
    default: return -cos_small(r);
    }
}

double mlcc_cos(double x)
{
    if (x != x || mlcc_fabs(x) == __builtin_inf()) return x - x;
    double r;
    switch (reduce_pio2(x, &r)) {
    case 0: return cos_small(r);
    case 1: return -sin_small(r);
    case 2: return -cos_small(r);
    default: return sin_small(r);
    }
}

double mlcc_tanh(double x)
{
    const double a = mlcc_fabs(x);
    if (x != x) return x;
    double r;
    if (a > 22.0) {
        r = 1.0;
    } else if (a >= 1.0) {
        r = 1.0 - 2.0 / (mlcc_expm1(2.0 * a) + 2.0);
    } else if (a > 0x1p-28) {
        const double t = mlcc_expm1(-2.0 * a);
        r = -t / (t + 2.0);
    } else {
        return x;
    }
    return mlcc_copysign(r, x);
}
