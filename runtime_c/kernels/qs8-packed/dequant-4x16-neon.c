/* qs8-packed's dequantizing forms for NEON without the dot product, AArch64 and Armv7 (see qs8-packed.h): each
 * panel's weights widened to 16 bits once for all rows, into dq->work, as 16 columns per k; then tiles of 4 rows
 * (2 on Armv7, whose 16 registers hold 8 accumulators and their operands) x the panel, 8 values of k a step: the
 * rows' 8 bytes widened as they are (zero-extended uint8, sign-extended int8) and smlal by lane multiplying
 * each k's 4 columns at a time into 32-bit lanes: exact products, no saturation. The accumulators start at
 * -a_zero * sums, so they hold sum (a - a_zero) * w exactly; then stored as int32, or converted to float,
 * multiplied by the scale and offset one rounding each (no fused multiply-add), as the reference's scalar
 * statements: bit-identical. Without dq->work the reference runs. */
#if defined(__ARM_NEON)
#include <arm_neon.h>
#include <string.h>

#include "walk.h"

#if defined(__aarch64__)
#define MR 4
#else
#define MR 2
#endif

struct panel {
    const int16_t *wide;
    int32x4_t start[4];
    float32x4_t scale[4], offset[4];
    size_t nr;
    bool floats, scaled, offset_added;
};

/* The panel's weights as wide[p][16] for p < k rounded up to 8, zero past k */
static void widen_panel(const int8_t *quads, size_t k, int16_t *wide) {
    const size_t depth = (k + 7) & ~(size_t)7;
    for (size_t p = 0; p < depth; ++p) {
        for (size_t col = 0; col < 16; ++col) {
            wide[p * 16 + col] = p < k ? quads[(p / 4) * 64 + col * 4 + p % 4] : 0;
        }
    }
}

/* a mlcc_qs8_packed_dequant_panel_fn */
static inline void panel_of(void *state, const int8_t *base, size_t j, size_t nr, size_t k,
                            const struct mlcc_qs8_dequant *dq, uint8_t a_flip, bool floats) {
    (void)a_flip;
    struct panel *pn = state;
    widen_panel(base + 64, k, dq->work);
    pn->wide = dq->work;
    pn->nr = nr;
    pn->floats = floats;
    pn->scaled = dq->scale != NULL;
    pn->offset_added = dq->offset != NULL;
    float scale[16], offset[16];
    mlcc_qs8_dequant_columns(dq, j, nr, scale, offset);
    const int32x4_t zero_point = vdupq_n_s32(-dq->a_zero);
    for (size_t b = 0; b < 4; ++b) {
        int32_t sums[4];
        memcpy(sums, base + 16 * b, sizeof sums);
        pn->start[b] = vmulq_s32(vld1q_s32(sums), zero_point);
        pn->scale[b] = vld1q_f32(scale + 4 * b);
        pn->offset[b] = vld1q_f32(offset + 4 * b);
    }
}

/* 8 bytes of a row from p, zero past k, widened to 16 bits */
static inline int16x8_t row8(const uint8_t *row, size_t p, size_t k, bool uint8_rows) {
    uint8x8_t bytes;
    if (p + 8 <= k) {
        bytes = vld1_u8(row + p);
    } else {
        uint8_t tail[8] = {0};
        memcpy(tail, row + p, k - p);
        bytes = vld1_u8(tail);
    }
    return uint8_rows ? vreinterpretq_s16_u16(vmovl_u8(bytes)) : vmovl_s8(vreinterpret_s8_u8(bytes));
}

#define STEP(lane, half)                                                                                      \
    {                                                                                                         \
        const int16_t *wp = w + 16 * (lane + 4 * half);                                                       \
        const int16x8_t w01 = vld1q_s16(wp), w23 = vld1q_s16(wp + 8);                                         \
        for (size_t r = 0; r < mr; ++r) {                                                                     \
            const int16x4_t xs = half ? vget_high_s16(x[r]) : vget_low_s16(x[r]);                             \
            acc[r][0] = vmlal_lane_s16(acc[r][0], vget_low_s16(w01), xs, lane);                               \
            acc[r][1] = vmlal_lane_s16(acc[r][1], vget_high_s16(w01), xs, lane);                              \
            acc[r][2] = vmlal_lane_s16(acc[r][2], vget_low_s16(w23), xs, lane);                               \
            acc[r][3] = vmlal_lane_s16(acc[r][3], vget_high_s16(w23), xs, lane);                              \
        }                                                                                                     \
    }

/* a mlcc_qs8_packed_dequant_tile_fn: a_flip 0x80, uint8 rows zero-extended; 0, int8 rows sign-extended */
static inline __attribute__((always_inline)) void tile(size_t mr, const uint8_t *a, size_t lda, size_t k,
                                                       uint8_t a_flip, const void *state, uint32_t *c, size_t ldc) {
    const struct panel *pn = state;
    int32x4_t acc[MR][4];
    for (size_t r = 0; r < mr; ++r)
        for (size_t b = 0; b < 4; ++b) acc[r][b] = pn->start[b];
    const int16_t *w = pn->wide;
    for (size_t p = 0; p < k; p += 8, w += 128) {
        int16x8_t x[MR];
        for (size_t r = 0; r < mr; ++r) x[r] = row8(a + r * lda, p, k, a_flip != 0);
        STEP(0, 0) STEP(1, 0) STEP(2, 0) STEP(3, 0)
        STEP(0, 1) STEP(1, 1) STEP(2, 1) STEP(3, 1)
    }
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
#undef STEP

MLCC_QS8_PACKED_DEQUANT_FORMS(neon, MR, struct panel, panel_of, tile, true)
#endif
