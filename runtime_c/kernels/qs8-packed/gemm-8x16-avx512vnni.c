/* qs8-packed GEMM for AVX-512 VNNI (see qs8-packed.h): tiles of 8 rows x one 16-column panel, one vpdpbusd per
 * row and 4 bytes of k: the row's quad broadcast, the panel's 16 columns x 4 bytes as they are packed.
 * vpdpbusd multiplies unsigned by signed bytes and sums the four 16-bit products into 32 bits (no
 * saturation): it is fed a' + 128 (a ^ a_flip ^ 0x80) and the accumulators start at bias - 128 * sums,
 * so the result is exact. Requantization: each lane's multiplier and shift, 64-bit products and arithmetic
 * shifts (vpsravq). Rows past a multiple of 8 go one at a time (walk.h). A shift below 31 (a real multiplier of 1
 * or more) takes the reference's code. A panel of 8 columns or fewer runs on 256-bit vectors (uint8 rows). */
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#include <immintrin.h>
#include <string.h>

#include "dot-avx512vnni.h"

#define MR 8

/* The parameters of one panel's 16 columns, as vectors */
struct panel {
    const int8_t *weights;
    __m512i start, multiplier, mult_odd, s_even, s_odd, round_even, round_odd;
    __mmask16 columns;
};

/* a mlcc_qs8_packed_panel_fn */
static inline void panel_of(void *state, const int8_t *base, size_t j, size_t nr, const struct mlcc_qs8_requant *rq) {
    const __m512i one = _mm512_set1_epi64(1);
    struct panel pn;
    pn.columns = (__mmask16)(nr == 16 ? 0xFFFFu : (1u << nr) - 1u);
    pn.weights = base + 64;
    const __m512i sums = _mm512_loadu_si512(base);
    pn.start = _mm512_sub_epi32(_mm512_maskz_loadu_epi32(pn.columns, rq->bias + j), _mm512_slli_epi32(sums, 7));
    pn.multiplier = _mm512_mask_loadu_epi32(_mm512_set1_epi32(1 << 30), pn.columns, rq->multiplier + j);
    const __m512i shifts = _mm512_mask_loadu_epi32(_mm512_set1_epi32(31), pn.columns, rq->shift + j);
    pn.s_even = _mm512_and_si512(shifts, _mm512_set1_epi64(0xFFFFFFFF));
    pn.s_odd = _mm512_srli_epi64(shifts, 32);
    pn.round_even = _mm512_sllv_epi64(one, _mm512_sub_epi64(pn.s_even, one));
    pn.round_odd = _mm512_sllv_epi64(one, _mm512_sub_epi64(pn.s_odd, one));
    pn.mult_odd = _mm512_srli_epi64(pn.multiplier, 32);
    *(struct panel *)state = pn;
}

/* A tile's panels: one, or two side by side (each row's broadcast quad then feeds two vpdpbusd) */
struct panels {
    struct panel p[2];
    size_t panel_bytes;
    bool two, narrow;  /* narrow: one panel of 8 columns at most, whose tiles run on 256-bit vectors */
};

/* a mlcc_qs8_packed_panel_fn for tiles of two panels: columns [j, j + nr), nr <= 32 */
static inline void panels_of(void *state, const int8_t *base, size_t j, size_t nr, const struct mlcc_qs8_requant *rq) {
    struct panels *ps = state;
    ps->two = nr > MLCC_QS8_PACKED_NR;
    ps->narrow = nr <= MLCC_QS8_PACKED_NR / 2;
    panel_of(&ps->p[0], base, j, MLCC_MIN(nr, MLCC_QS8_PACKED_NR), rq);
    if (ps->two) panel_of(&ps->p[1], base + ps->panel_bytes, j + MLCC_QS8_PACKED_NR, nr - MLCC_QS8_PACKED_NR, rq);
}

/* One accumulator's 16 lanes requantized, plus the zero point, clamped */
static inline __attribute__((always_inline)) __m512i requantize(__m512i acc, const struct panel *pn,
                                                                const struct mlcc_qs8_requant *rq) {
    const __m512i even = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(acc, pn->multiplier), pn->round_even), pn->s_even);
    const __m512i odd = _mm512_srav_epi64(
        _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(acc, 32), pn->mult_odd), pn->round_odd), pn->s_odd);
    const __m512i v = _mm512_mask_blend_epi32((__mmask16)0xAAAA, even, _mm512_slli_epi64(odd, 32));
    return _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, _mm512_set1_epi32(rq->y_zero)),
                                             _mm512_set1_epi32(rq->y_min)), _mm512_set1_epi32(rq->y_max));
}

/* One row of one panel's accumulators requantized and stored (a value, not the array: the accumulators stay
 * in registers through the loops) */
