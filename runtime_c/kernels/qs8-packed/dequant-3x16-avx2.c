/* qs8-packed's dequantizing forms for AVX2 (see qs8-packed.h): tiles of 3 rows x one 16-column panel. A row's 4
 * values of k are widened to 16 bits as they are (zero-extended uint8, sign-extended int8) and broadcast; the
 * panel's quad, 4 columns x 4 bytes at a time, sign-extended; vpmaddwd sums pairs of exact 16-bit products into
 * 32 bits (255 * 128 * 2 fits: no saturation, unlike vpmaddubsw's 16-bit pair sums), and each column's two
 * pair sums are added at the end. The accumulators start at -a_zero * sums, so they hold sum (a - a_zero) * w
 * exactly; then stored as int32, or converted to float, multiplied by the scale and offset one rounding each
 * (vcvtdq2ps, vmulps, vaddps), as the reference's scalar statements: bit-identical. */
#if defined(__AVX2__)
#include <immintrin.h>
#include <string.h>

#include "walk.h"

#define MR 3

struct panel {
    const int8_t *weights;
    __m256i start[2];
    __m256 scale[2], offset[2];
    size_t nr;
    bool floats, scaled, offset_added;
};

/* a mlcc_qs8_packed_dequant_panel_fn */
static inline void panel_of(void *state, const int8_t *base, size_t j, size_t nr, size_t k,
                            const struct mlcc_qs8_dequant *dq, uint8_t a_flip, bool floats) {
    (void)k;
    (void)a_flip;
    struct panel *pn = state;
    pn->nr = nr;
    pn->floats = floats;
    pn->weights = base + 64;
    const __m256i zero_point = _mm256_set1_epi32(-dq->a_zero);
    pn->scaled = dq->scale != NULL;
    pn->offset_added = dq->offset != NULL;
    float scale[16], offset[16];
    mlcc_qs8_dequant_columns(dq, j, nr, scale, offset);
    for (size_t h = 0; h < 2; ++h) {
        pn->start[h] = _mm256_mullo_epi32(_mm256_loadu_si256((const __m256i *)(base + 32 * h)), zero_point);
        pn->scale[h] = _mm256_loadu_ps(scale + 8 * h);
        pn->offset[h] = _mm256_loadu_ps(offset + 8 * h);
    }
}

/* 8 columns' values stored as int32 or dequantized */
static inline __attribute__((always_inline)) void store8(__m256i acc, const struct panel *pn, size_t h, uint32_t *c,
                                                         size_t count) {
    __m256i bits = acc;
    if (pn->floats) {
        __m256 v = _mm256_cvtepi32_ps(acc);
        if (pn->scaled) v = _mm256_mul_ps(v, pn->scale[h]);
        if (pn->offset_added) v = _mm256_add_ps(v, pn->offset[h]);
        bits = _mm256_castps_si256(v);
    }
    if (count == 8) {
        _mm256_storeu_si256((__m256i *)c, bits);
    } else {
        uint32_t lanes[8];
        _mm256_storeu_si256((__m256i *)lanes, bits);
        memcpy(c, lanes, 4 * count);
    }
}

/* A row's quad q as 4 16-bit values repeated in every 64-bit lane */
static inline __m256i row_quad16(const uint8_t *row, size_t q, size_t k, bool uint8_rows) {
    uint32_t bytes;
    if (4 * q + 4 <= k) {
        memcpy(&bytes, row + 4 * q, 4);
    } else {
        bytes = mlcc_qs8_row_quad(row, q, k, 0);
    }
    const __m128i b = _mm_set1_epi32((int32_t)bytes);
    return uint8_rows ? _mm256_cvtepu8_epi16(b) : _mm256_cvtepi8_epi16(b);
}

/* a mlcc_qs8_packed_dequant_tile_fn: a_flip 0x80, uint8 rows zero-extended; 0, int8 rows sign-extended */
static inline __attribute__((always_inline)) void tile(size_t mr, const uint8_t *a, size_t lda, size_t k,
                                                       uint8_t a_flip, const void *state, uint32_t *c, size_t ldc) {
    const struct panel *pn = state;
    const size_t quads = (k + 3) / 4;
    __m256i acc[MR][4];
    for (size_t r = 0; r < mr; ++r)
        for (size_t t = 0; t < 4; ++t) acc[r][t] = _mm256_setzero_si256();
    for (size_t q = 0; q < quads; ++q) {
        __m256i x[MR];
        for (size_t r = 0; r < mr; ++r) x[r] = row_quad16(a + r * lda, q, k, a_flip != 0);
        for (size_t t = 0; t < 4; ++t) {
            const __m256i ws = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(pn->weights + q * 64 + t * 16)));
            for (size_t r = 0; r < mr; ++r) acc[r][t] = _mm256_add_epi32(acc[r][t], _mm256_madd_epi16(x[r], ws));
        }
    }
    for (size_t r = 0; r < mr; ++r) {
        /* lanes (c0, c0, c1, c1 | c2, c2, c3, c3): pair sums, then columns 0-7 and 8-15 in order */
        const __m256i v0 = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][0], acc[r][1]), 0xD8);
        const __m256i v1 = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][2], acc[r][3]), 0xD8);
        uint32_t *out = c + r * ldc;
        store8(_mm256_add_epi32(v0, pn->start[0]), pn, 0, out, MLCC_MIN(pn->nr, 8));
        if (pn->nr > 8) store8(_mm256_add_epi32(v1, pn->start[1]), pn, 1, out + 8, pn->nr - 8);
    }
}

MLCC_QS8_PACKED_DEQUANT_FORMS(avx2, MR, struct panel, panel_of, tile, false)
#endif
