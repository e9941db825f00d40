/* The SIMD shim this translation unit is compiled for, picked from the compiler's predefined macros (the
 * target's -mcpu/-m flags): kernels written on mlcc_f32v include this and guard their vector code with
 * MLCC_HAVE_F32V, keeping the portable scalar code for targets without one (x86_64-baseline, wasm32-scalar,
 * riscv64-scalar, Cortex-M). The f32-gemm variants include their own shim by name instead: several of
 * them are built side by side for the tests. */
#ifndef MLCC_SIMD_H
#define MLCC_SIMD_H

#if defined(__AVX512F__)
#include "mlcc/simd/avx512.h"
#define MLCC_HAVE_F32V 1
#elif defined(__AVX2__) && defined(__FMA__)
#include "mlcc/simd/avx2.h"
#define MLCC_HAVE_F32V 1
#elif defined(__ARM_NEON) && (defined(__aarch64__) || defined(__ARM_FEATURE_FMA))
#include "mlcc/simd/neon.h"
#define MLCC_HAVE_F32V 1
#elif defined(__riscv_vector)
#include "mlcc/simd/rvv.h"
#define MLCC_HAVE_F32V 1
#elif defined(__wasm_simd128__)
#include "mlcc/simd/wasmsimd.h"
#define MLCC_HAVE_F32V 1
#else
#define MLCC_HAVE_F32V 0
#endif

#include "mlcc/runtime.h"

/* y[i] *= s for i < n: in the shim's vectors, the tail (or all of it, without a shim) lane by lane. */
static inline void mlcc_f32_scale_row(size_t n, float s, float *MLCC_RESTRICT y)
{
    size_t i = 0;
#if MLCC_HAVE_F32V
    const mlcc_f32v vs = mlcc_f32v_splat(s);
    for (; i + MLCC_F32V_LANES <= n; i += MLCC_F32V_LANES) mlcc_f32v_store(y + i, mlcc_f32v_mul(mlcc_f32v_load(y + i), vs));
#endif
    for (; i < n; ++i) y[i] *= s;
}

#endif /* MLCC_SIMD_H */
