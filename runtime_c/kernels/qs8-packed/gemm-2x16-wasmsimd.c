/* qs8-packed GEMM for WebAssembly SIMD128 (see qs8-packed.h), on panels in the "pairs" layout (mlcc/ops/_qs8.py
 * packs them so for this form): each quad's 64 bytes are k bytes 4q, 4q + 1 of the 16 columns, then bytes
 * 4q + 2, 4q + 3, so 16 of them are 8 columns x 2 bytes of k. Sign-extended to 16 bits in two halves, each
 * half is 4 columns x 2 bytes, and i32x4.dot_i16x8_s against the row's pair of 16-bit values splat gives the 4
 * columns' pair sums directly: 4 accumulators per row and 16 columns (the quad layout needs 8 and a sum of
 * pairs at the end), so a tile of 2 rows keeps its 8 accumulators, 2 rows' pairs and the weights in 16 vector
 * registers (what an x86 engine has: Cranelift spilled the quad layout's 16 accumulators). Products of 8-bit
 * values summed in pairs in 32 bits: exact, no saturation.
 *
 * The rows are sign-extended (a ^ a_flip) to 16 bits once per block of rows, into a buffer on the stack, so a
 * row's pair is one 32-bit load splat, not a load, a xor, a widening and a shuffle per panel: the blocks are
 * WIDE_BYTES, and a depth whose MR rows do not fit widens each pair in the tile instead. So is each panel, once
 * per block of at least WIDE_PANEL_ROWS rows, where its 16-bit copy fits PANEL_BYTES (k up to 1024): the tile
 * then loads its weights ready (no widening per row tile, and fewer live registers); the blob keeps the 8-bit
 * panels. Requantization is vectorised with each lane's multiplier and shift, every shift 1..62
 * (requant-wasm.h). */
#if defined(__wasm_simd128__)
#include "requant-wasm.h"

#define MR 2
#define WIDE_BYTES 32768
#define PANEL_BYTES 32768
#define WIDE_PANEL_ROWS 4

/* The operand: rows widened to 16 bits (ldw = k rounded up to 4, zeros past k), or the rows as they are */
struct wasm_rows {
    const int16_t *wide;
    size_t ldw;
    struct mlcc_qs8_packed_rows bytes;
};

/* The walk's panel state: the requantization terms, and the panel's `bytes` of quads widened to 16 bits where
 * `wide` is set */
struct wasm_panel {
    struct mlcc_qs8_panel_rq rq;
    int16_t *wide;
    size_t bytes;
};

/* a mlcc_qs8_packed_panel_fn */
static void panel_load(void *state, const int8_t *panel, size_t j, size_t nr, const struct mlcc_qs8_requant *rq) {
    struct wasm_panel *s = state;
    mlcc_qs8_panel_rq_load(&s->rq, panel, j, nr, rq);
    if (s->wide != NULL) {
        for (size_t o = 0; o < s->bytes; o += 16) {
            const v128_t w = wasm_v128_load(s->rq.weights + o);
            wasm_v128_store(s->wide + o, wasm_i16x8_extend_low_i8x16(w));
            wasm_v128_store(s->wide + o + 8, wasm_i16x8_extend_high_i8x16(w));
        }
    }
}

/* `mr` rows (a constant where it is inlined: 2, then 1 for the last odd row) times one panel */
static inline __attribute__((always_inline)) void tile_rows(bool widened, bool wide_panel, size_t mr, const struct wasm_rows *rows,
                                                            size_t i, const struct wasm_panel *s, uint8_t *c, size_t ldc,
                                                            const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_panel_rq *p = &s->rq;
    const size_t k = rows->bytes.k, pairs = (k + 3) / 4 * 2, ldw = rows->ldw, lda = rows->bytes.lda;
    const int16_t *wide = widened ? rows->wide + i * ldw : NULL;
    const uint8_t *a = rows->bytes.a + i * lda, a_flip = rows->bytes.a_flip;
    const v128_t flip = wasm_i8x16_splat((int8_t)a_flip);
    v128_t acc[MR][4];
    for (size_t r = 0; r < mr; ++r)
        for (size_t g = 0; g < 4; ++g) acc[r][g] = wasm_i32x4_splat(0);
    /* one pair of k a step (the quads' halves are consecutive 32 bytes), not unrolled: LLVM would hoist the
     * loads of a whole quad first, and with 8 accumulators live Cranelift spilled them (16 vector registers) */
#pragma clang loop unroll(disable)
    for (size_t t = 0; t < pairs; ++t) {
        v128_t x[MR];  /* the row's 16-bit values 2t, 2t + 1 in every lane */
        for (size_t r = 0; r < mr; ++r) {
            if (widened) {
                x[r] = wasm_v128_load32_splat(wide + r * ldw + 2 * t);
            } else {
                const uint8_t *row = a + r * lda;
                const v128_t bytes = 2 * t + 2 <= k ? wasm_v128_load16_splat(row + 2 * t)
                                                    : wasm_i16x8_splat(2 * t < k ? row[2 * t] : 0);  /* past k: zero weights */
                x[r] = wasm_i16x8_extend_low_i8x16(wasm_v128_xor(bytes, flip));
            }
        }
        for (size_t u = 0; u < 2; ++u) {  /* columns 8u .. 8u + 7 */
            const size_t o = 32 * t + 16 * u;
            const v128_t ws = wide_panel ? wasm_i32x4_splat(0) : wasm_v128_load(p->weights + o);
            const v128_t w_lo = wide_panel ? wasm_v128_load(s->wide + o) : wasm_i16x8_extend_low_i8x16(ws);
            const v128_t w_hi = wide_panel ? wasm_v128_load(s->wide + o + 8) : wasm_i16x8_extend_high_i8x16(ws);
            for (size_t r = 0; r < mr; ++r) {
                acc[r][2 * u] = wasm_i32x4_add(acc[r][2 * u], wasm_i32x4_dot_i16x8(w_lo, x[r]));
                acc[r][2 * u + 1] = wasm_i32x4_add(acc[r][2 * u + 1], wasm_i32x4_dot_i16x8(w_hi, x[r]));
            }
        }
    }
    const v128_t low = wasm_i32x4_splat(rq->y_min - rq->y_zero), high = wasm_i32x4_splat(rq->y_max - rq->y_zero);
    const v128_t zero = wasm_i32x4_splat(rq->y_zero);
    for (size_t r = 0; r < mr; ++r) {
        v128_t v[4];
        for (size_t g = 0; g < 4; ++g) v[g] = mlcc_qs8_panel_requant4(acc[r][g], p, g, low, high, zero);
        mlcc_qs8_store16_wasm(v[0], v[1], v[2], v[3], rq->y_min < 0, c + r * ldc, p->nr);
    }
}

