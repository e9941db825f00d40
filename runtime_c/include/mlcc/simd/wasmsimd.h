/* SIMD shim for WebAssembly SIMD128: 4 float lanes (see avx512.h). No fused multiply-add in SIMD128:
 * mlcc_f32v_fma is a multiply then an add, unless relaxed SIMD is enabled. */
#ifndef MLCC_SIMD_WASMSIMD_H
#define MLCC_SIMD_WASMSIMD_H

#include <stddef.h>
#include <wasm_simd128.h>

typedef v128_t mlcc_f32v;
#define MLCC_F32V_LANES 4u
#define MLCC_F32V_REGISTERS 16u  /* engines on x86 map v128 onto xmm0-15: what a kernel may hold at once */

static inline mlcc_f32v mlcc_f32v_load(const float *p) { return wasm_v128_load(p); }
static inline void mlcc_f32v_store(float *p, mlcc_f32v v) { wasm_v128_store(p, v); }
static inline mlcc_f32v mlcc_f32v_splat(float x) { return wasm_f32x4_splat(x); }
static inline mlcc_f32v mlcc_f32v_zero(void) { return wasm_f32x4_const_splat(0.0f); }
#include "mlcc/simd/partial-copy.h"  /* mlcc_f32v_load_partial, _store_partial: no masked form */
/* acc + a * b; with relaxed SIMD (-mrelaxed-simd, target wasm32-relaxed) fused where the engine's CPU can */
#if defined(__wasm_relaxed_simd__)
static inline mlcc_f32v mlcc_f32v_fma(mlcc_f32v acc, mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_relaxed_madd(a, b, acc); }
#else
static inline mlcc_f32v mlcc_f32v_fma(mlcc_f32v acc, mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b)); }
#endif
static inline mlcc_f32v mlcc_f32v_add(mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_add(a, b); }
static inline mlcc_f32v mlcc_f32v_mul(mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_mul(a, b); }
/* pmax/pmin: one instruction each (a NaN in b passes through instead of propagating) */
static inline mlcc_f32v mlcc_f32v_max(mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_pmax(a, b); }
static inline mlcc_f32v mlcc_f32v_min(mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_pmin(a, b); }

/* For the vector math (mlcc/simd/math.h) and the kernels' reductions (see avx512.h). SIMD128 has one
 * vector type: the integer lanes and the masks are v128_t too. */
typedef v128_t mlcc_i32v;
typedef v128_t mlcc_f32vm;  /* all-ones lanes where true */

static inline mlcc_f32v mlcc_f32v_sub(mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_sub(a, b); }
static inline mlcc_f32v mlcc_f32v_div(mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_div(a, b); }
static inline mlcc_f32v mlcc_f32v_abs(mlcc_f32v a) { return wasm_f32x4_abs(a); }
static inline mlcc_f32v mlcc_f32v_copysign(mlcc_f32v mag, mlcc_f32v sign)
{
    return wasm_v128_bitselect(sign, mag, wasm_f32x4_const_splat(-0.0f));
}
static inline mlcc_i32v mlcc_f32v_bits(mlcc_f32v a) { return a; }
static inline mlcc_f32v mlcc_f32v_from_bits(mlcc_i32v a) { return a; }
static inline mlcc_i32v mlcc_i32v_shl(mlcc_i32v a, unsigned count) { return wasm_i32x4_shl(a, count); }
static inline mlcc_f32vm mlcc_f32v_lt(mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_lt(a, b); }
static inline mlcc_f32vm mlcc_f32v_isnan(mlcc_f32v a) { return wasm_f32x4_ne(a, a); }
static inline mlcc_f32v mlcc_f32v_select(mlcc_f32vm m, mlcc_f32v a, mlcc_f32v b) { return wasm_v128_bitselect(a, b, m); }
static inline float mlcc_f32v_reduce_add(mlcc_f32v a)
{
    const v128_t s = wasm_f32x4_add(a, wasm_i32x4_shuffle(a, a, 2, 3, 0, 1));
    return wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1);
}
static inline float mlcc_f32v_reduce_max(mlcc_f32v a)
{
    const v128_t s = wasm_f32x4_max(a, wasm_i32x4_shuffle(a, a, 2, 3, 0, 1));
    const float s0 = wasm_f32x4_extract_lane(s, 0), s1 = wasm_f32x4_extract_lane(s, 1);
    return s0 > s1 ? s0 : s1;
}

#endif /* MLCC_SIMD_WASMSIMD_H */
