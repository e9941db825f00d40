/* qs8-packed GEMM for AVX2 (see qs8-packed.h): tiles of 2 rows x one 16-column panel. Each pair of rows is
 * sign-extended to 16 bits once (for every panel), and a row's 4 values of k are broadcast from there; 16 bytes of the panel (4 columns x 4 k) are sign-extended and
 * multiplied with vpmaddwd, which sums pairs of exact 16-bit products into 32 bits (no saturation, unlike
 * vpmaddubsw); each column's two pair sums are added at the end (vphaddd). Requantization is vectorised
 * across columns with each lane's multiplier and shift: in 32-bit lanes where a panel's shifts are all 32 or
 * more (requantize8_wide_shift), else qs8-gemm.h's 2^62 trick for the 64-bit arithmetic shift.
 * A shift below 31 (a real multiplier of 1 or more) takes the reference's code. */
#if defined(__AVX2__)
#include <immintrin.h>
#include <string.h>

#include "mlcc/kernels/qs8-packed.h"

#define MR 2
#define MAX_QUADS 1024  /* k up to 4096: two rows widened, 16 KiB of stack; more takes the reference */

static inline __m256i requantize8(__m256i acc, const int32_t *multiplier, const int32_t *shift) {
    const __m256i mult = _mm256_loadu_si256((const __m256i *)multiplier);
    const __m256i shifts = _mm256_loadu_si256((const __m256i *)shift);
    const __m256i one = _mm256_set1_epi64x(1), bias62 = _mm256_set1_epi64x((int64_t)1 << 62);
    const __m256i sixty_two = _mm256_set1_epi64x(62);
    const __m256i s_even = _mm256_and_si256(shifts, _mm256_set1_epi64x(0xFFFFFFFF)), s_odd = _mm256_srli_epi64(shifts, 32);
    const __m256i round_even = _mm256_add_epi64(_mm256_sllv_epi64(one, _mm256_sub_epi64(s_even, one)), bias62);
    const __m256i round_odd = _mm256_add_epi64(_mm256_sllv_epi64(one, _mm256_sub_epi64(s_odd, one)), bias62);
    __m256i even = _mm256_add_epi64(_mm256_mul_epi32(acc, mult), round_even);
    __m256i odd = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(acc, 32), _mm256_srli_epi64(mult, 32)), round_odd);
    even = _mm256_sub_epi64(_mm256_srlv_epi64(even, s_even), _mm256_sllv_epi64(one, _mm256_sub_epi64(sixty_two, s_even)));
    odd = _mm256_sub_epi64(_mm256_srlv_epi64(odd, s_odd), _mm256_sllv_epi64(one, _mm256_sub_epi64(sixty_two, s_odd)));
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

/* The same where every lane's shift is 32 or more, in 32-bit lanes after the product: with q = floor(P / 2^31)
 * of P = acc * multiplier (|P| < 2^62, so q fits 32 bits: bits 31-62 of P), the reference's
 * floor((P + 2^(s-1)) / 2^s) is floor((q + 2^(s-32)) / 2^(s-31)) (the dropped low bits of P cannot carry
 * past a multiple of 2^31), which is ((q >> (s-32)) + 1) >> 1: a variable arithmetic shift AVX2 has for
 * 32-bit lanes (vpsravd), where 64-bit lanes need the 2^62 detour. Exact, bit-identical to the reference. */
static inline __m256i requantize8_wide_shift(__m256i acc, const int32_t *multiplier, const int32_t *shift) {
    const __m256i mult = _mm256_loadu_si256((const __m256i *)multiplier);
    const __m256i shifts = _mm256_loadu_si256((const __m256i *)shift);
    const __m256i even = _mm256_mul_epi32(acc, mult);
    const __m256i odd = _mm256_mul_epi32(_mm256_srli_epi64(acc, 32), _mm256_srli_epi64(mult, 32));
    const __m256i q = _mm256_blend_epi32(_mm256_srli_epi64(even, 31), _mm256_slli_epi64(odd, 1), 0xAA);
    const __m256i halves = _mm256_srav_epi32(q, _mm256_sub_epi32(shifts, _mm256_set1_epi32(32)));
    return _mm256_srai_epi32(_mm256_add_epi32(halves, _mm256_set1_epi32(1)), 1);
}

