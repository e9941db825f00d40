/* f32-gemm 4x16 and 1x16 micro-kernels for WebAssembly SIMD128 (see ukernel-simd.h). Engines map SIMD128
 * onto the 16 SSE/NEON-class registers they allocate: 8 accumulators + 4 vectors of B + a broadcast fit,
 * a 6x16 tile spills (half the speed in wasmtime). */
#if defined(__wasm_simd128__)
#include "mlcc/simd/wasmsimd.h"
#define MR 4u
#define NR 16u
#define KC 512u
#define MC 96u
#define NC 512u
#define TILE mlcc_f32_gemm_ukernel_4x16__wasmsimd
#define ROW mlcc_f32_gemm_ukernel_1x16__wasmsimd
#define CONFIG mlcc_f32_gemm_config_4x16__wasmsimd
#include "ukernel-simd.h"
#endif
