/* f32-gemm 4x8 and 1x8 micro-kernels for Armv7 NEON with VFPv4's fused multiply-add (see ukernel-simd.h):
 * 8 accumulators + 2 vectors of B + a broadcast of its 16 quad registers. AArch64 takes it for products 8 or
 * fewer columns wide. */
#if defined(__ARM_NEON) && defined(__ARM_FEATURE_FMA)
#include "mlcc/simd/neon.h"
#define MR 4u
#define NR 8u
#define KC 1024u
#define MC 64u
#define NC 512u
#define TILE mlcc_f32_gemm_ukernel_4x8__neon
#define ROW mlcc_f32_gemm_ukernel_1x8__neon
#define CONFIG mlcc_f32_gemm_config_4x8__neon
#include "ukernel-simd.h"
#endif
