/* f32-gemm 6x16 and 1x16 micro-kernels for AVX2 + FMA (see ukernel-simd.h). */
#if defined(__AVX2__) && defined(__FMA__)
#include "mlcc/simd/avx2.h"
#define MR 6u
#define NR 16u
#define KC 1024u
#define MC 126u
#define NC 1024u
#define TILE mlcc_f32_gemm_ukernel_6x16__avx2
#define ROW mlcc_f32_gemm_ukernel_1x16__avx2
#define CONFIG mlcc_f32_gemm_config_6x16__avx2
#include "ukernel-simd.h"
#endif
