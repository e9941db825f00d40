/* qs8-packed GEMM for Armv8.2 NEON with the dot product (see qs8-packed.h): tiles of 4 rows x one 16-column
 * panel, one sdot per row and 4 columns x 4 bytes of k: the panel's 16 bytes as they are packed times one
 * quad of the row (sdot's lane form picks it from 16 bytes loaded at once), each lane summing its column's 4
 * exact 16-bit products in 32 bits: no saturation. Rows past a multiple of 4 go one at a time. */
#if defined(__ARM_NEON) && defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__)
#include "dot-neondot.h"
#include "requant-neon.h"

#define MR 4

/* `mr` rows (a constant where it is inlined: 4, then 1) times one panel */
static inline __attribute__((always_inline)) void tile(size_t mr, const void *operand, size_t i, const void *state, uint8_t *c,
                                                       size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_packed_rows *rows = operand;
    const struct mlcc_qs8_panel_rq *p = state;
    const uint8_t *a = rows->a + i * rows->lda;
    const uint8_t a_flip = rows->a_flip;
    const size_t lda = rows->lda, k = rows->k, nr = p->nr;
    int32x4_t acc[MR][4];
    for (size_t r = 0; r < mr; ++r)
        for (size_t b = 0; b < 4; ++b) acc[r][b] = vdupq_n_s32(0);
    mlcc_qs8_neondot_accumulate(mr, a, lda, k, a_flip, p->weights, acc);
    for (size_t r = 0; r < mr; ++r) mlcc_qs8_store16_neon(acc[r], p, rq, c + r * ldc, nr);
}

void mlcc_qs8_packed_gemm__neondot(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                   const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_packed_rows rows = {a, lda, k, a_flip};
    struct mlcc_qs8_panel_rq p;
    mlcc_qs8_packed_walk(MR, false, m, n, k, &rows, packed, c, ldc, rq, &p, mlcc_qs8_panel_rq_load, tile);
}
#endif
