/* SIMD shim for WebAssembly SIMD128: 4 float lanes (see avx512.h). No fused multiply-add in SIMD128:
 * mlcc_f32v_fma is a multiply then an add. */
#ifndef MLCC_SIMD_WASMSIMD_H
#define MLCC_SIMD_WASMSIMD_H

#include <wasm_simd128.h>

typedef v128_t mlcc_f32v;
#define MLCC_F32V_LANES 4u

static inline mlcc_f32v mlcc_f32v_load(const float *p) { return wasm_v128_load(p); }
static inline void mlcc_f32v_store(float *p, mlcc_f32v v) { wasm_v128_store(p, v); }
static inline mlcc_f32v mlcc_f32v_splat(float x) { return wasm_f32x4_splat(x); }
static inline mlcc_f32v mlcc_f32v_zero(void) { return wasm_f32x4_const_splat(0.0f); }
/* acc + a * b */
static inline mlcc_f32v mlcc_f32v_fma(mlcc_f32v acc, mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_add(acc, wasm_f32x4_mul(a, b)); }
static inline mlcc_f32v mlcc_f32v_add(mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_add(a, b); }
static inline mlcc_f32v mlcc_f32v_mul(mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_mul(a, b); }
/* pmax/pmin: one instruction each (a NaN in b passes through instead of propagating) */
static inline mlcc_f32v mlcc_f32v_max(mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_pmax(a, b); }
static inline mlcc_f32v mlcc_f32v_min(mlcc_f32v a, mlcc_f32v b) { return wasm_f32x4_pmin(a, b); }

#endif /* MLCC_SIMD_WASMSIMD_H */
