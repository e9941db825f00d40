/* The walk qs8-packed's SIMD kernels share over their panels (see qs8-packed.h): a form whose requantization
 * needs every shift 31 or more takes none below (the caller takes the reference's code), each 16-column panel's
 * state is made once, then tiles of `tile_rows` rows and the last rows one at a time. The driver is inlined with
 * the kernel's functions, so their calls are direct and inlined too: the same code as a walk written out per
 * kernel. Included by the kernels' sources only. */
#ifndef MLCC_QS8_PACKED_WALK_H
#define MLCC_QS8_PACKED_WALK_H

#include "mlcc/kernels/qs8-packed.h"

/* The operand of the GEMM forms: m rows of k bytes, lda apart */
struct mlcc_qs8_packed_rows {
    const uint8_t *a;
    size_t lda, k;
    uint8_t a_flip;
};

/* Makes a kernel's state for one panel: its bytes (the column sums, then the quads) and columns [j, j + nr) */
typedef void (*mlcc_qs8_packed_panel_fn)(void *state, const int8_t *panel, size_t j, size_t nr,
                                         const struct mlcc_qs8_requant *rq);

/* Rows [i, i + mr) of the kernel's operand times the panel in `state`, requantized to c (row i, the panel's
 * first column) */
typedef void (*mlcc_qs8_packed_tile_fn)(size_t mr, const void *operand, size_t i, const void *state, uint8_t *c,
                                        size_t ldc, const struct mlcc_qs8_requant *rq);

/* Returns false, having written nothing, where `wide_shifts_only` and a column's shift is below 31 (a real
 * multiplier of 1 or more). k: the panels' depth. A tile spans `tile_panels` panels (the last tile fewer where n
 * ends first): `panel` is handed the first's bytes and the tile's columns [j, j + nr), nr up to 16 * tile_panels,
 * and finds the next panels mlcc_qs8_packed_panel_bytes(k) apart. */
static inline __attribute__((always_inline)) bool mlcc_qs8_packed_walk_panels(
    size_t tile_rows, size_t tile_panels, bool wide_shifts_only, size_t m, size_t n, size_t k, const void *operand,
    const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq, void *state,
    mlcc_qs8_packed_panel_fn panel, mlcc_qs8_packed_tile_fn tile) {
    if (wide_shifts_only) {
        for (size_t j = 0; j < n; ++j) {
            if (rq->shift[j] < 31) return false;
        }
    }
    const size_t panel_bytes = mlcc_qs8_packed_panel_bytes(k), full = m - m % tile_rows;
    const size_t columns = tile_panels * MLCC_QS8_PACKED_NR;
    for (size_t j = 0; j < n; j += columns) {
        panel(state, packed + (j / MLCC_QS8_PACKED_NR) * panel_bytes, j, MLCC_MIN(columns, n - j), rq);
        for (size_t i = 0; i < full; i += tile_rows) tile(tile_rows, operand, i, state, c + i * ldc + j, ldc, rq);
        for (size_t i = full; i < m; ++i) tile(1, operand, i, state, c + i * ldc + j, ldc, rq);
    }
    return true;
}

/* The walk with tiles of one panel */
static inline __attribute__((always_inline)) bool mlcc_qs8_packed_walk(size_t tile_rows, bool wide_shifts_only, size_t m,
                                                                       size_t n, size_t k, const void *operand,
                                                                       const int8_t *packed, uint8_t *c, size_t ldc,
                                                                       const struct mlcc_qs8_requant *rq, void *state,
                                                                       mlcc_qs8_packed_panel_fn panel,
                                                                       mlcc_qs8_packed_tile_fn tile) {
    return mlcc_qs8_packed_walk_panels(tile_rows, 1, wide_shifts_only, m, n, k, operand, packed, c, ldc, rq, state,
                                       panel, tile);
}

/* A row's bytes 4q .. 4q + 3 ^ flip, zero past k (where the panel is zero too) */
static inline uint32_t mlcc_qs8_row_quad(const uint8_t *row, size_t q, size_t k, uint32_t flip) {
    uint32_t bytes = 0;
    for (size_t p = 4 * q; p < k && p < 4 * q + 4; ++p) bytes |= (uint32_t)row[p] << (8 * (p - 4 * q));
    return bytes ^ flip;
}

/* The dequantizing forms' walk (mlcc_qs8_packed_gemm_f32 / _s32, qs8-packed.h): the same panels and tiles, c
 * holding 4-byte values (float or int32) ldc apart. The panel function makes its state from the column sums and
 * dq (the zero point's start, the scales, the offsets) for float or int32 output; the tile function stores rows
 * [i, i + mr) of a (lda apart, k deep) at c. a_flip (0x80: uint8 rows, 0: int8) reaches the tile function as a
 * constant, so each kernel's loop is made for either kind of row without a test inside it. */
