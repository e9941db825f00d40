/* f32-gemm 12x16 and 1x16 micro-kernels for AVX-512 (see ukernel-simd.h): one vector of columns, for
 * products 16 or fewer columns wide (NHWC convolutions with few output channels), where 8x32 would
 * compute a zero half. 12 accumulators + 1 of B + 1 broadcast of 32 registers. */
#if defined(__AVX512F__)
#include "mlcc/simd/avx512.h"
#define MR 12u
#define NR 16u
#define KC 1024u
#define MC 252u
#define NC 4096u
#define TILE mlcc_f32_gemm_ukernel_12x16__avx512
#define ROW mlcc_f32_gemm_ukernel_1x16__avx512
#define CONFIG mlcc_f32_gemm_config_12x16__avx512
#include "ukernel-simd.h"
#endif
