/* SIMD shim for AVX2 + FMA: 8 float lanes (see avx512.h). */
#ifndef MLCC_SIMD_AVX2_H
#define MLCC_SIMD_AVX2_H

#include <stddef.h>
#include <immintrin.h>

typedef __m256 mlcc_f32v;
#define MLCC_F32V_LANES 8u
#define MLCC_F32V_REGISTERS 16u  /* ymm0-15: what a kernel may hold in registers at once */

static inline mlcc_f32v mlcc_f32v_load(const float *p) { return _mm256_loadu_ps(p); }
static inline void mlcc_f32v_store(float *p, mlcc_f32v v) { _mm256_storeu_ps(p, v); }
static inline mlcc_f32v mlcc_f32v_splat(float x) { return _mm256_set1_ps(x); }
static inline mlcc_f32v mlcc_f32v_zero(void) { return _mm256_setzero_ps(); }
/* The first n < LANES lanes (see avx512.h). Loads: vmaskmovps, its mask 8 - n words into a row of 8 all-ones
 * then 8 zero words. Stores: 4, 2 and 1 floats as n's bits say, since vmaskmovps to memory is microcoded on
 * AMD Zen. */
static inline mlcc_f32v mlcc_f32v_load_partial(const float *p, size_t n)
{
    static const int lanes_mask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_maskload_ps(p, _mm256_loadu_si256((const __m256i *)(const void *)(lanes_mask + 8 - n)));
}
static inline void mlcc_f32v_store_partial(float *p, mlcc_f32v v, size_t n)
{
    __m128 part = _mm256_castps256_ps128(v);
    if (n & 4u) {
        _mm_storeu_ps(p, part);
        part = _mm256_extractf128_ps(v, 1);
        p += 4;
    }
    if (n & 2u) {
        _mm_storel_pi((__m64 *)(void *)p, part);
        part = _mm_movehl_ps(part, part);
        p += 2;
    }
    if (n & 1u) _mm_store_ss(p, part);
}
/* acc + a * b */
static inline mlcc_f32v mlcc_f32v_fma(mlcc_f32v acc, mlcc_f32v a, mlcc_f32v b) { return _mm256_fmadd_ps(a, b, acc); }
static inline mlcc_f32v mlcc_f32v_add(mlcc_f32v a, mlcc_f32v b) { return _mm256_add_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_mul(mlcc_f32v a, mlcc_f32v b) { return _mm256_mul_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_max(mlcc_f32v a, mlcc_f32v b) { return _mm256_max_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_min(mlcc_f32v a, mlcc_f32v b) { return _mm256_min_ps(a, b); }

/* For the vector math (mlcc/simd/math.h) and the kernels' reductions (see avx512.h). */
typedef __m256i mlcc_i32v;
typedef __m256 mlcc_f32vm;  /* all-ones lanes where true */

static inline mlcc_f32v mlcc_f32v_sub(mlcc_f32v a, mlcc_f32v b) { return _mm256_sub_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_div(mlcc_f32v a, mlcc_f32v b) { return _mm256_div_ps(a, b); }
static inline mlcc_f32v mlcc_f32v_abs(mlcc_f32v a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
static inline mlcc_f32v mlcc_f32v_copysign(mlcc_f32v mag, mlcc_f32v sign)
{
    const __m256 sign_bit = _mm256_set1_ps(-0.0f);
    return _mm256_or_ps(_mm256_andnot_ps(sign_bit, mag), _mm256_and_ps(sign_bit, sign));
}
static inline mlcc_i32v mlcc_f32v_bits(mlcc_f32v a) { return _mm256_castps_si256(a); }
static inline mlcc_f32v mlcc_f32v_from_bits(mlcc_i32v a) { return _mm256_castsi256_ps(a); }
static inline mlcc_i32v mlcc_i32v_shl(mlcc_i32v a, unsigned count) { return _mm256_slli_epi32(a, (int)count); }
static inline mlcc_f32vm mlcc_f32v_lt(mlcc_f32v a, mlcc_f32v b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
static inline mlcc_f32vm mlcc_f32v_isnan(mlcc_f32v a) { return _mm256_cmp_ps(a, a, _CMP_UNORD_Q); }
static inline mlcc_f32v mlcc_f32v_select(mlcc_f32vm m, mlcc_f32v a, mlcc_f32v b) { return _mm256_blendv_ps(b, a, m); }
static inline float mlcc_f32v_reduce_add(mlcc_f32v a)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}
static inline float mlcc_f32v_reduce_max(mlcc_f32v a)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_max_ss(s, _mm_movehdup_ps(s)));
}

#endif /* MLCC_SIMD_AVX2_H */
