/* f32-gemm 4x8 and 1x8 micro-kernels for WebAssembly SIMD128 (see ukernel-simd.h), shaped by what the
 * engines compile: wasmtime's Cranelift spilled half of a 4x16 tile's 16 accumulators every k step (8 + 2 of
 * B + the broadcasts fit its 16 registers), and lowers v128.load32_splat to a scalar load, a move and a
 * broadcast. Over a packed micro-panel the 4 rows' A at one k are one v128 load instead, and each
 * broadcast one lane shuffle (pshufd on x86). 1024^3 in wasmtime: 15 -> 19-21 GFLOP/s (V8: about the same
 * as 4x16); products with k <= 64 lose ~20% to the per-tile overhead of a tile half as wide.
 * Tried and slower or no better in wasmtime 50 (benchmarks/gemm.py, thread CPU, 5-7 interleaved rounds):
 * k unrolled by 2 or 4, 5x8 and 6x8 (A as two overlapping loads), 2x16. Cranelift keeps loads in the
 * module's order and sinks arithmetic to its first use, so an unrolled body loads all its B and A up front
 * and spills accumulators; 5x8 needs all 16 registers and spilled 4. Over broadcast-packed A: 3x12 (9
 * accumulators + 6 loads) no faster on BERT's products (128x384x384 .. 128x1536x384, 0.95-1.05x), 6x8 and
 * 12x4 spill (a step's 8 or 13 loads all live at once next to the accumulators). On x86 the kernel is bound by its
 * multiplies, adds and lane shuffles (20 per step of k for 64 flops). */
#if defined(__wasm_simd128__)
#include <stdint.h>
#include "mlcc/kernels/f32-gemm.h"
#include "mlcc/simd/wasmsimd.h"
#define MR 4u
#define NR 8u
#define KC 512u
#define MC 64u
#define NC 128u
#define TILE mlcc_f32_gemm_ukernel_4x8__wasmsimd
#define ROW mlcc_f32_gemm_ukernel_1x8__wasmsimd
#define CONFIG mlcc_f32_gemm_config_4x8__wasmsimd
/* A single row (a GEMV) streams two panels of B at a time, not four: Cranelift keeps a loop body's loads first
 * (a wasm load may trap) and its pure arithmetic at the back edge, so 8 loads of B + 8 accumulators + the
 * broadcast spilled every step. 1x1024x1024, 1x1024x784, 1x1280x1000 with bias + ReLU in wasmtime 50: 0.79-0.80x
 * the time (benchmarks/gemm_ab.py, minimum of 60 alternating calls; bit-identical outputs). */
#define ROW_PANELS_AT_ONCE 2

/* acc += A * w over kc steps of a packed micro-panel: A's (row i, step p) at a[p * MR + i], w kc rows of NR */
static inline void accumulate_packed(mlcc_f32v acc[MR][NR / 4], size_t kc, const float *a,
                                     const float *MLCC_RESTRICT w)
{
    for (size_t p = 0; p < kc; ++p, a += MR, w += NR) {
        const v128_t va = wasm_v128_load(a);
        const v128_t b0 = wasm_v128_load(w), b1 = wasm_v128_load(w + 4);
        const v128_t a0 = wasm_i32x4_shuffle(va, va, 0, 0, 0, 0);
        const v128_t a1 = wasm_i32x4_shuffle(va, va, 1, 1, 1, 1);
        const v128_t a2 = wasm_i32x4_shuffle(va, va, 2, 2, 2, 2);
        const v128_t a3 = wasm_i32x4_shuffle(va, va, 3, 3, 3, 3);
        acc[0][0] = mlcc_f32v_fma(acc[0][0], a0, b0);
        acc[0][1] = mlcc_f32v_fma(acc[0][1], a0, b1);
        acc[1][0] = mlcc_f32v_fma(acc[1][0], a1, b0);
        acc[1][1] = mlcc_f32v_fma(acc[1][1], a1, b1);
        acc[2][0] = mlcc_f32v_fma(acc[2][0], a2, b0);
        acc[2][1] = mlcc_f32v_fma(acc[2][1], a2, b1);
        acc[3][0] = mlcc_f32v_fma(acc[3][0], a3, b0);
        acc[3][1] = mlcc_f32v_fma(acc[3][1], a3, b1);
    }
}
#define ACCUMULATE_PACKED accumulate_packed

