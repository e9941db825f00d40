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
/* B prefetched from a 32 KB panel (k 512) on: beside six rows of A it does not stay in L1, and from memory
 * (a model's weights) the first tile of each panel waited on it (benchmarks.gemm_ab --cold: 49x2048x512, the
 * 7x7 1x1 convolutions' product, 0.91-0.94x the time; 196x1024x512 0.96x; 784x128x512 and 784x256x512 0.97-1.02x) */
#define PREFETCH_B_BYTES 24576u
/* The first and last tiles over each panel prefetch B whatever its length: products of few rows read their
 * panels from memory a few tiles each (benchmarks.gemm_ab --cold, 16x256x256, a 14x14 Winograd point, 0.70-0.80x
 * the time; 49x128x128 0.92, 196x1024x256 0.90-0.92; products of many rows 0.97-1.01) */
#define PREFETCH_B_AT_EDGES 1
#include "ukernel-simd.h"
#endif
