/* SIMD shim for NEON (AArch64, and Armv7 with VFPv4): 4 float lanes (see avx512.h). */
#ifndef MLCC_SIMD_NEON_H
#define MLCC_SIMD_NEON_H

#include <stddef.h>
#include <arm_neon.h>

typedef float32x4_t mlcc_f32v;
#define MLCC_F32V_LANES 4u
/* what a kernel may hold in registers at once: v0-v31 on AArch64, q0-q15 on Armv7 */
#if defined(__aarch64__)
#define MLCC_F32V_REGISTERS 32u
#else
#define MLCC_F32V_REGISTERS 16u
#endif

static inline mlcc_f32v mlcc_f32v_load(const float *p) { return vld1q_f32(p); }
static inline void mlcc_f32v_store(float *p, mlcc_f32v v) { vst1q_f32(p, v); }
static inline mlcc_f32v mlcc_f32v_splat(float x) { return vdupq_n_f32(x); }
static inline mlcc_f32v mlcc_f32v_zero(void) { return vdupq_n_f32(0.0f); }
#include "mlcc/simd/partial-copy.h"  /* mlcc_f32v_load_partial, _store_partial: no masked form */
/* acc + a * b, fused */
static inline mlcc_f32v mlcc_f32v_fma(mlcc_f32v acc, mlcc_f32v a, mlcc_f32v b) { return vfmaq_f32(acc, a, b); }
static inline mlcc_f32v mlcc_f32v_add(mlcc_f32v a, mlcc_f32v b) { return vaddq_f32(a, b); }
static inline mlcc_f32v mlcc_f32v_mul(mlcc_f32v a, mlcc_f32v b) { return vmulq_f32(a, b); }
static inline mlcc_f32v mlcc_f32v_max(mlcc_f32v a, mlcc_f32v b) { return vmaxq_f32(a, b); }
static inline mlcc_f32v mlcc_f32v_min(mlcc_f32v a, mlcc_f32v b) { return vminq_f32(a, b); }

/* For the vector math (mlcc/simd/math.h) and the kernels' reductions (see avx512.h). Armv7 NEON flushes
 * subnormal inputs and results to zero, and has no vector division (see mlcc_f32v_div). */
typedef int32x4_t mlcc_i32v;
typedef uint32x4_t mlcc_f32vm;  /* all-ones lanes where true */

static inline mlcc_f32v mlcc_f32v_sub(mlcc_f32v a, mlcc_f32v b) { return vsubq_f32(a, b); }
#if defined(__aarch64__)
static inline mlcc_f32v mlcc_f32v_div(mlcc_f32v a, mlcc_f32v b) { return vdivq_f32(a, b); }
#else
/* a * (1 / b): the reciprocal estimate refined by two Newton-Raphson steps, within 2 ulp of a / b */
static inline mlcc_f32v mlcc_f32v_div(mlcc_f32v a, mlcc_f32v b)
{
    float32x4_t r = vrecpeq_f32(b);
    r = vmulq_f32(r, vrecpsq_f32(b, r));
    r = vmulq_f32(r, vrecpsq_f32(b, r));
    return vmulq_f32(a, r);
}
#endif
static inline mlcc_f32v mlcc_f32v_abs(mlcc_f32v a) { return vabsq_f32(a); }
static inline mlcc_f32v mlcc_f32v_copysign(mlcc_f32v mag, mlcc_f32v sign) { return vbslq_f32(vdupq_n_u32(0x80000000u), sign, mag); }
static inline mlcc_i32v mlcc_f32v_bits(mlcc_f32v a) { return vreinterpretq_s32_f32(a); }
static inline mlcc_f32v mlcc_f32v_from_bits(mlcc_i32v a) { return vreinterpretq_f32_s32(a); }
static inline mlcc_i32v mlcc_i32v_shl(mlcc_i32v a, unsigned count) { return vshlq_s32(a, vdupq_n_s32((int32_t)count)); }
static inline mlcc_f32vm mlcc_f32v_lt(mlcc_f32v a, mlcc_f32v b) { return vcltq_f32(a, b); }
static inline mlcc_f32vm mlcc_f32v_isnan(mlcc_f32v a) { return vmvnq_u32(vceqq_f32(a, a)); }
static inline mlcc_f32v mlcc_f32v_select(mlcc_f32vm m, mlcc_f32v a, mlcc_f32v b) { return vbslq_f32(m, a, b); }
#if defined(__aarch64__)
static inline float mlcc_f32v_reduce_add(mlcc_f32v a) { return vaddvq_f32(a); }
static inline float mlcc_f32v_reduce_max(mlcc_f32v a) { return vmaxvq_f32(a); }
#else
static inline float mlcc_f32v_reduce_add(mlcc_f32v a)
{
    const float32x2_t s = vadd_f32(vget_low_f32(a), vget_high_f32(a));
    return vget_lane_f32(vpadd_f32(s, s), 0);
}
static inline float mlcc_f32v_reduce_max(mlcc_f32v a)
{
    const float32x2_t s = vmax_f32(vget_low_f32(a), vget_high_f32(a));
    return vget_lane_f32(vpmax_f32(s, s), 0);
}
#endif

#endif /* MLCC_SIMD_NEON_H */
