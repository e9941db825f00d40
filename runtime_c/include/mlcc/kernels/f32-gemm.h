/* f32-gemm: C = activation(alpha * A * B + beta * bias + residual), row-major, float32.
 *
 * B is packed ahead of the product (at build time for constant weights, or by mlcc_f32_gemm_pack_b /
 * an im2col into scratch): ceil(n / nr) panels, each k rows of nr floats, zero-padded past column n.
 * A is given through a row stride and a column stride: the driver reads row-major A in place and packs a
 * transposed one (or any, for a tile that asks) into micro-panels on its stack. A micro-kernel accumulates
 * an mr x nr tile of C over a slice of k; the driver blocks k, m and n as the config says (mlcc computes
 * that from the target's caches).
 */
#ifndef MLCC_KERNELS_F32_GEMM_H
#define MLCC_KERNELS_F32_GEMM_H

#include "mlcc/activation.h"
#include "mlcc/parallel.h"
#include "mlcc/runtime.h"

/* One tile of C over a slice of k: c[i][j] = alpha * sum_p a[i*a_rs + p*a_cs] * w[p*nr_tile + j] + s[i][j]
 * for i < mr (mr may be below the tile's rows), j < nr, where the sum so far s is C itself when init is
 * NULL, else init[j] in every row (the first slice of k: a bias row, or zeros, never written to C first).
 * A packed micro-panel (a_rs the copies of each element, a_cs the tile's rows times that) has all the
 * tile's rows: the kernel then reads every one of them. On the last slice of k the driver passes the
 * epilogue (else NULL) and, when it has one, the residual at this tile's first element: the kernel then
 * applies activation(c + residual) before storing. */
typedef void (*mlcc_f32_gemm_ukernel_fn)(size_t mr, size_t nr, size_t kc,
                                         const float *a, size_t a_rs, size_t a_cs,
                                         const float *w, float *c, size_t ldc, const float *init, float alpha,
                                         const struct mlcc_f32_epilogue *epilogue, const float *residual);

/* One row of C over a slice of k, as the tile's with one row: c[j] = alpha * sum_p a[p*a_cs] * B[p][j] + s[j]
 * for j < nr, where nr may span up to MLCC_F32_GEMM_ROW_PANELS micro-panels of B, w_panel floats apart. A
 * GEMV is bound by memory, and one sequential stream keeps too little of it in flight: reading four panels
 * at once, 9216 x 4096 from memory took 0.75 (SIMD128), 0.80 (AVX2) and 0.92 (AVX-512) of the time of one
 * panel after another (benchmarks/gemm_ab.py). init and the residual are at the row's first column. */
typedef void (*mlcc_f32_gemm_row_fn)(size_t nr, size_t kc, const float *a, size_t a_cs,
                                     const float *w, size_t w_panel, float *c, const float *init, float alpha,
                                     const struct mlcc_f32_epilogue *epilogue, const float *residual);

#define MLCC_F32_GEMM_ROW_PANELS 4u

/* How a variant's tile wants row-major A (transposed A is always packed). */
enum mlcc_f32_gemm_a_packing {
    MLCC_F32_GEMM_A_IN_PLACE = 0,  /* read in place */
    MLCC_F32_GEMM_A_PACKED = 1,    /* packed into micro-panels once a few panels of B pay the copy back */
    MLCC_F32_GEMM_A_BROADCAST4 = 4 /* the same, and from 8 panels of B each element in all 4 lanes of a
                                    * vector: the tile loads it, no broadcast */
};

/* A variant: a micro-kernel for up to mr rows, one for a single row (skinny products, m tails), its tile
 * and its cache blocking: mc x kc of A and kc x nc of packed B stay in L2. Each variant exports a config
 * with blocking for a typical core of its ISA; generated code passes its own, from the target's caches
 * (mlcc/ops/_gemm.py). */
struct mlcc_f32_gemm_config {
    mlcc_f32_gemm_ukernel_fn tile;
    mlcc_f32_gemm_row_fn row;
    size_t mr;
    size_t nr;
    size_t kc;
    size_t mc;
    size_t nc;
    enum mlcc_f32_gemm_a_packing packed_a;
    /* The tile for the first and the last tile over a micro-panel of B in a block (the last: the rows after
     * it, if any, run one at a time), prefetching B ahead: the first streams the panel in from memory, the
     * last the head of the next one (NULL: tile). */
    mlcc_f32_gemm_ukernel_fn edge_tile;
};

/* Floats of A the driver packs on its stack (mc x kc is cut to fit): 16 KB, 2 KB on microcontrollers, 64 KB on
 * WebAssembly, where a broadcast-packed micro-panel (16 bytes an element) then holds k up to 1024 in one slice,
 * not 256: fewer tile calls and sums reloaded from C (the BERT encoder 0.98x the time in wasmtime, 0.94x in V8). */
#ifndef MLCC_F32_GEMM_PACK_FLOATS
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
#define MLCC_F32_GEMM_PACK_FLOATS 512u
#elif defined(__wasm__)
#define MLCC_F32_GEMM_PACK_FLOATS 16384u /* of a module's 16 MiB stack, a worker's 1 MiB (mlcc/jsmodule.py) */
#else
#define MLCC_F32_GEMM_PACK_FLOATS 4096u
#endif
#endif

/* The tallest and the widest tile of any variant. */
#define MLCC_F32_GEMM_MAX_MR 12u
#define MLCC_F32_GEMM_MAX_NR 32u

#if defined(__GNUC__) || defined(__clang__)
#define MLCC_F32_GEMM_INLINE inline __attribute__((always_inline))
#else
#define MLCC_F32_GEMM_INLINE inline
#endif

