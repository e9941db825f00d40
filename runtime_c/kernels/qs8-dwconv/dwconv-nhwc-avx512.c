/* qs8-dwconv for AVX-512 (F, BW; see qs8-dwconv.h): 32 channels a step, two taps at a time (blocks.h): their
 * bytes sign-extended to 16 bits, interleaved per channel and multiplied by the weights paired alike with
 * vpmaddwd, or vpdpwssd where the target has AVX-512 VNNI (two exact 16-bit products summed in 32 bits: no
 * saturation); the stores undo the pairing's channel order. Requantization: each lane's multiplier and shift,
 * 64-bit products, arithmetic shifts. Channels past a multiple of 32 are masked loads and stores. More than
 * MAX_TAPS taps and a shift below 31 (a real multiplier of 1 or more) take the reference. */
#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>

#include "mlcc/kernels/qs8-dwconv.h"

#define BLOCK 32
#define PARTIAL_BLOCKS 1
typedef __m512i vec;

struct lanes {
    __m512i mult_even, mult_odd, shift_even, shift_odd, round_even, round_odd;
};

static inline struct lanes lanes_of(const int32_t *multiplier, const int32_t *shift) {
    const __m512i mult = _mm512_loadu_si512(multiplier);
    const __m512i shifts = _mm512_loadu_si512(shift);
    const __m512i one = _mm512_set1_epi64(1);
    struct lanes l;
    l.mult_even = mult;
    l.mult_odd = _mm512_srli_epi64(mult, 32);
    l.shift_even = _mm512_and_si512(shifts, _mm512_set1_epi64(0xFFFFFFFF));
    l.shift_odd = _mm512_srli_epi64(shifts, 32);
    l.round_even = _mm512_sllv_epi64(one, _mm512_sub_epi64(l.shift_even, one));
    l.round_odd = _mm512_sllv_epi64(one, _mm512_sub_epi64(l.shift_odd, one));
    return l;
}

static inline __m512i requantize(__m512i acc, const struct lanes *l) {
    const __m512i even = _mm512_srav_epi64(_mm512_add_epi64(_mm512_mul_epi32(acc, l->mult_even), l->round_even), l->shift_even);
    const __m512i odd = _mm512_srav_epi64(
        _mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(acc, 32), l->mult_odd), l->round_odd), l->shift_odd);
    return _mm512_mask_blend_epi32((__mmask16)0xAAAA, even, _mm512_slli_epi64(odd, 32));
}

struct io {
    __mmask32 valid;
    __m256i flip;
    __m512i padding, zero_point, low, high;
};

static inline struct io io_of(uint8_t x_zero, uint8_t a_flip, const struct mlcc_qs8_requant *rq, size_t count) {
    const struct io io = {(__mmask32)(count == 32 ? 0xFFFFFFFFu : (1u << count) - 1u), _mm256_set1_epi8((char)a_flip),
                          _mm512_set1_epi16((int16_t)(int8_t)(x_zero ^ a_flip)), _mm512_set1_epi32(rq->y_zero),
                          _mm512_set1_epi32(rq->y_min), _mm512_set1_epi32(rq->y_max)};
    return io;
}

static inline __m512i load_x(const uint8_t *p, const struct io *io) {
    return _mm512_cvtepi8_epi16(_mm256_xor_si256(_mm256_maskz_loadu_epi8(io->valid, p), io->flip));
}

static inline __m512i load_w(const int8_t *p, const struct io *io) {
    return _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(io->valid, p));
}

static inline __m512i padding(const struct io *io) { return io->padding; }
static inline __m512i zero(void) { return _mm512_setzero_si512(); }
static inline __m512i load_i32(const int32_t *p) { return _mm512_loadu_si512(p); }
static inline __m512i pair_lo(__m512i a, __m512i b) { return _mm512_unpacklo_epi16(a, b); }
static inline __m512i pair_hi(__m512i a, __m512i b) { return _mm512_unpackhi_epi16(a, b); }

static inline __m512i pair_products(__m512i acc, __m512i x_pairs, __m512i w_pairs) {
#if defined(__AVX512VNNI__)
    return _mm512_dpwssd_epi32(acc, x_pairs, w_pairs);
#else
    return _mm512_add_epi32(acc, _mm512_madd_epi16(x_pairs, w_pairs));
#endif
}

static inline void store(uint8_t *y, __m512i v_lo, __m512i v_hi, const struct io *io) {
    v_lo = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v_lo, io->zero_point), io->low), io->high);
    v_hi = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v_hi, io->zero_point), io->low), io->high);
    /* bytes of channels (0-3, 8-11, 16-19, 24-27) and (4-7, 12-15, ...) back in order */
    const __m128i b_lo = _mm512_cvtepi32_epi8(v_lo), b_hi = _mm512_cvtepi32_epi8(v_hi);
    _mm256_mask_storeu_epi8(y, io->valid, _mm256_set_m128i(_mm_unpackhi_epi32(b_lo, b_hi), _mm_unpacklo_epi32(b_lo, b_hi)));
}

#include "blocks.h"

void mlcc_qs8_dwconv_nhwc__avx512(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                  uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                  const struct mlcc_qs8_requant *rq) {
    if (falls_back(g, rq)) {
        mlcc_qs8_dwconv_nhwc__reference(g, x, x_zero, a_flip, w, y, rq);
    } else if (is_window3x3(g)) {
        dwconv3x3(g, x, x_zero, a_flip, w, y, rq, g->channels);
    } else {
        dwconv_taps(g, x, x_zero, a_flip, w, y, rq, g->channels);
    }
}
#endif