/* The same over a panel holding each element in all 4 lanes, (row i, step p) at a[(p * MR + i) * 4 ..]: two
 * loads of B, four of A, 8 multiplies and 8 adds a step, no lane shuffle. The driver packs it for products of
 * 8 or more panels of B (one broadcast per element of A and block, for all of them): benchmarks/gemm.py's
 * driver with ReLU in wasmtime 50, thread CPU, medians of 5 interleaved rounds, broadcast vs plain panels:
 * 196x256x2304 +18%, 128x384x1536 +18%, 196x256x1024 +11%, 49x2048x512 +11%, 16x512x512 +8%, 1024^3 and
 * 784x512x128 even. With a 16 KB packing buffer narrower products lost (784x128x512 -2%, 3136x64x256 -17%: the
 * block held a quarter of the k); with 64 KB (f32-gemm.h) 8 panels gain too (gemm.c plan_for). */
static inline void accumulate_broadcast(mlcc_f32v acc[MR][NR / 4], size_t kc, const float *a,
                                        const float *MLCC_RESTRICT w)
{
    /* The steps' addresses are advanced before their loads, as integers starting a step behind the panels:
     * the loads then take the fresh result of an i32 add, which Cranelift knows is zero-extended, where a
     * pointer carried from the last step costs a move to zero-extend it for each of A's and B's addresses
     * (2 of 27 instructions a step; the loop alone 44 -> 47 GFLOP/s in wasmtime). With pack_a's splats,
     * BERT's encoder in V8 (node, the engine onnxruntime-web runs in) 98 -> 87 ms of CPU, in wasmtime 0.96-1.0x
     * (benchmarks/web/ab.mjs, python -m benchmarks.wasm_ab). The empty asm hides the addresses from loop
     * strength reduction, which would drop the no-wrap flags the wasm backend needs to fold a constant offset
     * into a load: one address per step instead of an add before each load.
     * Two steps a pass, each after its own exit test: V8 checks the stack at every loop head (a load and a
     * branch), now once per two steps, 0.96-0.99x the time in V8 on BERT's products and 784x144x24, even in
     * wasmtime (benchmarks.gemm_ab, both orders). The test between them keeps the second step's loads after the
     * first step's arithmetic in Cranelift, which emits a block's loads before its arithmetic: a body of two
     * plain steps would hold 12 loaded vectors and the 8 accumulators at once, and spill. */
    uintptr_t at = (uintptr_t)a - MR * 4 * sizeof(float), wt = (uintptr_t)w - NR * sizeof(float);
    const uintptr_t a_last = at + kc * MR * 4 * sizeof(float);  /* the last step's A */
    for (;;) {
        for (int half = 0; half < 2; ++half) {
            if (at == a_last) return;
            at += MR * 4 * sizeof(float);
            wt += NR * sizeof(float);
            __asm__("" : "+r"(at), "+r"(wt));
            const float *ap = (const float *)at, *wp = (const float *)wt;
            const v128_t b0 = wasm_v128_load(wp), b1 = wasm_v128_load(wp + 4);
            for (size_t i = 0; i < MR; ++i) {
                const v128_t ai = wasm_v128_load(ap + i * 4);
                acc[i][0] = mlcc_f32v_fma(acc[i][0], ai, b0);
                acc[i][1] = mlcc_f32v_fma(acc[i][1], ai, b1);
            }
        }
    }
}
#define ACCUMULATE_BROADCAST accumulate_broadcast

/* acc[0] += a[p] * w[p][..] over kc steps (a row of A in place, k 1 apart): a GEMV's loop (a fully-connected
 * layer at batch 1), streaming packed B once. Four of A's steps are one load and four lane shuffles, not four
 * splats (3 instructions each in Cranelift), and their products are summed as a tree before the one add to
 * the accumulator: a chain of one add per 4 steps, 2 accumulators. Cranelift emits a loop body's loads first
 * and its arithmetic at the end (the accumulators' first use is the back edge), so all 9 loads are live at
 * once: 8 accumulators (4 chains over k) spilled 3 of them every step. */
