/* Every qs8-gemm variant this build has against mlcc_qs8_gemm__reference at tile edges: m, n and k one
 * below, at and past the tiles (4 x 2, 4 x 4, 16 bytes of k), both activation signednesses, row-major and
 * transposed outputs, shifts 10-40 and 62 (a zero multiplier), extreme bytes (the products a saturating kernel would get wrong) and random ones, output
 * zero points at both ends of their range and between.
 * Prints "D of N cases differ" (bytes compared exactly). */
#include <stdio.h>
#include <string.h>

#include "mlcc/kernels/qs8-gemm.h"

static uint32_t state = 12345u;
static uint32_t next(void) { state = state * 1664525u + 1013904223u; return state >> 8; }

/* The fills: 0 random bytes; 1 every multiplied value -128 (activation a ^ a_flip and weight): the largest
 * products, 2^14, whose pair sums (2^15) saturate or wrap a 16-bit lane; 2 activations 127 against weights
 * -128: the most negative products; 3 each value -128 or 127 at random. */
#define FILLS 4

static uint8_t activation(int fill, uint8_t flip) {  /* the stored byte whose a ^ flip the fill wants */
    const int8_t value = fill == 0 ? (int8_t)next() : fill == 1 ? -128 : fill == 2 ? 127 : (next() & 1u) ? 127 : -128;
    return (uint8_t)((uint8_t)value ^ flip);
}

static int8_t weight(int fill) {
    return fill == 0 ? (int8_t)next() : fill == 1 || fill == 2 ? -128 : (next() & 1u) ? 127 : -128;
}

#define MAX_M 13
#define MAX_N 7
#define MAX_K 100

