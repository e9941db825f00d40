/* f32-gemm 8x32 and 1x32 micro-kernels for AVX-512 (see ukernel-simd.h). */
#if defined(__AVX512F__)
#include "mlcc/simd/avx512.h"
#define MR 8u
#define NR 32u
#define KC 1024u
#define MC 256u
#define NC 2048u
#define TILE mlcc_f32_gemm_ukernel_8x32__avx512
#define ROW mlcc_f32_gemm_ukernel_1x32__avx512
#define CONFIG mlcc_f32_gemm_config_8x32__avx512
#include "ukernel-simd.h"
#endif
