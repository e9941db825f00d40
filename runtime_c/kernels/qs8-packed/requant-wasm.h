/* The WebAssembly qs8-packed kernels' per-panel parameters and their row stores (the requantization itself:
 * mlcc/qs8-requant-wasm.h). */
#ifndef MLCC_QS8_PACKED_REQUANT_WASM_H
#define MLCC_QS8_PACKED_REQUANT_WASM_H

#include "walk.h"
#include "mlcc/qs8-requant-wasm.h"

/* One panel's 16 columns: past n, a zero bias and a neutral multiplier (their bytes are not stored); its quads.
 * Every shift 1..62: where a column's is below 31, the panel's accumulators are scaled up to shift 31 first
 * (mlcc_qs8_scale_up4_wasm). */
struct mlcc_qs8_panel_rq {
    const int8_t *weights;
    size_t nr;
    bool scaled_up;
    int32_t bias[16], multiplier[16], lower[16], upper[16], scale[16];
    uint32_t factor[16];
    uint64_t round[16];
};

/* a mlcc_qs8_packed_panel_fn */
static inline void mlcc_qs8_panel_rq_load(void *state, const int8_t *panel, size_t j, size_t nr, const struct mlcc_qs8_requant *rq) {
    struct mlcc_qs8_panel_rq *p = state;
    p->weights = panel + 64;
    p->nr = nr;
    p->scaled_up = false;
    for (size_t q = 0; q < 16; ++q) {
        const int32_t shift = q < nr ? rq->shift[j + q] : 31;
        p->bias[q] = q < nr ? rq->bias[j + q] : 0;
        p->multiplier[q] = q < nr ? rq->multiplier[j + q] : 1 << 30;
        mlcc_qs8_wasm_lane_terms(p->multiplier[q], shift, &p->round[q], &p->factor[q], &p->lower[q], &p->upper[q], &p->scale[q]);
        p->scaled_up |= shift < 31;
    }
}

/* Columns 4b .. 4b + 3 of one row: their accumulators (bias not yet added) requantized and clamped */
static inline v128_t mlcc_qs8_panel_requant4(v128_t acc, const struct mlcc_qs8_panel_rq *p, size_t b, v128_t low, v128_t high,
                                             v128_t zero) {
    acc = wasm_i32x4_add(acc, wasm_v128_load(p->bias + 4 * b));
    if (p->scaled_up) acc = mlcc_qs8_scale_up4_wasm(acc, p->lower + 4 * b, p->upper + 4 * b, p->scale + 4 * b);
    return mlcc_qs8_requant4_wasm(acc, p->multiplier + 4 * b, p->round + 4 * b, p->factor + 4 * b, low, high, zero);
}

/* 16 clamped values (4 vectors of 4) stored as bytes: nr of them at c */
static inline void mlcc_qs8_store16_wasm(v128_t v0, v128_t v1, v128_t v2, v128_t v3, bool signed_out, uint8_t *c, size_t nr) {
    const v128_t bytes = mlcc_qs8_narrow16_wasm(v0, v1, v2, v3, signed_out);
    if (nr == 16) {
        wasm_v128_store(c, bytes);
    } else {
        uint8_t lanes[16];
        wasm_v128_store(lanes, bytes);
        for (size_t q = 0; q < nr; ++q) c[q] = lanes[q];
    }
}

#endif /* MLCC_QS8_PACKED_REQUANT_WASM_H */
