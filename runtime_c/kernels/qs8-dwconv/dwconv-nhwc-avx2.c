/* qs8-dwconv for AVX2 (see qs8-dwconv.h): 16 channels a step, two taps at a time (blocks.h): their bytes
 * sign-extended to 16 bits, interleaved per channel and multiplied by the weights paired alike with vpmaddwd (two
 * exact 16-bit products summed in 32 bits: no saturation, and one multiply-add per two taps where a product per
 * tap and its widening cost three); vpackssdw undoes the pairing's channel order. Requantization is vectorised
 * across channels with each lane's own multiplier and shift (variable 64-bit shifts, the arithmetic shift done
 * as a logical one of the value plus 2^62, as qs8-gemm.h explains). A last block of 4, 8 or 12 channels loads
 * whole dwords under a mask (vpmaskmovd: no read past them) and stores its bytes by 8 and 4; channels past a
 * multiple of 4 go one at a time; more than MAX_TAPS taps and a shift below 31 take the reference's code. */
#if defined(__AVX2__)
#include <immintrin.h>
#include <string.h>

#include "mlcc/kernels/qs8-dwconv.h"

#define BLOCK 16
#define PARTIAL_BLOCKS 1
typedef __m256i vec;

/* requantize(acc, c) for 8 channels before the zero point and clamp, each lane with its own multiplier and
 * shift: the parameters as 64-bit lanes (even and odd channels), made once per block of channels */
struct lanes {
    __m256i mult_even, mult_odd, shift_even, shift_odd, round_even, round_odd, unbias_even, unbias_odd;
};

static inline struct lanes lanes_of(const int32_t *multiplier, const int32_t *shift) {
    const __m256i mult = _mm256_loadu_si256((const __m256i *)multiplier);
    const __m256i shifts = _mm256_loadu_si256((const __m256i *)shift);
    const __m256i one = _mm256_set1_epi64x(1), bias62 = _mm256_set1_epi64x((int64_t)1 << 62);
    const __m256i sixty_two = _mm256_set1_epi64x(62);
    struct lanes l;
    l.mult_even = mult;
    l.mult_odd = _mm256_srli_epi64(mult, 32);
    l.shift_even = _mm256_and_si256(shifts, _mm256_set1_epi64x(0xFFFFFFFF));
    l.shift_odd = _mm256_srli_epi64(shifts, 32);
    l.round_even = _mm256_add_epi64(_mm256_sllv_epi64(one, _mm256_sub_epi64(l.shift_even, one)), bias62);
    l.round_odd = _mm256_add_epi64(_mm256_sllv_epi64(one, _mm256_sub_epi64(l.shift_odd, one)), bias62);
    l.unbias_even = _mm256_sllv_epi64(one, _mm256_sub_epi64(sixty_two, l.shift_even));
    l.unbias_odd = _mm256_sllv_epi64(one, _mm256_sub_epi64(sixty_two, l.shift_odd));
    return l;
}

static inline __m256i requantize(__m256i acc, const struct lanes *l) {
    __m256i even = _mm256_add_epi64(_mm256_mul_epi32(acc, l->mult_even), l->round_even);
    __m256i odd = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(acc, 32), l->mult_odd), l->round_odd);
    even = _mm256_sub_epi64(_mm256_srlv_epi64(even, l->shift_even), l->unbias_even);
    odd = _mm256_sub_epi64(_mm256_srlv_epi64(odd, l->shift_odd), l->unbias_odd);
    return _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
}

struct io {
    __m128i flip, dwords;  /* dwords: a partial block's lanes, whole dwords (count a multiple of 4) */
    __m256i padding, zero_point, low, high;
    size_t count;
    bool signed_out;
};

static inline struct io io_of(uint8_t x_zero, uint8_t a_flip, const struct mlcc_qs8_requant *rq, size_t count) {
    const __m128i index = _mm_setr_epi32(0, 1, 2, 3);
    const struct io io = {_mm_set1_epi8((char)a_flip), _mm_cmpgt_epi32(_mm_set1_epi32((int)(count / 4)), index),
                          _mm256_set1_epi16((int16_t)(int8_t)(x_zero ^ a_flip)), _mm256_set1_epi32(rq->y_zero),
                          _mm256_set1_epi32(rq->y_min), _mm256_set1_epi32(rq->y_max), count, rq->y_min < 0};
    return io;
}