/* The variants (runtime_c/kernels/f32-gemm/manifest.toml): each is defined only where its ISA is
 * enabled (e.g. -mavx512f), the scalar ones everywhere. */
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_4x8__scalar;
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_6x16__scalar;
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_4x32__scalar;
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_8x32__avx512;
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_12x16__avx512;
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_6x16__avx2;
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_8x8__avx2;
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_4x8__wasmsimd;
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_4x16__wasmsimd;
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_6x16__neon;
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_4x8__neon;
extern const struct mlcc_f32_gemm_config mlcc_f32_gemm_config_6x16__rvv;

/* The tile the driver calls directly when a config holds it, the others through the pointer: SIMD128's 4x8,
 * every wasm32 product's but the narrowest (a call_indirect checks the table's bounds and the entry's
 * signature, and in wasmtime its lazy initialisation, on each of BERT's ~500 ns tiles). */
#if defined(__wasm_simd128__)
#define MLCC_F32_GEMM_DIRECT_TILE mlcc_f32_gemm_ukernel_4x8__wasmsimd
void MLCC_F32_GEMM_DIRECT_TILE(size_t mr, size_t nr, size_t kc, const float *a, size_t a_rs, size_t a_cs,
                               const float *MLCC_RESTRICT w, float *MLCC_RESTRICT c, size_t ldc, const float *init,
                               float alpha, const struct mlcc_f32_epilogue *e, const float *residual);
#endif

/* A variant's kernels with other cache blocking, as a compound literal (inside a function): what generated
 * code passes, the blocking computed from the target's caches. */
#define MLCC_F32_GEMM_BLOCKED(variant, kc, mc, nc) \
    ((const struct mlcc_f32_gemm_config){(variant).tile, (variant).row, (variant).mr, (variant).nr, (kc), (mc), (nc), \
                                         (variant).packed_a, (variant).edge_tile})

/* The operands every entry point below takes after its sizes, in one list for their declarations and
 * definitions: A (a[i*a_rs + p*a_cs]), B packed by mlcc_f32_gemm_pack_b, C (leading dimension ldc) and
 * alpha, the bias and beta, the epilogue. */
#define MLCC_F32_GEMM_OPERANDS                                                                              \
    const float *a, size_t a_rs, size_t a_cs, const float *packed_b, float *c, size_t ldc, float alpha,     \
        const float *bias, size_t bias_rs, size_t bias_cs, float beta, const struct mlcc_f32_epilogue *epilogue

/* C[m][n] (leading dimension ldc) = activation(alpha * A * packed_b + beta * bias[i*bias_rs + j*bias_cs]
 * + residual[i*residual_rs + j*residual_cs]); bias may be NULL (then beta is unused); strides of 0
 * broadcast it. epilogue (activation and residual) may be NULL: none. */
void mlcc_f32_gemm(const struct mlcc_f32_gemm_config *config, size_t m, size_t n, size_t k, MLCC_F32_GEMM_OPERANDS);

/* The same, its rows or columns cut into tasks for the caller's parallel-for (mlcc/parallel.h) when the
 * product is large: bit-identical to mlcc_f32_gemm for any thread count (every part keeps the whole
 * product's blocking, and parts are whole tiles). NULL `parallel` or a small product runs mlcc_f32_gemm. */
void mlcc_f32_gemm_parallel(const mlcc_parallel *parallel, const struct mlcc_f32_gemm_config *config,
                            size_t m, size_t n, size_t k, MLCC_F32_GEMM_OPERANDS);

/* `groups` products of the same shape (a grouped convolution's), product g's A, packed B, C, bias and the
 * epilogue's residual advanced by g times a_group, b_group, c_group, bias_group and residual_group floats: its
 * rows cut into tasks for the caller's parallel-for when large, each task taking its rows in every product
 * (one hand-off for all of them, whole rows of C per thread). Bit-identical to mlcc_f32_gemm per product. */
void mlcc_f32_gemm_groups_parallel(const mlcc_parallel *parallel, size_t groups, size_t a_group, size_t b_group,
                                   size_t c_group, size_t bias_group, size_t residual_group,
                                   const struct mlcc_f32_gemm_config *config, size_t m, size_t n, size_t k,
                                   MLCC_F32_GEMM_OPERANDS);

/* Rows [i0, i1) and columns [j0, j1) of the m x n product mlcc_f32_gemm computes (i0 a multiple of the
 * variant's mr, j0 of its nr), summed exactly as the whole product sums them: for a task that owns that part
 * of C. */
void mlcc_f32_gemm_part(const struct mlcc_f32_gemm_config *config, size_t m, size_t n, size_t k,
                        size_t i0, size_t i1, size_t j0, size_t j1, MLCC_F32_GEMM_OPERANDS);

/* Packs b[p*b_rs + j*b_cs] (p < k, j < n) into ceil(n / nr) panels of k x nr floats. */
void mlcc_f32_gemm_pack_b(size_t k, size_t n, const float *b, size_t b_rs, size_t b_cs, size_t nr,
                          float *MLCC_RESTRICT packed);

/* The scalar oracle: same contract as mlcc_f32_gemm with B unpacked (b[p*b_rs + j*b_cs]). */
void mlcc_f32_gemm__reference(size_t m, size_t n, size_t k,
                              const float *a, size_t a_rs, size_t a_cs,
                              const float *b, size_t b_rs, size_t b_cs,
                              float *c, size_t ldc, float alpha,
                              const float *bias, size_t bias_rs, size_t bias_cs, float beta,
                              const struct mlcc_f32_epilogue *epilogue);

#endif /* MLCC_KERNELS_F32_GEMM_H */
