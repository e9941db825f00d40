/* qs8-packed GEMM for Armv8.2 NEON with the dot product (see qs8-packed.h): tiles of 4 rows x one 16-column
 * panel, one sdot per row and 4 columns x 4 bytes of k: the panel's 16 bytes as they are packed times one
 * quad of the row (sdot's lane form picks it from 16 bytes loaded at once), each lane summing its column's 4
 * exact 16-bit products in 32 bits: no saturation. Rows past a multiple of 4 go one at a time. */
#if defined(__ARM_NEON) && defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__)
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
    const int8_t *weights = p->weights;
    const size_t k16 = k / 16, quads = (k + 3) / 4;
    const uint8x16_t flip = vdupq_n_u8(a_flip);
    int32x4_t acc[MR][4];
    for (size_t r = 0; r < mr; ++r)
        for (size_t b = 0; b < 4; ++b) acc[r][b] = vdupq_n_s32(0);
    for (size_t g = 0; g < k16; ++g) {  /* 4 quads: 16 bytes of each row */
        int8x16_t x[MR];
        for (size_t r = 0; r < mr; ++r) x[r] = vreinterpretq_s8_u8(veorq_u8(vld1q_u8(a + r * lda + 16 * g), flip));
        const int8_t *wg = weights + g * 256;
#define QUAD(lane)                                                                                  \
        for (size_t b = 0; b < 4; ++b) {                                                            \
            const int8x16_t ws = vld1q_s8(wg + (lane) * 64 + 16 * b);                               \
            for (size_t r = 0; r < mr; ++r) acc[r][b] = vdotq_laneq_s32(acc[r][b], ws, x[r], lane); \
        }
        QUAD(0)
        QUAD(1)
        QUAD(2)
        QUAD(3)
#undef QUAD
    }
    for (size_t q = 4 * k16; q < quads; ++q) {
        int8x16_t x[MR];
        for (size_t r = 0; r < mr; ++r) {
            x[r] = vreinterpretq_s8_u32(vdupq_n_u32(mlcc_qs8_row_quad(a + r * lda, q, k, a_flip * 0x01010101u)));
        }
        for (size_t b = 0; b < 4; ++b) {
            const int8x16_t ws = vld1q_s8(weights + q * 64 + 16 * b);
            for (size_t r = 0; r < mr; ++r) acc[r][b] = vdotq_s32(acc[r][b], ws, x[r]);
        }
    }
    for (size_t r = 0; r < mr; ++r) mlcc_qs8_store16_neon(acc[r], p, rq, c + r * ldc, nr);
}

void mlcc_qs8_packed_gemm__neondot(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                   const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_packed_rows rows = {a, lda, k, a_flip};
    struct mlcc_qs8_panel_rq p;
    mlcc_qs8_packed_walk(MR, false, m, n, k, &rows, packed, c, ldc, rq, &p, mlcc_qs8_panel_rq_load, tile);
}
#endif