static inline __attribute__((always_inline)) void store_row(__m512i acc, const struct panel *pn, uint8_t *c,
                                                            const struct mlcc_qs8_requant *rq) {
    _mm_mask_storeu_epi8(c, pn->columns, _mm512_cvtepi32_epi8(requantize(acc, pn, rq)));
}

static inline int32_t quad_at(const uint8_t *p, uint32_t flip) {
    int32_t bytes;
    memcpy(&bytes, p, 4);
    return bytes ^ (int32_t)flip;
}

static inline __m512i broadcast_quad(const uint8_t *p, uint32_t flip) { return _mm512_set1_epi32(quad_at(p, flip)); }

/* The accumulators of 8 rows are named, not an array (an array indexed in the nested loops was kept in memory,
 * a 64-byte store per row and quad) */
#define EACH_ROW(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

/* The tiles' steps, over `src##r`, row r's bytes of the current quad, and the quad's weights ws0 (ws1: the second
 * panel's, where `two`, a constant where inlined: each row's quad is broadcast once for both panels) */
#define START(r) __m512i acc##r = pn[0].start, bcc##r = pn[two].start;
#define MULTIPLY(r)                                             \
    {                                                           \
        const __m512i x = broadcast_quad(src##r, flip);         \
        acc##r = _mm512_dpbusd_epi32(acc##r, x, ws0);           \
        if (two) bcc##r = _mm512_dpbusd_epi32(bcc##r, x, ws1);  \
    }
#define STORE(r)                                                                \
    store_row(acc##r, &pn[0], c + r * ldc, rq);                                 \
    if (two) store_row(bcc##r, &pn[1], c + r * ldc + MLCC_QS8_PACKED_NR, rq);

/* A panel of 8 columns at most (an image's first convolution with 8 filters, the last columns of a layer) on
 * 256-bit vectors: the same products and requantization on the panel's low half, half the work of 512-bit
 * ones on a CPU that runs those as two 256-bit halves (Zen 4: MobileNetV1-VWW's first convolution 1.5x faster) */
static inline __attribute__((always_inline)) __m256i low(__m512i v) { return _mm512_castsi512_si256(v); }

static inline __attribute__((always_inline)) void store_row_narrow(__m256i acc, const struct panel *pn, uint8_t *c,
                                                                   const struct mlcc_qs8_requant *rq) {
    const __m256i even = _mm256_srav_epi64(_mm256_add_epi64(_mm256_mul_epi32(acc, low(pn->multiplier)), low(pn->round_even)),
                                           low(pn->s_even));
    const __m256i odd = _mm256_srav_epi64(
        _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(acc, 32), low(pn->mult_odd)), low(pn->round_odd)), low(pn->s_odd));
    const __m256i v = _mm256_mask_blend_epi32((__mmask8)0xAA, even, _mm256_slli_epi64(odd, 32));
    const __m256i clamped = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v, _mm256_set1_epi32(rq->y_zero)),
                                                              _mm256_set1_epi32(rq->y_min)), _mm256_set1_epi32(rq->y_max));
    _mm_mask_storeu_epi8(c, pn->columns, _mm256_cvtepi32_epi8(clamped));
}

#define START_NARROW(r) __m256i acc##r = low(pn->start);
#define MULTIPLY_NARROW(r) acc##r = _mm256_dpbusd_epi32(acc##r, _mm256_set1_epi32(quad_at(src##r, 0)), ws);
#define STORE_NARROW(r) store_row_narrow(acc##r, pn, c + r * ldc, rq);

/* 8 rows of uint8 bytes (vpdpbusd's operand as they are) times a narrow panel */
static inline __attribute__((always_inline)) void rows_tile8_narrow(const uint8_t *a, size_t lda, size_t k,
                                                                    const struct panel *pn, uint8_t *c, size_t ldc,
                                                                    const struct mlcc_qs8_requant *rq) {
    EACH_ROW(START_NARROW)
    const size_t k4 = k / 4;
    for (size_t q = 0; q < k4; ++q) {
        const __m256i ws = _mm256_loadu_si256((const __m256i *)(pn->weights + q * 64));
#define SOURCE(r) const uint8_t *src##r = a + r * lda + 4 * q;
        EACH_ROW(SOURCE)
#undef SOURCE
        EACH_ROW(MULTIPLY_NARROW)
    }
    if (4 * k4 < k) {  /* the last quad's bytes gathered, zero past k */
        const __m256i ws = _mm256_loadu_si256((const __m256i *)(pn->weights + k4 * 64));
#define SOURCE(r) uint32_t quad##r = mlcc_qs8_row_quad(a + r * lda, k4, k, 0); const uint8_t *src##r = (const uint8_t *)&quad##r;
        EACH_ROW(SOURCE)
#undef SOURCE
        EACH_ROW(MULTIPLY_NARROW)
    }
    EACH_ROW(STORE_NARROW)
}

