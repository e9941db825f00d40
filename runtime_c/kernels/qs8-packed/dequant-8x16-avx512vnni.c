/* qs8-packed's dequantizing forms for AVX-512 VNNI (see qs8-packed.h): tiles of 8 rows x one 16-column panel as
 * gemm-8x16-avx512vnni.c's, one vpdpbusd per row and 4 bytes of k (a ^ a_flip ^ 0x80 unsigned times the
 * panel's signed bytes, the four products summed exactly in 32 bits: no saturation), the accumulators starting
 * at (a_flip - 128 - a_zero) * sums, so they hold sum (a - a_zero) * w exactly. Then stored as int32, or
 * converted to float (vcvtdq2ps), multiplied by the scale (vmulps) and offset (vaddps) one rounding each, as
 * the reference's scalar statements: bit-identical. */
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#include <immintrin.h>
#include <string.h>

#include "dot-avx512vnni.h"

#define MR 8

struct panel {
    const int8_t *weights;
    __m512i start;
    __m512 scale, offset;
    __mmask16 columns;
    bool floats, scaled, offset_added;
};

/* a mlcc_qs8_packed_dequant_panel_fn; dq->scale NULL with floats set means Cast alone */
static inline void panel_of(void *state, const int8_t *base, size_t j, size_t nr, size_t k,
                            const struct mlcc_qs8_dequant *dq, uint8_t a_flip, bool floats) {
    (void)k;
    struct panel *pn = state;
    pn->floats = floats;
    pn->columns = (__mmask16)(nr == 16 ? 0xFFFFu : (1u << nr) - 1u);
    pn->weights = base + 64;
    const int32_t correction = (int32_t)a_flip - 128 - dq->a_zero;
    pn->start = _mm512_mullo_epi32(_mm512_loadu_si512(base), _mm512_set1_epi32(correction));
    pn->scaled = dq->scale != NULL;
    pn->offset_added = dq->offset != NULL;
    if (dq->scale) {
        pn->scale = dq->scale_step ? _mm512_maskz_loadu_ps(pn->columns, dq->scale + j) : _mm512_set1_ps(dq->scale[0]);
    }
    if (dq->offset) pn->offset = _mm512_maskz_loadu_ps(pn->columns, dq->offset + j);
}

static inline __attribute__((always_inline)) void store_row(__m512i acc, const struct panel *pn, uint32_t *c) {
    if (!pn->floats) {
        _mm512_mask_storeu_epi32(c, pn->columns, acc);
        return;
    }
    __m512 v = _mm512_cvtepi32_ps(acc);
    if (pn->scaled) v = _mm512_mul_ps(v, pn->scale);
    if (pn->offset_added) v = _mm512_add_ps(v, pn->offset);
    _mm512_mask_storeu_ps(c, pn->columns, v);
}

/* a mlcc_qs8_packed_dequant_tile_fn: `mr` rows (8, or 1 for the rest) times the panel, the bytes fed as they are
 * for uint8 rows (a_flip 0x80) and ^ 0x80 for int8 */
static inline __attribute__((always_inline)) void tile(size_t mr, const uint8_t *a, size_t lda, size_t k,
                                                       uint8_t a_flip, const void *state, uint32_t *c, size_t ldc) {
    const struct panel *pn = state;
    const uint32_t flip = (uint32_t)(a_flip ^ 0x80) * 0x01010101u;
    __m512i acc[MR];
    for (size_t r = 0; r < mr; ++r) acc[r] = pn->start;
    mlcc_qs8_vnni_accumulate(mr, a, lda, k, flip, pn->weights, acc);
    for (size_t r = 0; r < mr; ++r) store_row(acc[r], pn, c + r * ldc);
}

MLCC_QS8_PACKED_DEQUANT_FORMS(avx512vnni, MR, struct panel, panel_of, tile, false)
#endif