int main(void) {
    static const size_t ms[] = {1, 3, 4, 5, 8, 9, 13}, ns[] = {1, 2, 3, 4, 5, 7}, ks[] = {1, 15, 16, 17, 32, 33, 100};
    struct { const char *name; mlcc_qs8_gemm_fn fn; } variants[] = {
#if defined(__AVX2__)
        {"avx2", mlcc_qs8_gemm__avx2},
#endif
#if defined(__wasm_simd128__)
        {"wasmsimd", mlcc_qs8_gemm__wasmsimd},
#endif
#if defined(__wasm_simd128__) && defined(__wasm_relaxed_simd__)
        {"wasmrelaxed", mlcc_qs8_gemm__wasmrelaxed},
#endif
#if defined(__ARM_NEON) && defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__)
        {"neondot", mlcc_qs8_gemm__neondot},
#endif
#if defined(__ARM_NEON)
        {"neon", mlcc_qs8_gemm__neon},
#endif
#if defined(__riscv_vector)
        {"rvv", mlcc_qs8_gemm__rvv},
#endif
#if defined(__ARM_FEATURE_MVE)
        {"mve", mlcc_qs8_gemm__mve},
#endif
#if defined(__ARM_FEATURE_DSP) && defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
        {"dsp", mlcc_qs8_gemm__dsp},
#endif
        {"reference", mlcc_qs8_gemm__reference},
    };
    static uint8_t a[MAX_M * MAX_K], want[MAX_M * MAX_N], got[MAX_M * MAX_N];
    static int8_t w[9 * (MAX_K + 16)];
    int32_t bias[9], mult[9], shift[9];
    unsigned cases = 0, differ = 0;
    for (size_t v = 0; v + 1 < sizeof variants / sizeof variants[0]; ++v) {
        for (int fill = 0; fill < FILLS; ++fill) {
            for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; ++mi) {
                for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ++ni) {
                    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ++ki) {
                        for (int flip = 0; flip < 2; ++flip) {
                            for (int transposed = 0; transposed < 2; ++transposed) {
                                const size_t m = ms[mi], n = ns[ni], k = ks[ki], ldw = (k + 15) & ~(size_t)15;
                                for (size_t i = 0; i < m * k; ++i) a[i] = activation(fill, flip ? 0x80 : 0);
                                memset(w, 0, sizeof w);
                                for (size_t j = 0; j < n; ++j)
                                    for (size_t p = 0; p < k; ++p) w[j * ldw + p] = weight(fill);
                                for (size_t j = 0; j < n; ++j) {
                                    bias[j] = (int32_t)(next() % 20001u) - 10000;
                                    mult[j] = (int32_t)((1u << 30) + next() % (1u << 30));
                                    shift[j] = 10 + (int32_t)(next() % 31u);
                                    if (next() % 8u == 0) mult[j] = 0, shift[j] = 62;  /* a scale below 2^-31 */
                                }
                                const int32_t lo = flip ? 0 : -128, hi = flip ? 255 : 127, pick = (int32_t)(cases % 3u);
                                const struct mlcc_qs8_requant rq = {bias, mult, shift, pick == 0 ? lo : pick == 1 ? hi : lo + (int32_t)(next() % 256u), lo, hi};
                                const size_t c_rs = transposed ? 1 : n, c_cs = transposed ? m : 1;
                                memset(want, 0xAA, sizeof want);
                                memset(got, 0xAA, sizeof got);
                                mlcc_qs8_gemm__reference(m, n, k, a, k, flip ? 0x80 : 0, w, ldw, want, c_rs, c_cs, &rq);
                                variants[v].fn(m, n, k, a, k, flip ? 0x80 : 0, w, ldw, got, c_rs, c_cs, &rq);
                                ++cases;
                                if (memcmp(want, got, sizeof want)) {
                                    if (differ < 5) printf("%s: m %zu n %zu k %zu flip %d transposed %d fill %d differs\n",
                                                           variants[v].name, m, n, k, flip, transposed, fill);
                                    ++differ;
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    /* the channel-major kernels: n one below, at and past 4 channels, pixels around 16, odd and even k,
     * multipliers below and above 1 (shift 20-40), input rows wider than the pixels */
    static const size_t cn[] = {1, 3, 4, 5, 9}, cp[] = {1, 15, 16, 17, 33, 64}, ck[] = {1, 2, 3, 9, 16, 27, 100};
    struct { const char *name; mlcc_qs8_gemm_nchw_fn fn; } nchw[] = {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__) && defined(__AVX512BW__)
        {"nchw avx512vnni", mlcc_qs8_gemm_nchw__avx512vnni},
#endif
#if defined(__AVX2__)
        {"nchw avx2", mlcc_qs8_gemm_nchw__avx2},
#endif
#if defined(__wasm_simd128__)
        {"nchw wasmsimd", mlcc_qs8_gemm_nchw__wasmsimd},
#endif
#if defined(__ARM_NEON)
        {"nchw neon", mlcc_qs8_gemm_nchw__neon},
#endif
        {"nchw reference", mlcc_qs8_gemm_nchw__reference},
    };
    static uint8_t x[MAX_K * 80], ywant[9 * 64], ygot[9 * 64];
    for (size_t v = 0; v + 1 < sizeof nchw / sizeof nchw[0]; ++v) {
        for (int fill = 0; fill < FILLS; ++fill) {
            for (size_t ni = 0; ni < sizeof cn / sizeof cn[0]; ++ni) {
                for (size_t pi = 0; pi < sizeof cp / sizeof cp[0]; ++pi) {
                    for (size_t ki = 0; ki < sizeof ck / sizeof ck[0]; ++ki) {
                        for (int flip = 0; flip < 2; ++flip) {
                            const size_t n = cn[ni], pixels = cp[pi], k = ck[ki], stride = pixels + 3, ldw = (k + 15) & ~(size_t)15;
                            for (size_t i = 0; i < k * stride; ++i) x[i] = activation(fill, flip ? 0x80 : 0);
                            memset(w, 0, sizeof w);
                            for (size_t j = 0; j < n; ++j)
                                for (size_t p = 0; p < k; ++p) w[j * ldw + p] = weight(fill);
                            for (size_t j = 0; j < n; ++j) {
                                bias[j] = (int32_t)(next() % 20001u) - 10000;
                                mult[j] = (int32_t)((1u << 30) + next() % (1u << 30));
                                shift[j] = 20 + (int32_t)(next() % 21u);
                            }
                            const struct mlcc_qs8_requant rq = {bias, mult, shift, (int32_t)(next() % 50u), flip ? 0 : -128, flip ? 255 : 127};
                            memset(ywant, 0xAA, sizeof ywant);
                            memset(ygot, 0xAA, sizeof ygot);
                            mlcc_qs8_gemm_nchw__reference(n, pixels, k, w, ldw, x, stride, flip ? 0x80 : 0, ywant, 64, &rq);
                            nchw[v].fn(n, pixels, k, w, ldw, x, stride, flip ? 0x80 : 0, ygot, 64, &rq);
                            ++cases;
                            if (memcmp(ywant, ygot, sizeof ywant)) {
                                if (differ < 5) printf("%s: n %zu pixels %zu k %zu flip %d fill %d differs\n", nchw[v].name, n, pixels, k, flip, fill);
                                ++differ;
                            }
                        }
                    }
                }
            }
        }
    }
    printf("%u of %u cases differ\n", differ, cases);
    return differ != 0;
}
