/* SIMD shim for AVX2 + FMA: 8 float lanes (see avx512.h). */
#ifndef MLCC_SIMD_AVX2_H
#define MLCC_SIMD_AVX2_H

#include <immintrin.h>

typedef __m256 mlcc_f32v;
#define MLCC_F32V_LANES 8u

static inline mlcc_f32v mlcc_f32v_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void mlcc_f32v_store(float *p, mlcc_f32v v) { _mm256_storeu_ps(p, v); }
static inline mlcc_f32v mlcc_f32v_splat(float x) { return _mm256_set1_ps(x); }
static inline mlcc_f32v mlcc_f32v_zero(void) { return _mm256_setzero_ps(); }
/* acc + a * b */
static inline mlcc_f32v mlcc_f32v_fma(mlcc_f32v acc, mlcc_f32v a, mlcc_f32v b) { return _mm256_fmadd_ps(a, b, acc); }
static inline mlcc_f32v mlcc_f32v_add(mlcc_f32v a, mlcc_f32v b) { return _mm256_add_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_mul(mlcc_f32v a, mlcc_f32v b) { return _mm256_mul_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_max(mlcc_f32v a, mlcc_f32v b) { return _mm256_max_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_min(mlcc_f32v a, mlcc_f32v b) { return _mm256_min_ps(a, b); }

#endif /* MLCC_SIMD_AVX2_H */