static inline __m128i load_bytes(const void *p, const struct io *io) {
    return io->count == BLOCK ? _mm_loadu_si128((const __m128i *)p) : _mm_maskload_epi32((const int *)p, io->dwords);
}

static inline __m256i load_x(const uint8_t *p, const struct io *io) {
    return _mm256_cvtepi8_epi16(_mm_xor_si128(load_bytes(p, io), io->flip));
}

static inline __m256i load_w(const int8_t *p, const struct io *io) {
    return _mm256_cvtepi8_epi16(load_bytes(p, io));
}

static inline __m256i padding(const struct io *io) { return io->padding; }
static inline __m256i zero(void) { return _mm256_setzero_si256(); }
static inline __m256i load_i32(const int32_t *p) { return _mm256_loadu_si256((const __m256i *)p); }
static inline __m256i pair_lo(__m256i a, __m256i b) { return _mm256_unpacklo_epi16(a, b); }
static inline __m256i pair_hi(__m256i a, __m256i b) { return _mm256_unpackhi_epi16(a, b); }

static inline __m256i pair_products(__m256i acc, __m256i x_pairs, __m256i w_pairs) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(x_pairs, w_pairs));
}

static inline void store(uint8_t *y, __m256i v_lo, __m256i v_hi, const struct io *io) {
    v_lo = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v_lo, io->zero_point), io->low), io->high);
    v_hi = _mm256_min_epi32(_mm256_max_epi32(_mm256_add_epi32(v_hi, io->zero_point), io->low), io->high);
    /* per 128-bit lane, channels (0-3, 4-7) and (8-11, 12-15): the words in order */
    const __m256i words = _mm256_packs_epi32(v_lo, v_hi);
    const __m128i w0 = _mm256_castsi256_si128(words), w1 = _mm256_extracti128_si256(words, 1);
    const __m128i bytes = io->signed_out ? _mm_packs_epi16(w0, w1) : _mm_packus_epi16(w0, w1);
    if (io->count == BLOCK) {
        _mm_storeu_si128((__m128i *)y, bytes);
        return;
    }
    /* by 8 and 4 bytes: vpmaskmovd's store is microcoded on AMD */
    size_t done = 0;
    if (io->count >= 8) {
        _mm_storel_epi64((__m128i *)y, bytes);
        done = 8;
    }
    if (io->count % 8) {
        const int32_t last = _mm_cvtsi128_si32(done ? _mm_srli_si128(bytes, 8) : bytes);
        memcpy(y + done, &last, 4);
    }
}

#include "blocks.h"

void mlcc_qs8_dwconv_nhwc__avx2(const struct mlcc_qs8_conv_geometry *g, const uint8_t *x, uint8_t x_zero,
                                uint8_t a_flip, const int8_t *w, uint8_t *MLCC_RESTRICT y,
                                const struct mlcc_qs8_requant *rq) {
    if (falls_back(g, rq)) {
        mlcc_qs8_dwconv_nhwc__reference(g, x, x_zero, a_flip, w, y, rq);
        return;
    }
    const size_t channels = g->channels, taps = g->kernel_h * g->kernel_w, full = channels & ~(size_t)3;
    if (is_window3x3(g)) {
        dwconv3x3(g, x, x_zero, a_flip, w, y, rq, full);
    } else {
        dwconv_taps(g, x, x_zero, a_flip, w, y, rq, full);
    }
    if (full == channels) return;
    const int32_t zero = (int32_t)(int8_t)(x_zero ^ a_flip);
    const uint8_t *source[MAX_TAPS];
    for (size_t oh = 0; oh < g->out_h; ++oh) {  /* the channels past a multiple of 4 */
        for (size_t ow = 0; ow < g->out_w; ++ow) {
            for (size_t kh = 0, t = 0; kh < g->kernel_h; ++kh) {
                for (size_t kw = 0; kw < g->kernel_w; ++kw, ++t) source[t] = mlcc_qs8_dwconv_source(g, x, oh, ow, kh, kw);
            }
            uint8_t *yp = y + (oh * g->out_w + ow) * channels;
            for (size_t c = full; c < channels; ++c) {
                int32_t acc = rq->bias[c];
                for (size_t t = 0; t < taps; ++t) {
                    acc += (int32_t)w[t * channels + c] * (source[t] ? (int32_t)(int8_t)(source[t][c] ^ a_flip) : zero);
                }
                yp[c] = mlcc_qs8_requantize(acc, rq->multiplier[c], rq->shift[c], rq);
            }
        }
    }
}
#endif
