/* The SIMD shim this translation unit is compiled for (mlcc/isa.h picks it): kernels written on mlcc_f32v
 * include this, guard their vector code with MLCC_HAVE_F32V, keeping the portable scalar code for targets
 * without one (x86_64-baseline, wasm32-scalar, riscv64-scalar, Cortex-M), and name their entry points
 * MLCC_ISA_NAME(...). The f32-gemm variants include their own shim by name instead: several of them are
 * built side by side for the tests. */
#ifndef MLCC_SIMD_H
#define MLCC_SIMD_H

#include "mlcc/isa.h"

#ifdef MLCC_ISA_HEADER
#include MLCC_ISA_HEADER
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