/* mlcc_qs8_packed_tile_fn over widened rows and panels, widened rows, and the rows and panels as they are */
static inline __attribute__((always_inline)) void tile_wide(size_t mr, const void *operand, size_t i, const void *state,
                                                            uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    tile_rows(true, true, mr, operand, i, state, c, ldc, rq);
}

static inline __attribute__((always_inline)) void tile_wide_rows(size_t mr, const void *operand, size_t i, const void *state,
                                                                 uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    tile_rows(true, false, mr, operand, i, state, c, ldc, rq);
}

static inline __attribute__((always_inline)) void tile_bytes(size_t mr, const void *operand, size_t i, const void *state,
                                                             uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    tile_rows(false, false, mr, operand, i, state, c, ldc, rq);
}

/* `count` rows of k bytes, lda apart, as (int8_t)(a ^ a_flip) widened to rows of ldw 16-bit values */
static void widen_rows(const uint8_t *a, size_t lda, size_t count, size_t k, uint8_t a_flip, int16_t *wide, size_t ldw) {
    const v128_t flip = wasm_i8x16_splat((int8_t)a_flip);
    for (size_t r = 0; r < count; ++r, a += lda, wide += ldw) {
        size_t p = 0;
        for (; p + 16 <= k; p += 16) {
            const v128_t bytes = wasm_v128_xor(wasm_v128_load(a + p), flip);
            wasm_v128_store(wide + p, wasm_i16x8_extend_low_i8x16(bytes));
            wasm_v128_store(wide + p + 8, wasm_i16x8_extend_high_i8x16(bytes));
        }
        if (p + 8 <= k) {
            wasm_v128_store(wide + p, wasm_i16x8_extend_low_i8x16(wasm_v128_xor(wasm_v128_load64_zero(a + p), flip)));
            p += 8;
        }
        if (p + 4 <= k) {
            wasm_v128_store64_lane(wide + p, wasm_i16x8_extend_low_i8x16(wasm_v128_xor(wasm_v128_load32_zero(a + p), flip)), 0);
            p += 4;
        }
        for (; p < k; ++p) wide[p] = (int8_t)(a[p] ^ a_flip);
        for (; p < ldw; ++p) wide[p] = 0;
    }
}

void mlcc_qs8_packed_gemm__wasmsimd(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                    const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const size_t ldw = (k + 3) & ~(size_t)3, block = WIDE_BYTES / 2 / ldw / MR * MR;
    struct wasm_rows rows = {NULL, ldw, {a, lda, k, a_flip}};
    struct wasm_panel p = {.wide = NULL, .bytes = 16 * ldw};
    if (block == 0) {
        mlcc_qs8_packed_walk(MR, false, m, n, k, &rows, packed, c, ldc, rq, &p, panel_load, tile_bytes);
        return;
    }
    int16_t wide[WIDE_BYTES / 2] __attribute__((aligned(16)));
    int16_t panel[PANEL_BYTES / 2] __attribute__((aligned(16)));
    rows.wide = wide;
    for (size_t i = 0; i < m; i += block) {
        const size_t count = MLCC_MIN(block, m - i);
        widen_rows(a + i * lda, lda, count, k, a_flip, wide, ldw);
        /* a panel's copy pays back over a few row tiles: a product of one or two rows reads the 8-bit panel */
        p.wide = 32 * ldw <= PANEL_BYTES && count >= WIDE_PANEL_ROWS ? panel : NULL;
        if (p.wide != NULL) {
            mlcc_qs8_packed_walk(MR, false, count, n, k, &rows, packed, c + i * ldc, ldc, rq, &p, panel_load, tile_wide);
        } else {
            mlcc_qs8_packed_walk(MR, false, count, n, k, &rows, packed, c + i * ldc, ldc, rq, &p, panel_load, tile_wide_rows);
        }
    }
}
#endif
