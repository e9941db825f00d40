/* SIMD shim for AVX-512F: 16 float lanes. The f32 vector operations every kernel family is written on;
 * one header per ISA (avx2.h, neon.h, wasmsimd.h, generic.h) with the same names. */
#ifndef MLCC_SIMD_AVX512_H
#define MLCC_SIMD_AVX512_H

#include <stddef.h>
#include <immintrin.h>

typedef __m512 mlcc_f32v;
#define MLCC_F32V_LANES 16u
#define MLCC_F32V_REGISTERS 32u  /* zmm0-31: what a kernel may hold in registers at once */

static inline mlcc_f32v mlcc_f32v_load(const float *p) { return _mm512_loadu_ps(p); }
static inline void mlcc_f32v_store(float *p, mlcc_f32v v) { _mm512_storeu_ps(p, v); }
static inline mlcc_f32v mlcc_f32v_splat(float x) { return _mm512_set1_ps(x); }
static inline mlcc_f32v mlcc_f32v_zero(void) { return _mm512_setzero_ps(); }
/* The first n < LANES lanes of p (the rest read as 0) and of v (the rest never written): masked, one
 * instruction each. */
static inline mlcc_f32v mlcc_f32v_load_partial(const float *p, size_t n)
{
    return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
}
static inline void mlcc_f32v_store_partial(float *p, mlcc_f32v v, size_t n)
{
    _mm512_mask_storeu_ps(p, (__mmask16)((1u << n) - 1u), v);
}
/* acc + a * b */
static inline mlcc_f32v mlcc_f32v_fma(mlcc_f32v acc, mlcc_f32v a, mlcc_f32v b) { return _mm512_fmadd_ps(a, b, acc); }
static inline mlcc_f32v mlcc_f32v_add(mlcc_f32v a, mlcc_f32v b) { return _mm512_add_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_mul(mlcc_f32v a, mlcc_f32v b) { return _mm512_mul_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_max(mlcc_f32v a, mlcc_f32v b) { return _mm512_max_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_min(mlcc_f32v a, mlcc_f32v b) { return _mm512_min_ps(a, b); }

/* For the vector math (mlcc/simd/math.h) and the kernels' reductions. */
typedef __m512i mlcc_i32v;    /* 32-bit integer lanes: the bits of an mlcc_f32v */
typedef __mmask16 mlcc_f32vm; /* a lane mask, from a comparison */

static inline mlcc_f32v mlcc_f32v_sub(mlcc_f32v a, mlcc_f32v b) { return _mm512_sub_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_div(mlcc_f32v a, mlcc_f32v b) { return _mm512_div_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_abs(mlcc_f32v a) { return _mm512_abs_ps(a); }
/* the magnitude of mag with the sign of sign */
static inline mlcc_f32v mlcc_f32v_copysign(mlcc_f32v mag, mlcc_f32v sign)
{
    const __m512i sign_bit = _mm512_castps_si512(_mm512_set1_ps(-0.0f));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_andnot_si512(sign_bit, _mm512_castps_si512(mag)),
                                               _mm512_and_si512(sign_bit, _mm512_castps_si512(sign))));
}
static inline mlcc_i32v mlcc_f32v_bits(mlcc_f32v a) { return _mm512_castps_si512(a); }
static inline mlcc_f32v mlcc_f32v_from_bits(mlcc_i32v a) { return _mm512_castsi512_ps(a); }
static inline mlcc_i32v mlcc_i32v_shl(mlcc_i32v a, unsigned count) { return _mm512_slli_epi32(a, count); }
static inline mlcc_f32vm mlcc_f32v_lt(mlcc_f32v a, mlcc_f32v b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
static inline mlcc_f32vm mlcc_f32v_isnan(mlcc_f32v a) { return _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q); }
/* m ? a : b, per lane */
static inline mlcc_f32v mlcc_f32v_select(mlcc_f32vm m, mlcc_f32v a, mlcc_f32v b) { return _mm512_mask_blend_ps(m, b, a); }
static inline float mlcc_f32v_reduce_add(mlcc_f32v a) { return _mm512_reduce_add_ps(a); }
static inline float mlcc_f32v_reduce_max(mlcc_f32v a) { return _mm512_reduce_max_ps(a); }

#endif /* MLCC_SIMD_AVX512_H */