typedef void (*mlcc_qs8_packed_dequant_panel_fn)(void *state, const int8_t *panel, size_t j, size_t nr, size_t k,
                                                 const struct mlcc_qs8_dequant *dq, uint8_t a_flip, bool floats);
typedef void (*mlcc_qs8_packed_dequant_tile_fn)(size_t mr, const uint8_t *a, size_t lda, size_t k, uint8_t a_flip,
                                                const void *state, uint32_t *c, size_t ldc);

static inline __attribute__((always_inline)) void mlcc_qs8_packed_dequant_panels(
    size_t tile_rows, bool floats, size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
    const int8_t *packed, uint32_t *c, size_t ldc, const struct mlcc_qs8_dequant *dq, void *state,
    mlcc_qs8_packed_dequant_panel_fn panel, mlcc_qs8_packed_dequant_tile_fn tile) {
    const size_t panel_bytes = mlcc_qs8_packed_panel_bytes(k), full = m - m % tile_rows;
    for (size_t j = 0; j < n; j += MLCC_QS8_PACKED_NR) {
        panel(state, packed + (j / MLCC_QS8_PACKED_NR) * panel_bytes, j, MLCC_MIN(MLCC_QS8_PACKED_NR, n - j), k, dq,
              a_flip, floats);
        for (size_t i = 0; i < full; i += tile_rows) tile(tile_rows, a + i * lda, lda, k, a_flip, state, c + i * ldc + j, ldc);
        for (size_t i = full; i < m; ++i) tile(1, a + i * lda, lda, k, a_flip, state, c + i * ldc + j, ldc);
    }
}

static inline __attribute__((always_inline)) void mlcc_qs8_packed_dequant_walk(
    size_t tile_rows, bool floats, size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
    const int8_t *packed, uint32_t *c, size_t ldc, const struct mlcc_qs8_dequant *dq, void *state,
    mlcc_qs8_packed_dequant_panel_fn panel, mlcc_qs8_packed_dequant_tile_fn tile) {
    if (a_flip) {
        mlcc_qs8_packed_dequant_panels(tile_rows, floats, m, n, k, a, lda, 0x80, packed, c, ldc, dq, state, panel, tile);
    } else {
        mlcc_qs8_packed_dequant_panels(tile_rows, floats, m, n, k, a, lda, 0, packed, c, ldc, dq, state, panel, tile);
    }
}

/* A panel's scales and offsets for columns [j, j + nr) as the graph gives them, zero past nr and where dq has none */
static inline void mlcc_qs8_dequant_columns(const struct mlcc_qs8_dequant *dq, size_t j, size_t nr,
                                            float scale[MLCC_QS8_PACKED_NR], float offset[MLCC_QS8_PACKED_NR]) {
    for (size_t q = 0; q < MLCC_QS8_PACKED_NR; ++q) {
        scale[q] = dq->scale && q < nr ? dq->scale[(j + q) * dq->scale_step] : 0.0f;
        offset[q] = dq->offset && q < nr ? dq->offset[j + q] : 0.0f;
    }
}

/* Defines a kernel's two dequantizing entry points, mlcc_qs8_packed_gemm_f32__isa and _s32__isa, over the walk
 * with tiles of `tile_rows` rows, `state_type` made per panel by `panel`; `uses_work`: the form widens weights
 * into dq->work (the reference runs where there is none) */
#define MLCC_QS8_PACKED_DEQUANT_FORM(isa, form, c_type, floats, tile_rows, state_type, panel, tile, uses_work)        \
    void mlcc_qs8_packed_gemm_##form##__##isa(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda,            \
                                              uint8_t a_flip, const int8_t *packed, c_type *c, size_t ldc,           \
                                              const struct mlcc_qs8_dequant *dq) {                                   \
        if ((uses_work) && !dq->work) {                                                                              \
            mlcc_qs8_packed_gemm_##form##__reference(m, n, k, a, lda, a_flip, packed, c, ldc, dq);                   \
            return;                                                                                                  \
        }                                                                                                            \
        state_type state = {0};                                                                                      \
        mlcc_qs8_packed_dequant_walk(tile_rows, floats, m, n, k, a, lda, a_flip, packed, (uint32_t *)c, ldc, dq,     \
                                     &state, panel, tile);                                                           \
    }
#define MLCC_QS8_PACKED_DEQUANT_FORMS(isa, tile_rows, state_type, panel, tile, uses_work)             \
    MLCC_QS8_PACKED_DEQUANT_FORM(isa, f32, float, true, tile_rows, state_type, panel, tile, uses_work) \
    MLCC_QS8_PACKED_DEQUANT_FORM(isa, s32, int32_t, false, tile_rows, state_type, panel, tile, uses_work)

#endif /* MLCC_QS8_PACKED_WALK_H */