/* 8 rows of uint8 bytes read through their taps' pointers times a narrow panel */
static inline __attribute__((always_inline)) void taps_tile8_narrow(const uint8_t *const *rows, size_t taps,
                                                                    size_t channels, const struct panel *pn,
                                                                    uint8_t *c, size_t ldc,
                                                                    const struct mlcc_qs8_requant *rq) {
    EACH_ROW(START_NARROW)
    const int8_t *w = pn->weights;
    for (size_t t = 0; t < taps; ++t) {
#define TAP(r) const uint8_t *tap##r = rows[r * taps + t];
        EACH_ROW(TAP)
#undef TAP
        for (size_t p = 0; p < channels; p += 4, w += 64) {
            const __m256i ws = _mm256_loadu_si256((const __m256i *)w);
#define SOURCE(r) const uint8_t *src##r = tap##r + p;
            EACH_ROW(SOURCE)
#undef SOURCE
            EACH_ROW(MULTIPLY_NARROW)
        }
    }
    EACH_ROW(STORE_NARROW)
}

/* 8 rows of bytes (lda apart, k deep) times one panel or two */
static inline __attribute__((always_inline)) void rows_tile8(bool two, const uint8_t *a, size_t lda, size_t k, uint32_t flip,
                                                             const struct panel *pn, uint8_t *c, size_t ldc,
                                                             const struct mlcc_qs8_requant *rq) {
    EACH_ROW(START)
    const size_t k4 = k / 4;
    for (size_t q = 0; q < k4; ++q) {
        const __m512i ws0 = _mm512_loadu_si512(pn[0].weights + q * 64), ws1 = _mm512_loadu_si512(pn[two].weights + q * 64);
#define SOURCE(r) const uint8_t *src##r = a + r * lda + 4 * q;
        EACH_ROW(SOURCE)
#undef SOURCE
        EACH_ROW(MULTIPLY)
    }
    if (4 * k4 < k) {  /* the last quad's bytes gathered, zero past k */
        const __m512i ws0 = _mm512_loadu_si512(pn[0].weights + k4 * 64), ws1 = _mm512_loadu_si512(pn[two].weights + k4 * 64);
#define SOURCE(r) uint32_t quad##r = mlcc_qs8_row_quad(a + r * lda, k4, k, 0); const uint8_t *src##r = (const uint8_t *)&quad##r;
        EACH_ROW(SOURCE)
#undef SOURCE
        EACH_ROW(MULTIPLY)
    }
    EACH_ROW(STORE)
}

/* `mr` rows (fewer than 8) times one panel */
static inline void rows_tile_short(size_t mr, const uint8_t *a, size_t lda, size_t k, uint32_t flip,
                                   const struct panel *pn, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    __m512i acc[MR];
    for (size_t r = 0; r < mr; ++r) acc[r] = pn->start;
    mlcc_qs8_vnni_accumulate(mr, a, lda, k, flip, pn->weights, acc);
    for (size_t r = 0; r < mr; ++r) store_row(acc[r], pn, c + r * ldc, rq);
}

/* a mlcc_qs8_packed_tile_fn: rows of bytes ^ a_flip ^ 0x80 */
static inline __attribute__((always_inline)) void rows_tile(size_t mr, const void *operand, size_t i, const void *state,
                                                            uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_packed_rows *rows = operand;
    const uint8_t *a = rows->a + i * rows->lda;
    const uint32_t flip = (uint32_t)(rows->a_flip ^ 0x80) * 0x01010101u;
    const struct panels *ps = state;
    if (mr < MR) {
        rows_tile_short(mr, a, rows->lda, rows->k, flip, &ps->p[0], c, ldc, rq);
        if (ps->two) rows_tile_short(mr, a, rows->lda, rows->k, flip, &ps->p[1], c + MLCC_QS8_PACKED_NR, ldc, rq);
    } else if (ps->narrow && flip == 0) {  /* uint8 activations (int8 ones take the 512-bit tile) */
        rows_tile8_narrow(a, rows->lda, rows->k, ps->p, c, ldc, rq);
    } else if (ps->two) {
        if (flip == 0) {  /* uint8 activations are vpdpbusd's operand as they are: broadcast from memory */
            rows_tile8(true, a, rows->lda, rows->k, 0, ps->p, c, ldc, rq);
        } else {
            rows_tile8(true, a, rows->lda, rows->k, flip, ps->p, c, ldc, rq);
        }
    } else if (flip == 0) {
        rows_tile8(false, a, rows->lda, rows->k, 0, ps->p, c, ldc, rq);
    } else {
        rows_tile8(false, a, rows->lda, rows->k, flip, ps->p, c, ldc, rq);
    }
}

