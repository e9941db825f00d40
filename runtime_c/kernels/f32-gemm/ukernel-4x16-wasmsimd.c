/* f32-gemm 6x16 and 1x16 micro-kernels for WebAssembly SIMD128 (see ukernel-simd.h). */
#if defined(__wasm_simd128__)
#include "mlcc/simd/wasmsimd.h"
#define MR 6u
#define NR 16u
#define KC 512u
#define MC 96u
#define TILE mlcc_f32_gemm_ukernel_6x16__wasmsimd
#define ROW mlcc_f32_gemm_ukernel_1x16__wasmsimd
#define CONFIG mlcc_f32_gemm_config_6x16__wasmsimd
#include "ukernel-simd.h"
#endif
