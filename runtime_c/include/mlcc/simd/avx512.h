/* SIMD shim for AVX-512F: 16 float lanes. The f32 vector operations every kernel family is written on;
 * one header per ISA (avx2.h, neon.h, wasmsimd.h, generic.h) with the same names. */
#ifndef MLCC_SIMD_AVX512_H
#define MLCC_SIMD_AVX512_H

#include <immintrin.h>

typedef __m512 mlcc_f32v;
#define MLCC_F32V_LANES 16u

static inline mlcc_f32v mlcc_f32v_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void mlcc_f32v_store(float *p, mlcc_f32v v) { _mm512_storeu_ps(p, v); }
static inline mlcc_f32v mlcc_f32v_splat(float x) { return _mm512_set1_ps(x); }
static inline mlcc_f32v mlcc_f32v_zero(void) { return _mm512_setzero_ps(); }
/* acc + a * b */
static inline mlcc_f32v mlcc_f32v_fma(mlcc_f32v acc, mlcc_f32v a, mlcc_f32v b) { return _mm512_fmadd_ps(a, b, acc); }
static inline mlcc_f32v mlcc_f32v_add(mlcc_f32v a, mlcc_f32v b) { return _mm512_add_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_mul(mlcc_f32v a, mlcc_f32v b) { return _mm512_mul_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_max(mlcc_f32v a, mlcc_f32v b) { return _mm512_max_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_min(mlcc_f32v a, mlcc_f32v b) { return _mm512_min_ps(a, b); }

#endif /* MLCC_SIMD_AVX512_H */
