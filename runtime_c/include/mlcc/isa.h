/* The SIMD shim a translation unit is compiled for, picked from the compiler's predefined macros (the
 * target's -mcpu/-m flags), and the suffix it gives kernel names. Light on purpose (no intrinsics): the
 * kernel headers include it to declare the functions the generated C calls.
 *
 * Kernel names say what and where: mlcc_<dtype>_<family>_<what>__<where>. A kernel written once on the
 * shim (mlcc/simd.h) is defined as MLCC_ISA_NAME(mlcc_f32_pool_max_nhwc), which is
 * mlcc_f32_pool_max_nhwc__avx512 when built for AVX-512 and mlcc_f32_pool_max_nhwc__scalar on a target
 * without a shim (the same loops a lane at a time). A family's oracle is __reference; kernels written on
 * one ISA's intrinsics (the f32-gemm tiles) spell their ISA out. The same order, as data, is
 * runtime_c/include/mlcc/simd/manifest.toml (mlcc/kernels.py reads it; tests/kernels checks they agree). */
#ifndef MLCC_ISA_H
#define MLCC_ISA_H

#if defined(__AVX512F__)
#define MLCC_ISA avx512
#define MLCC_ISA_HEADER "mlcc/simd/avx512.h"
#elif defined(__AVX2__) && defined(__FMA__)
#define MLCC_ISA avx2
#define MLCC_ISA_HEADER "mlcc/simd/avx2.h"
#elif defined(__ARM_NEON) && (defined(__aarch64__) || defined(__ARM_FEATURE_FMA))
#define MLCC_ISA neon
#define MLCC_ISA_HEADER "mlcc/simd/neon.h"
#elif defined(__riscv_vector)
#define MLCC_ISA rvv
#define MLCC_ISA_HEADER "mlcc/simd/rvv.h"
#elif defined(__wasm_simd128__)
#define MLCC_ISA wasmsimd
#define MLCC_ISA_HEADER "mlcc/simd/wasmsimd.h"
#else
#define MLCC_ISA scalar
#endif

/* name__<MLCC_ISA>; two levels so MLCC_ISA expands before it is pasted */
#define MLCC_ISA_NAME(name) MLCC_ISA_PASTE_(name, MLCC_ISA)
#define MLCC_ISA_PASTE_(name, isa) MLCC_ISA_PASTE2_(name, isa)
#define MLCC_ISA_PASTE2_(name, isa) name##__##isa

#endif /* MLCC_ISA_H */
