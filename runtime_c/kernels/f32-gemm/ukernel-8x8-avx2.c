/* f32-gemm 8x8 and 1x8 micro-kernels for AVX2 + FMA (see ukernel-simd.h): one vector of columns, for
 * products 8 or fewer columns wide (NHWC convolutions with few output channels), where 6x16 would compute
 * a zero half. 8 accumulators + 1 of B + 1 broadcast of 16 registers (of 32 with AVX-512VL). */
#if defined(__AVX2__) && defined(__FMA__)
#include "mlcc/simd/avx2.h"
#define MR 8u
#define NR 8u
#define KC 1024u
#define MC 128u
#define NC 2048u
#define TILE mlcc_f32_gemm_ukernel_8x8__avx2
#define ROW mlcc_f32_gemm_ukernel_1x8__avx2
#define CONFIG mlcc_f32_gemm_config_8x8__avx2
#include "ukernel-simd.h"
#endif