void mlcc_qs8_packed_gemm__avx512vnni(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                      const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct mlcc_qs8_packed_rows rows = {a, lda, k, a_flip};
    struct panels ps;
    ps.panel_bytes = mlcc_qs8_packed_panel_bytes(k);
    if (!mlcc_qs8_packed_walk_panels(MR, 2, true, m, n, k, &rows, packed, c, ldc, rq, &ps, panels_of, rows_tile)) {
        mlcc_qs8_packed_gemm__reference(m, n, k, a, lda, a_flip, packed, c, ldc, rq);
    }
}

/* 8 rows whose taps are read where the pointers say (channels a multiple of 4) times one panel or two */
static inline __attribute__((always_inline)) void taps_tile8(bool two, const uint8_t *const *rows, size_t taps,
                                                             size_t channels, uint32_t flip, const struct panel *pn,
                                                             uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    EACH_ROW(START)
    const int8_t *w0 = pn[0].weights, *w1 = pn[two].weights;
    for (size_t t = 0; t < taps; ++t) {
#define TAP(r) const uint8_t *tap##r = rows[r * taps + t];
        EACH_ROW(TAP)
#undef TAP
        for (size_t p = 0; p < channels; p += 4, w0 += 64, w1 += 64) {
            const __m512i ws0 = _mm512_loadu_si512(w0), ws1 = _mm512_loadu_si512(w1);
#define SOURCE(r) const uint8_t *src##r = tap##r + p;
            EACH_ROW(SOURCE)
#undef SOURCE
            EACH_ROW(MULTIPLY)
        }
    }
    EACH_ROW(STORE)
}

/* one row the same way */
static inline void taps_tile1(const uint8_t *const *rows, size_t taps, size_t channels, uint32_t flip,
                                  const struct panel *pn, uint8_t *c, const struct mlcc_qs8_requant *rq) {
    __m512i acc = pn->start;
    const int8_t *weights = pn->weights;
    for (size_t t = 0; t < taps; ++t) {
        for (size_t p = 0; p < channels; p += 4, weights += 64) {
            acc = _mm512_dpbusd_epi32(acc, broadcast_quad(rows[t] + p, flip), _mm512_loadu_si512(weights));
        }
    }
    store_row(acc, pn, c, rq);
}

/* The indirect form's operand: each row's taps, `taps` pointers a row, and the flip as rows_tile's */
struct taps {
    const uint8_t *const *rows;
    size_t taps, channels;
    uint32_t flip;
};

/* a mlcc_qs8_packed_tile_fn: 8 rows or 1 */
static inline __attribute__((always_inline)) void taps_tile(size_t mr, const void *operand, size_t i, const void *state,
                                                            uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const struct taps *t = operand;
    const struct panels *ps = state;
    const uint8_t *const *rows = t->rows + i * t->taps;
    if (mr < MR) {
        taps_tile1(rows, t->taps, t->channels, t->flip, &ps->p[0], c, rq);
        if (ps->two) taps_tile1(rows, t->taps, t->channels, t->flip, &ps->p[1], c + MLCC_QS8_PACKED_NR, rq);
    } else if (ps->narrow && t->flip == 0) {  /* uint8 activations (int8 ones take the 512-bit tile) */
        taps_tile8_narrow(rows, t->taps, t->channels, ps->p, c, ldc, rq);
    } else if (ps->two) {
        if (t->flip == 0) {  /* uint8 activations: vpdpbusd's operand as they are */
            taps_tile8(true, rows, t->taps, t->channels, 0, ps->p, c, ldc, rq);
        } else {
            taps_tile8(true, rows, t->taps, t->channels, t->flip, ps->p, c, ldc, rq);
        }
    } else if (t->flip == 0) {
        taps_tile8(false, rows, t->taps, t->channels, 0, ps->p, c, ldc, rq);
    } else {
        taps_tile8(false, rows, t->taps, t->channels, t->flip, ps->p, c, ldc, rq);
    }
}

void mlcc_qs8_packed_igemm__avx512vnni(size_t m, size_t n, size_t taps, size_t channels, const uint8_t *const *rows,
                                       uint8_t a_flip, const int8_t *packed, uint8_t *c, size_t ldc,
                                       const struct mlcc_qs8_requant *rq) {
    const struct taps operand = {rows, taps, channels, (uint32_t)(a_flip ^ 0x80) * 0x01010101u};
    struct panels ps;
    ps.panel_bytes = mlcc_qs8_packed_panel_bytes(taps * channels);
    if (!mlcc_qs8_packed_walk_panels(MR, 2, true, m, n, taps * channels, &operand, packed, c, ldc, rq, &ps, panels_of,
                                     taps_tile)) {
        mlcc_qs8_packed_igemm__reference(m, n, taps, channels, rows, a_flip, packed, c, ldc, rq);
    }
}
#endif