/* bytes 4q .. 4q + 3 of a row, zero past k (they meet the panel's zero padding) */
static inline uint32_t quad_bytes(const uint8_t *row, size_t q, size_t k) {
    uint32_t bytes = 0;
    for (size_t p = 4 * q; p < k && p < 4 * q + 4; ++p) bytes |= (uint32_t)row[p] << (8 * (p - 4 * q));
    return bytes;
}

/* A row's k bytes as sign-extended 16-bit values, quad by quad (16 bytes at a time, the last quad padded
 * with zeros), once per row for every panel */
static void widen_row(const uint8_t *row, size_t k, uint8_t a_flip, int64_t *wide) {
    const __m128i flip = _mm_set1_epi8((char)a_flip);
    size_t p = 0;
    for (; p + 16 <= k; p += 16) {
        _mm256_storeu_si256((__m256i *)(wide + p / 4), _mm256_cvtepi8_epi16(_mm_xor_si128(_mm_loadu_si128((const __m128i *)(row + p)), flip)));
    }
    for (; p + 4 <= k; p += 4) {
        uint32_t bytes;
        memcpy(&bytes, row + p, 4);
        _mm_storel_epi64((__m128i *)(wide + p / 4), _mm_cvtepi8_epi16(_mm_cvtsi32_si128((int)(bytes ^ (a_flip * 0x01010101u)))));
    }
    for (size_t q = p / 4; 4 * q < k; ++q) {
        _mm_storel_epi64((__m128i *)(wide + q), _mm_cvtepi8_epi16(_mm_cvtsi32_si128((int)(quad_bytes(row, q, k) ^ (a_flip * 0x01010101u)))));
    }
}

/* The requantization of the panels' columns, the last panel's padded past n (full panels read rq in place) */
struct columns {
    int32_t tail_bias[16], tail_multiplier[16], tail_shift[16];
    size_t last;
};

static void columns_of(size_t n, const struct mlcc_qs8_requant *rq, struct columns *cols) {
    cols->last = n - (n - 1) % MLCC_QS8_PACKED_NR - 1;
    for (size_t q = 0; q < 16; ++q) {
        const size_t j = cols->last + q;
        cols->tail_bias[q] = j < n ? rq->bias[j] : 0;
        cols->tail_multiplier[q] = j < n ? rq->multiplier[j] : 1 << 30;
        cols->tail_shift[q] = j < n ? rq->shift[j] : 31;
    }
}

/* Two widened rows times `groups` (a constant where inlined: 4, or 2 for a panel of 8 columns or fewer) groups
 * of a panel's 4 columns, quad by quad */
static inline __attribute__((always_inline)) void accumulate(size_t groups, int64_t wide[MR][MAX_QUADS], size_t quads,
                                                             const int8_t *weights, __m256i acc[MR][4]) {
    for (size_t t = 0; t < groups; ++t) acc[0][t] = acc[1][t] = _mm256_setzero_si256();
    for (size_t q = 0; q < quads; ++q) {
        const __m256i x0 = _mm256_set1_epi64x(wide[0][q]), x1 = _mm256_set1_epi64x(wide[1][q]);
        for (size_t t = 0; t < groups; ++t) {
            const __m256i ws = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(weights + q * 64 + t * 16)));
            acc[0][t] = _mm256_add_epi32(acc[0][t], _mm256_madd_epi16(x0, ws));
            acc[1][t] = _mm256_add_epi32(acc[1][t], _mm256_madd_epi16(x1, ws));
        }
    }
}

