/* f32-gemm 6x16 and 1x16 micro-kernels for AArch64 NEON (see ukernel-simd.h): 24 accumulators of its
 * 32 vector registers. */
#if defined(__ARM_NEON) && defined(__aarch64__)
#include "mlcc/simd/neon.h"
#define MR 6u
#define NR 16u
#define KC 1024u
#define MC 126u
#define NC 1024u
#define TILE mlcc_f32_gemm_ukernel_6x16__neon
#define ROW mlcc_f32_gemm_ukernel_1x16__neon
#define CONFIG mlcc_f32_gemm_config_6x16__neon
#include "ukernel-simd.h"
#endif
