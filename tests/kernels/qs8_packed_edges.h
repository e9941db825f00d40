/* What the qs8-packed harnesses (qs8_nhwc_edges.c, qs8_dequant_edges.c) share: a pseudo-random stream of
 * 24-bit values (edges.h's generator; a harness may reseed `state`), the bounds of their GEMM cases, the
 * weight fills, and qs8-packed.h's panels packed from unpacked weights. Each harness is one translation
 * unit: everything here is static. */
#ifndef MLCC_TESTS_KERNELS_QS8_PACKED_EDGES_H
#define MLCC_TESTS_KERNELS_QS8_PACKED_EDGES_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "mlcc/kernels/qs8-packed.h"

static uint32_t state = 12345u;
static uint32_t next(void) { state = state * 1664525u + 1013904223u; return state >> 8; }

#define MAX_M 19
#define MAX_N 40
#define MAX_K 80
#define PANELS ((MAX_N + 15) / 16)

/* fill 0 random, 1 the most negative weight, 2 the most positive */
static int8_t fill_weight(int fill) { return fill == 0 ? (int8_t)next() : fill == 1 ? -128 : 127; }

/* qs8-packed.h's layout from [n][ldw] rows: each quad 16 columns x 4 bytes, or in pairs of bytes (the SIMD128
 * form's, mlcc/ops/_qs8.py packed_panels) */
static void pack_as(bool pairs, size_t n, size_t k, const int8_t *w, size_t ldw, int8_t *packed) {
    const size_t panel = mlcc_qs8_packed_panel_bytes(k);
    memset(packed, 0, panel * ((n + 15) / 16));
    for (size_t j = 0; j < n; ++j) {
        int8_t *base = packed + (j / 16) * panel;
        int32_t sum = 0;
        for (size_t p = 0; p < k; ++p) {
            sum += w[j * ldw + p];
            const size_t at = pairs ? (p % 4) / 2 * 32 + (j % 16) * 2 + p % 2 : (j % 16) * 4 + p % 4;
            base[64 + (p / 4) * 64 + at] = w[j * ldw + p];
        }
        memcpy(base + (j % 16) * 4, &sum, 4);
    }
}

static void pack(size_t n, size_t k, const int8_t *w, size_t ldw, int8_t *packed) { pack_as(false, n, k, w, ldw, packed); }

#endif /* MLCC_TESTS_KERNELS_QS8_PACKED_EDGES_H */