static inline void accumulate_row(mlcc_f32v acc[4][NR / 4], size_t kc, const float *a, const float *MLCC_RESTRICT w)
{
    size_t p = 0;
    for (; p + 4 <= kc; p += 4) {
        const float *ap = a + p, *wp = w + p * NR;
        __asm__("" : "+r"(ap), "+r"(wp));  /* constant offsets folded into the loads (see accumulate_broadcast) */
        const v128_t va = wasm_v128_load(ap);
        const v128_t a0 = wasm_i32x4_shuffle(va, va, 0, 0, 0, 0), a1 = wasm_i32x4_shuffle(va, va, 1, 1, 1, 1);
        const v128_t a2 = wasm_i32x4_shuffle(va, va, 2, 2, 2, 2), a3 = wasm_i32x4_shuffle(va, va, 3, 3, 3, 3);
        for (size_t j = 0; j < NR / 4; ++j) {
            const v128_t s01 = mlcc_f32v_fma(wasm_f32x4_mul(a0, wasm_v128_load(wp + j * 4)), a1,
                                             wasm_v128_load(wp + NR + j * 4));
            const v128_t s23 = mlcc_f32v_fma(wasm_f32x4_mul(a2, wasm_v128_load(wp + 2 * NR + j * 4)), a3,
                                             wasm_v128_load(wp + 3 * NR + j * 4));
            acc[0][j] = mlcc_f32v_add(acc[0][j], mlcc_f32v_add(s01, s23));
        }
    }
    for (; p < kc; ++p) {
        const v128_t ap = wasm_v128_load32_splat(a + p);
        for (size_t j = 0; j < NR / 4; ++j)
            acc[1][j] = mlcc_f32v_fma(acc[1][j], ap, wasm_v128_load(w + p * NR + j * 4));
    }
}
#define ACCUMULATE_ROW accumulate_row

/* acc[q] += a[p] * w[q * w_panel + p * NR ..] over kc steps for `count` panels (a literal once inlined), A's
 * row in place: accumulate_panels two steps of k a pass, A's two elements one 8-byte load and two lane
 * shuffles instead of two splats (3 instructions each in Cranelift), and no multiply by A's stride; each
 * column still summed in the order p = 0, 1, 2, ... (outputs bit-identical). */
static inline void accumulate_panels_in_place(mlcc_f32v acc[MLCC_F32_GEMM_ROW_PANELS][NR / 4], size_t count,
                                              size_t kc, const float *a, const float *MLCC_RESTRICT w,
                                              size_t w_panel)
{
    size_t p = 0;
    for (; p + 2 <= kc; p += 2) {
        const float *ap = a + p, *wp = w + p * NR;
        __asm__("" : "+r"(ap), "+r"(wp));  /* constant offsets folded into the loads (see accumulate_broadcast) */
        const v128_t pair = wasm_v128_load64_zero(ap);
        const v128_t a0 = wasm_i32x4_shuffle(pair, pair, 0, 0, 0, 0), a1 = wasm_i32x4_shuffle(pair, pair, 1, 1, 1, 1);
        for (size_t q = 0; q < count; ++q)
            for (size_t j = 0; j < NR / 4; ++j) {
                const float *wq = wp + q * w_panel + j * 4;
                acc[q][j] = mlcc_f32v_fma(acc[q][j], a0, wasm_v128_load(wq));
                acc[q][j] = mlcc_f32v_fma(acc[q][j], a1, wasm_v128_load(wq + NR));
            }
    }
    for (; p < kc; ++p) {
        const v128_t ap = wasm_v128_load32_splat(a + p);
        for (size_t q = 0; q < count; ++q)
            for (size_t j = 0; j < NR / 4; ++j)
                acc[q][j] = mlcc_f32v_fma(acc[q][j], ap, wasm_v128_load(w + q * w_panel + p * NR + j * 4));
    }
}
#define ACCUMULATE_PANELS accumulate_panels_in_place

#include "ukernel-simd.h"
#endif
