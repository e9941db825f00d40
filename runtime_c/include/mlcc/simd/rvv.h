/* SIMD shim for the RISC-V vector extension (RVV 1.0): 8 float lanes as a fixed-length vector that clang
 * lowers to RVV instructions (sizeless vfloat32m1_t cannot live in the arrays of accumulators a tile
 * needs). Written with clang's vector extensions, so it is portable C for clang and gcc (see avx512.h). */
#ifndef MLCC_SIMD_RVV_H
#define MLCC_SIMD_RVV_H

#include <stddef.h>

typedef float mlcc_f32v __attribute__((vector_size(32), aligned(4)));
#define MLCC_F32V_LANES 8u
#define MLCC_F32V_REGISTERS 16u  /* v0-v31 as 16 pairs: 8 floats take two registers at the baseline VLEN of 128 */

static inline mlcc_f32v mlcc_f32v_load(const float *p)
{
    mlcc_f32v v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
static inline void mlcc_f32v_store(float *p, mlcc_f32v v) { __builtin_memcpy(p, &v, sizeof v); }
static inline mlcc_f32v mlcc_f32v_splat(float x) { return (mlcc_f32v){x, x, x, x, x, x, x, x}; }
static inline mlcc_f32v mlcc_f32v_zero(void) { return mlcc_f32v_splat(0.0f); }
#include "mlcc/simd/partial-copy.h"  /* mlcc_f32v_load_partial, _store_partial: no masked form */
/* acc + a * b (contracted into vfmacc by -ffp-contract=on, clang's default) */
static inline mlcc_f32v mlcc_f32v_fma(mlcc_f32v acc, mlcc_f32v a, mlcc_f32v b) { return acc + a * b; }
static inline mlcc_f32v mlcc_f32v_add(mlcc_f32v a, mlcc_f32v b) { return a + b; }
static inline mlcc_f32v mlcc_f32v_mul(mlcc_f32v a, mlcc_f32v b) { return a * b; }
static inline mlcc_f32v mlcc_f32v_max(mlcc_f32v a, mlcc_f32v b) { return __builtin_elementwise_max(a, b); }
static inline mlcc_f32v mlcc_f32v_min(mlcc_f32v a, mlcc_f32v b) { return __builtin_elementwise_min(a, b); }

/* For the vector math (mlcc/simd/math.h) and the kernels' reductions (see avx512.h). */
typedef int mlcc_i32v __attribute__((vector_size(32), aligned(4)));
typedef mlcc_i32v mlcc_f32vm;  /* all-ones lanes where true, as vector comparisons give */

static inline mlcc_f32v mlcc_f32v_sub(mlcc_f32v a, mlcc_f32v b) { return a - b; }
static inline mlcc_f32v mlcc_f32v_div(mlcc_f32v a, mlcc_f32v b) { return a / b; }
static inline mlcc_f32v mlcc_f32v_abs(mlcc_f32v a) { return __builtin_elementwise_abs(a); }
static inline mlcc_f32v mlcc_f32v_copysign(mlcc_f32v mag, mlcc_f32v sign) { return __builtin_elementwise_copysign(mag, sign); }
static inline mlcc_i32v mlcc_f32v_bits(mlcc_f32v a) { return (mlcc_i32v)a; }
static inline mlcc_f32v mlcc_f32v_from_bits(mlcc_i32v a) { return (mlcc_f32v)a; }
static inline mlcc_i32v mlcc_i32v_shl(mlcc_i32v a, unsigned count) { return a << (int)count; }
static inline mlcc_f32vm mlcc_f32v_lt(mlcc_f32v a, mlcc_f32v b) { return a < b; }
static inline mlcc_f32vm mlcc_f32v_isnan(mlcc_f32v a) { return a != a; }
static inline mlcc_f32v mlcc_f32v_select(mlcc_f32vm m, mlcc_f32v a, mlcc_f32v b)
{
    return (mlcc_f32v)((m & (mlcc_i32v)a) | (~m & (mlcc_i32v)b));
}
static inline float mlcc_f32v_reduce_add(mlcc_f32v a)
{
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}
static inline float mlcc_f32v_reduce_max(mlcc_f32v a) { return __builtin_reduce_max(a); }

#endif /* MLCC_SIMD_RVV_H */
