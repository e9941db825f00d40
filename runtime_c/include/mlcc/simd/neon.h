/* SIMD shim for NEON (AArch64, and Armv7 with VFPv4): 4 float lanes (see avx512.h). */
#ifndef MLCC_SIMD_NEON_H
#define MLCC_SIMD_NEON_H

#include <arm_neon.h>

typedef float32x4_t mlcc_f32v;
#define MLCC_F32V_LANES 4u

static inline mlcc_f32v mlcc_f32v_load(const float *p) { return vld1q_f32(p); }
static inline void mlcc_f32v_store(float *p, mlcc_f32v v) { vst1q_f32(p, v); }
static inline mlcc_f32v mlcc_f32v_splat(float x) { return vdupq_n_f32(x); }
static inline mlcc_f32v mlcc_f32v_zero(void) { return vdupq_n_f32(0.0f); }
/* acc + a * b, fused */
static inline mlcc_f32v mlcc_f32v_fma(mlcc_f32v acc, mlcc_f32v a, mlcc_f32v b) { return vfmaq_f32(acc, a, b); }
static inline mlcc_f32v mlcc_f32v_add(mlcc_f32v a, mlcc_f32v b) { return vaddq_f32(a, b); }
static inline mlcc_f32v mlcc_f32v_mul(mlcc_f32v a, mlcc_f32v b) { return vmulq_f32(a, b); }
static inline mlcc_f32v mlcc_f32v_max(mlcc_f32v a, mlcc_f32v b) { return vmaxq_f32(a, b); }
static inline mlcc_f32v mlcc_f32v_min(mlcc_f32v a, mlcc_f32v b) { return vminq_f32(a, b); }

#endif /* MLCC_SIMD_NEON_H */
