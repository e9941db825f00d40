/* mlcc math: the runtime's own <math.h> functions, for targets without a C library (bare metal).
 *
 * Portable C99, no libc, no tables written, no errno. Freestanding builds (targets with libc = false) reach
 * these through mlcc/freestanding/math.h, which maps the standard names (expf -> mlcc_expf); hosted builds
 * keep their C library and may call these directly. Accuracy, measured by tests/targets/test_baremetal.py
 * over sweeps of inputs against numpy in double (long double for the double forms), in result ulps:
 *
 *   exact (correctly rounded): sqrtf fabsf floorf ceilf truncf rintf roundf fminf fmaxf fmodf copysignf,
 *                              and their double forms
 *   <= 1 ulp:    expf exp2f logf powf, exp
 *   <= 1.5 ulp:  expm1f log1pf, log expm1 log1p
 *   <= 2 ulp:    log2f log10f atanf sinhf coshf tanhf asinhf acoshf atanhf erff, tanh
 *   <= 2.5 ulp:  sinf cosf, sin cos;  <= 3 ulp: tanf;  <= 5 ulp: asinf acosf
 *
 * The trigonometric functions reduce their argument by pi/2 in three parts, exactly while |x| < 2^20; past
 * that (far from what a model computes) their results are not accurate, though still within [-1, 1].
 * NaN in gives NaN out; infinities and signed zeros follow C99 Annex F.
 */
#ifndef MLCC_MATH_H
#define MLCC_MATH_H

float mlcc_sqrtf(float x);
float mlcc_fabsf(float x);
float mlcc_floorf(float x);
float mlcc_ceilf(float x);
float mlcc_truncf(float x);
float mlcc_rintf(float x);
float mlcc_roundf(float x);
float mlcc_fminf(float x, float y);
float mlcc_fmaxf(float x, float y);
float mlcc_fmodf(float x, float y);
float mlcc_copysignf(float x, float y);
float mlcc_expf(float x);
float mlcc_exp2f(float x);
float mlcc_expm1f(float x);
float mlcc_logf(float x);
float mlcc_log2f(float x);
float mlcc_log10f(float x);
float mlcc_log1pf(float x);
float mlcc_powf(float x, float y);
float mlcc_sinf(float x);
float mlcc_cosf(float x);
float mlcc_tanf(float x);
float mlcc_asinf(float x);
float mlcc_acosf(float x);
float mlcc_atanf(float x);
float mlcc_sinhf(float x);
float mlcc_coshf(float x);
float mlcc_tanhf(float x);
float mlcc_asinhf(float x);
float mlcc_acoshf(float x);
float mlcc_atanhf(float x);
float mlcc_erff(float x);

double mlcc_sqrt(double x);
double mlcc_fabs(double x);
double mlcc_floor(double x);
double mlcc_ceil(double x);
double mlcc_trunc(double x);
double mlcc_rint(double x);
double mlcc_round(double x);
double mlcc_fmin(double x, double y);
double mlcc_fmax(double x, double y);
double mlcc_fmod(double x, double y);
double mlcc_copysign(double x, double y);
double mlcc_exp(double x);
double mlcc_expm1(double x);
double mlcc_log(double x);
double mlcc_log1p(double x);
double mlcc_sin(double x);
double mlcc_cos(double x);
double mlcc_tanh(double x);

#endif /* MLCC_MATH_H */