/* `mr` (1 or 2) widened rows times every panel, into row i of c */
static void panels(size_t mr, int64_t wide[MR][MAX_QUADS], size_t quads, size_t n, const int8_t *packed, size_t panel,
                   uint8_t *c, size_t ldc, size_t i, const struct mlcc_qs8_requant *rq, const struct columns *cols) {
    const __m256i zero_point = _mm256_set1_epi32(rq->y_zero);
    const __m256i low = _mm256_set1_epi32(rq->y_min), high = _mm256_set1_epi32(rq->y_max);
    const bool signed_out = rq->y_min < 0;
    const int32_t *tail_bias = cols->tail_bias, *tail_multiplier = cols->tail_multiplier, *tail_shift = cols->tail_shift;
    for (size_t j = 0; j < n; j += MLCC_QS8_PACKED_NR) {
        const size_t nr = MLCC_MIN(MLCC_QS8_PACKED_NR, n - j);
        const int8_t *weights = packed + (j / MLCC_QS8_PACKED_NR) * panel + 64;
        const int32_t *bias = nr == 16 ? rq->bias + j : tail_bias;
        const int32_t *multiplier = nr == 16 ? rq->multiplier + j : tail_multiplier;
        const int32_t *shift = nr == 16 ? rq->shift + j : tail_shift;
        const __m256i thirty_one = _mm256_set1_epi32(31);  /* a shift of 31 takes the 64-bit form */
        const bool wide_shifts = _mm256_testz_si256(
            _mm256_or_si256(_mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)shift), thirty_one),
                            _mm256_cmpeq_epi32(_mm256_loadu_si256((const __m256i *)(shift + 8)), thirty_one)),
            _mm256_set1_epi32(-1));
        __m256i acc[MR][4];
        const bool half = nr <= 8;  /* columns 8-15 all padding: their products and requantization skipped */
        if (half) {
            accumulate(2, wide, quads, weights, acc);
        } else {
            accumulate(4, wide, quads, weights, acc);
        }
        for (size_t r = 0; r < mr; ++r) {
            /* lanes (c0, c0, c1, c1 | c2, c2, c3, c3): pair sums, then columns 0-7 and 8-15 in order */
            __m256i v0 = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][0], acc[r][1]), 0xD8), v1 = v0;
            v0 = _mm256_add_epi32(v0, _mm256_loadu_si256((const __m256i *)bias));
            v0 = wide_shifts ? requantize8_wide_shift(v0, multiplier, shift) : requantize8(v0, multiplier, shift);
            v0 = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v0, zero_point), low), high);
            if (!half) {
                v1 = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][2], acc[r][3]), 0xD8);
                v1 = _mm256_add_epi32(v1, _mm256_loadu_si256((const __m256i *)(bias + 8)));
                v1 = wide_shifts ? requantize8_wide_shift(v1, multiplier + 8, shift + 8) : requantize8(v1, multiplier + 8, shift + 8);
                v1 = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v1, zero_point), low), high);
            }
            const __m256i words = _mm256_permute4x64_epi64(_mm256_packs_epi32(v0, v1), 0xD8);
            const __m128i w0 = _mm256_castsi256_si128(words), w1 = _mm256_extracti128_si256(words, 1);
            const __m128i bytes = signed_out ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1);
            uint8_t *out = c + (i + r) * ldc + j;
            if (nr == 16) {
                _mm_storeu_si128((__m128i *)out, bytes);
            } else {
                uint8_t lanes[16];
                _mm_storeu_si128((__m128i *)lanes, bytes);
                memcpy(out, lanes, nr);
            }
        }
    }
}

static bool falls_back(size_t n, size_t quads, const struct mlcc_qs8_requant *rq) {
    bool small_shift = false;
    for (size_t j = 0; j < n; ++j) small_shift |= rq->shift[j] < 31;
    return small_shift || quads > MAX_QUADS;
}

void mlcc_qs8_packed_gemm__avx2(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                                const int8_t *packed, uint8_t *c, size_t ldc, const struct mlcc_qs8_requant *rq) {
    const size_t panel = mlcc_qs8_packed_panel_bytes(k), quads = (k + 3) / 4;
    if (falls_back(n, quads, rq)) {
        mlcc_qs8_packed_gemm__reference(m, n, k, a, lda, a_flip, packed, c, ldc, rq);
        return;
    }
    struct columns cols;
    columns_of(n, rq, &cols);
    int64_t wide[MR][MAX_QUADS];
    for (size_t i = 0; i < m; i += MR) {
        const size_t mr = MLCC_MIN(MR, m - i);
        for (size_t r = 0; r < mr; ++r) widen_row(a + (i + r) * lda, k, a_flip, wide[r]);
        if (mr < MR) memcpy(wide[1], wide[0], quads * sizeof wide[0][0]);  /* a lone last row: its copy is discarded */
        panels(mr, wide, quads, n, packed, panel, c, ldc, i, rq, &cols);
    }
}

#endif
