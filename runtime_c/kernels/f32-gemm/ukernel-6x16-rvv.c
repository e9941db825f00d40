/* f32-gemm 6x16 and 1x16 micro-kernels for RISC-V RVV 1.0 (see ukernel-simd.h). */
#if defined(__riscv_vector)
#include "mlcc/simd/rvv.h"
#define MR 6u
#define NR 16u
#define KC 512u
#define MC 126u
#define NC 1024u
#define TILE mlcc_f32_gemm_ukernel_6x16__rvv
#define ROW mlcc_f32_gemm_ukernel_1x16__rvv
#define CONFIG mlcc_f32_gemm_config_6x16__rvv
#include "ukernel-simd.h"
#endif
