/* qs8-packed's dequantizing forms for Armv8.2 NEON with the dot product (see qs8-packed.h): tiles of 4 rows x one
 * 16-column panel as gemm-4x16-neondot.c's, one sdot per row and 4 columns x 4 bytes of k (the row's bytes
 * ^ a_flip: a - 128 for uint8, signed bytes as they are; each lane sums its column's 4 exact products in 32
 * bits), the accumulators starting at (a_flip - a_zero) * sums, so they hold sum (a - a_zero) * w exactly. Then
 * stored as int32, or converted to float, multiplied by the scale and offset one rounding each (scvtf, fmul,
 * fadd: no fused multiply-add), as the reference's scalar statements: bit-identical. */
#if defined(__ARM_NEON) && defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__)
#include <arm_neon.h>
#include <string.h>

#include "dot-neondot.h"

#define MR 4

struct panel {
    const int8_t *weights;
    int32x4_t start[4];
    float32x4_t scale[4], offset[4];
    size_t nr;
    bool floats, scaled, offset_added;
};

/* a mlcc_qs8_packed_dequant_panel_fn */
static inline void panel_of(void *state, const int8_t *base, size_t j, size_t nr, size_t k,
                            const struct mlcc_qs8_dequant *dq, uint8_t a_flip, bool floats) {
    (void)k;
    struct panel *pn = state;
    pn->nr = nr;
    pn->floats = floats;
    pn->weights = base + 64;
    pn->scaled = dq->scale != NULL;
    pn->offset_added = dq->offset != NULL;
    float scale[16], offset[16];
    mlcc_qs8_dequant_columns(dq, j, nr, scale, offset);
    const int32x4_t correction = vdupq_n_s32((int32_t)a_flip - dq->a_zero);
    for (size_t b = 0; b < 4; ++b) {
        int32_t sums[4];
        memcpy(sums, base + 16 * b, sizeof sums);
        pn->start[b] = vmulq_s32(vld1q_s32(sums), correction);
        pn->scale[b] = vld1q_f32(scale + 4 * b);
        pn->offset[b] = vld1q_f32(offset + 4 * b);
    }
}

/* a mlcc_qs8_packed_dequant_tile_fn */
static inline __attribute__((always_inline)) void tile(size_t mr, const uint8_t *a, size_t lda, size_t k,
                                                       uint8_t a_flip, const void *state, uint32_t *c, size_t ldc) {
    const struct panel *pn = state;
    int32x4_t acc[MR][4];
    for (size_t r = 0; r < mr; ++r)
        for (size_t b = 0; b < 4; ++b) acc[r][b] = pn->start[b];
    mlcc_qs8_neondot_accumulate(mr, a, lda, k, a_flip, pn->weights, acc);
    for (size_t r = 0; r < mr; ++r) {
        uint32_t out[16];
        uint32_t *row = pn->nr == 16 ? c + r * ldc : out;
        for (size_t b = 0; b < 4; ++b) {
            if (pn->floats) {
                float32x4_t v = vcvtq_f32_s32(acc[r][b]);
                if (pn->scaled) v = vmulq_f32(v, pn->scale[b]);
                if (pn->offset_added) v = vaddq_f32(v, pn->offset[b]);
                vst1q_u32(row + 4 * b, vreinterpretq_u32_f32(v));
            } else {
                vst1q_u32(row + 4 * b, vreinterpretq_u32_s32(acc[r][b]));
            }
        }
        if (pn->nr < 16) memcpy(c + r * ldc, out, 4 * pn->nr);
    }
}

MLCC_QS8_PACKED_DEQUANT_FORMS(neondot, MR, struct panel, panel_of, tile, false)
#endif
