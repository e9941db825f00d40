/* The channels-last qs8 kernels against their oracles, bytes compared exactly:
 * - every mlcc_qs8_packed_gemm form this build has against mlcc_qs8_gemm__reference on the same weights
 *   unpacked (so the reference's reading of the panels is checked too): m around the row tiles (2, 8), n
 *   around the 16-column panel, k around the 4-byte quads and two deep ones, both activation signednesses,
 *   extreme bytes (the products a saturating kernel gets wrong), shifts 1-40 (below 31: real multipliers of
 *   1/2 and more);
 * - every mlcc_qs8_packed_igemm form against the same reference on its rows gathered: taps reading runs of a
 *   shared pool in no order, channels multiples of 4;
 * - every mlcc_qs8_dwconv_nhwc form against its reference: channels around 16 and 64, 3x3 and 1x5 kernels, strides,
 *   padding and dilation;
 * - mlcc_qs8_conv_nhwc (packed reference) and, with 8 or 3 channels (taps of 4 bytes, the last meeting a zero
 *   weight), mlcc_qs8_conv_nhwc_indirect (each igemm form) against mlcc_qs8_conv_nchw (qs8-gemm reference)
 *   on transposed data; mlcc_qs8_conv_nhwc_rows (each igemm form) the same with 1 or 3 channels.
 * Prints "D of N cases differ". */
#include <stdio.h>
#include <string.h>

#include "mlcc/kernels/qs8-dwconv.h"
#include "qs8_packed_edges.h"

#define MAX_DW_N 72  /* AVX-512 VNNI's 3x3 loops: a block of 64 channels and one of 8 */

static uint8_t fill_byte(int fill, size_t i) { return fill == 0 ? (uint8_t)next() : fill == 1 ? 255u : (uint8_t)(i % 2 ? 0 : 127); }

static void requant(size_t n, int32_t *bias, int32_t *mult, int32_t *shift, int low_shift) {
    for (size_t j = 0; j < n; ++j) {
        bias[j] = (int32_t)(next() % 20001u) - 10000;
        mult[j] = (int32_t)((1u << 30) + next() % (1u << 30));
        shift[j] = low_shift ? 1 + (int32_t)(next() % 40u) : 31 + (int32_t)(next() % 10u);
    }
}

int main(void) {
    unsigned cases = 0, differ = 0;
    int32_t bias[MAX_N], mult[MAX_N], shift[MAX_N];
    static _Alignas(64) int8_t packed[PANELS * 64 * (1 + (MAX_K * 9 + 3) / 4)];
    static int8_t w[MAX_N * MAX_K * 9];
    static uint8_t a[MAX_M * (MAX_K + 3)], want[MAX_M * (MAX_N + 1)], got[MAX_M * (MAX_N + 1)];  /* lda k + 3, ldc n + 1 */
    struct { const char *name; mlcc_qs8_packed_gemm_fn fn; bool pairs; } gemms[] = {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__) && defined(__AVX512BW__)
        {"packed avx512vnni", mlcc_qs8_packed_gemm__avx512vnni, false},
#endif
#if defined(__AVX2__)
        {"packed avx2", mlcc_qs8_packed_gemm__avx2, false},
#endif
#if defined(__wasm_simd128__) && defined(__wasm_relaxed_simd__)
        {"packed wasmrelaxed", mlcc_qs8_packed_gemm__wasmrelaxed, false},
#endif
#if defined(__wasm_simd128__)
        {"packed wasmsimd", mlcc_qs8_packed_gemm__wasmsimd, true},
#endif
#if defined(__ARM_NEON) && defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__)
        {"packed neondot", mlcc_qs8_packed_gemm__neondot, false},
#endif
#if defined(__ARM_NEON)
        {"packed neon", mlcc_qs8_packed_gemm__neon, false},
#endif
        {"packed reference", mlcc_qs8_packed_gemm__reference, false},
    };
    static const size_t ms[] = {1, 2, 3, 8, 9, 19}, ns[] = {1, 15, 16, 17, 40}, ks[] = {1, 3, 4, 5, 16, 27, 80};
    for (size_t v = 0; v < sizeof gemms / sizeof gemms[0]; ++v) {
        for (int fill = 0; fill < 3; ++fill) {
            for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; ++mi) {
                for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ++ni) {
                    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ++ki) {
                        for (int flip = 0; flip < 2; ++flip) {
                            const size_t m = ms[mi], n = ns[ni], k = ks[ki], lda = k + 3;
                            for (size_t i = 0; i < m * lda; ++i) a[i] = fill_byte(fill, i);
                            for (size_t i = 0; i < n * k; ++i) w[i] = fill_weight(fill);
                            pack_as(gemms[v].pairs, n, k, w, k, packed);
                            requant(n, bias, mult, shift, fill == 0 && mi % 2);
                            const struct mlcc_qs8_requant rq = {bias, mult, shift, (int32_t)(next() % 50u), flip ? 0 : -128, flip ? 255 : 127};
                            memset(want, 0xAA, sizeof want);
                            memset(got, 0xAA, sizeof got);
                            mlcc_qs8_gemm__reference(m, n, k, a, lda, flip ? 0x80 : 0, w, k, want, n + 1, 1, &rq);
                            gemms[v].fn(m, n, k, a, lda, flip ? 0x80 : 0, packed, got, n + 1, &rq);
                            ++cases;
                            if (memcmp(want, got, sizeof want)) {
                                if (differ < 5) printf("%s: m %zu n %zu k %zu flip %d fill %d differs\n", gemms[v].name, m, n, k, flip, fill);
                                ++differ;
                            }
                        }
                    }
                }
            }
        }
    }

    /* deep products: rows whose 16-bit copies fit the SIMD128 form's buffer two at a time (k 8192) and rows
     * too deep for it (k 8195, widened quad by quad) */
    static const size_t deep_ks[] = {8192, 8195};
    static uint8_t deep_a[5 * 8195];
    static int8_t deep_w[17 * 8195];
    static _Alignas(64) int8_t deep_packed[2 * 64 * (1 + (8195 + 3) / 4)];
    for (size_t v = 0; v < sizeof gemms / sizeof gemms[0]; ++v) {
        for (size_t ki = 0; ki < sizeof deep_ks / sizeof deep_ks[0]; ++ki) {
            const size_t m = 5, n = 17, k = deep_ks[ki];
            for (size_t i = 0; i < m * k; ++i) deep_a[i] = fill_byte(0, i);
            for (size_t i = 0; i < n * k; ++i) deep_w[i] = fill_weight(0);
            pack_as(gemms[v].pairs, n, k, deep_w, k, deep_packed);
            requant(n, bias, mult, shift, 1);
            const struct mlcc_qs8_requant rq = {bias, mult, shift, 7, 0, 255};
            memset(want, 0xAA, sizeof want);
            memset(got, 0xAA, sizeof got);
            mlcc_qs8_gemm__reference(m, n, k, deep_a, k, 0x80, deep_w, k, want, n, 1, &rq);
            gemms[v].fn(m, n, k, deep_a, k, 0x80, deep_packed, got, n, &rq);
            ++cases;
            if (memcmp(want, got, sizeof want)) {
                if (differ < 5) printf("%s: deep k %zu differs\n", gemms[v].name, k);
                ++differ;
            }
        }
    }

    struct { const char *name; mlcc_qs8_packed_igemm_fn fn; } igemms[] = {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__) && defined(__AVX512BW__)
        {"igemm avx512vnni", mlcc_qs8_packed_igemm__avx512vnni},
#endif
        {"igemm reference", mlcc_qs8_packed_igemm__reference},
    };
    static const size_t igemm_ns[] = {1, 16, 17, 40}, runs[][2] = {{1, 4}, {9, 4}, {3, 8}, {2, 20}};  /* taps, channels */
    static uint8_t pool[31 * 20];
    static const uint8_t *pointers[MAX_M * 9];
    for (size_t v = 0; v < sizeof igemms / sizeof igemms[0]; ++v) {
        for (int fill = 0; fill < 3; ++fill) {
            for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; ++mi) {
                for (size_t ni = 0; ni < sizeof igemm_ns / sizeof igemm_ns[0]; ++ni) {
                    for (size_t ri = 0; ri < sizeof runs / sizeof runs[0]; ++ri) {
                        for (int flip = 0; flip < 2; ++flip) {
                            const size_t m = ms[mi], n = igemm_ns[ni], taps = runs[ri][0], channels = runs[ri][1];
                            const size_t k = taps * channels;
                            for (size_t i = 0; i < sizeof pool; ++i) pool[i] = fill_byte(fill, i);
                            for (size_t i = 0; i < m; ++i) {
                                for (size_t t = 0; t < taps; ++t) {
                                    pointers[i * taps + t] = pool + next() % 31 * 20;
                                    memcpy(a + i * k + t * channels, pointers[i * taps + t], channels);
                                }
                            }
                            for (size_t i = 0; i < n * k; ++i) w[i] = fill_weight(fill);
                            pack(n, k, w, k, packed);
                            requant(n, bias, mult, shift, fill == 0 && mi % 2);
                            const struct mlcc_qs8_requant rq = {bias, mult, shift, (int32_t)(next() % 50u), flip ? 0 : -128, flip ? 255 : 127};
                            memset(want, 0xAA, sizeof want);
                            memset(got, 0xAA, sizeof got);
                            mlcc_qs8_gemm__reference(m, n, k, a, k, flip ? 0x80 : 0, w, k, want, n + 1, 1, &rq);
                            igemms[v].fn(m, n, taps, channels, pointers, flip ? 0x80 : 0, packed, got, n + 1, &rq);
                            ++cases;
                            if (memcmp(want, got, sizeof want)) {
                                if (differ < 5) printf("%s: m %zu n %zu taps %zu channels %zu flip %d fill %d differs\n", igemms[v].name, m, n, taps, channels, flip, fill);
                                ++differ;
                            }
                        }
                    }
                }
            }
        }
    }

    struct { const char *name; mlcc_qs8_dwconv_nhwc_fn fn; } dws[] = {
#if defined(__AVX512F__) && defined(__AVX512BW__)
        {"dwconv avx512", mlcc_qs8_dwconv_nhwc__avx512},
#endif
#if defined(__AVX2__)
        {"dwconv avx2", mlcc_qs8_dwconv_nhwc__avx2},
#endif
#if defined(__ARM_NEON)
        {"dwconv neon", mlcc_qs8_dwconv_nhwc__neon},
#endif
#if defined(__wasm_simd128__)
        {"dwconv wasmsimd", mlcc_qs8_dwconv_nhwc__wasmsimd},
#endif
        {"dwconv reference", mlcc_qs8_dwconv_nhwc__reference},
    };
    /* kernel h w, stride, dilation, pad: 3x3 same, 3x3 stride 2, 1x5 no padding, 3x3 dilated, 5x5 pad 1 */
    static const size_t shapes[][6] = {{3, 3, 1, 1, 1, 1}, {3, 3, 2, 1, 1, 1}, {1, 5, 1, 1, 0, 0}, {3, 3, 1, 2, 2, 2}, {5, 5, 2, 1, 1, 1}};
    static const size_t dw_channels[] = {1, 4, 8, 16, 17, 40, MAX_DW_N};
    static int32_t dw_bias[MAX_DW_N], dw_mult[MAX_DW_N], dw_shift[MAX_DW_N];
    static int8_t dw_w[MAX_DW_N * 25];
    static uint8_t x[7 * 9 * MAX_DW_N], ywant[7 * 9 * MAX_DW_N], ygot[7 * 9 * MAX_DW_N];
    for (size_t v = 0; v + 1 < sizeof dws / sizeof dws[0]; ++v) {
        for (int fill = 0; fill < 3; ++fill) {
            for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; ++s) {
                for (size_t ci = 0; ci < sizeof dw_channels / sizeof dw_channels[0]; ++ci) {
                    for (int flip = 0; flip < 2; ++flip) {
                        const size_t kh = shapes[s][0], kw = shapes[s][1], st = shapes[s][2], dil = shapes[s][3];
                        const size_t pt = shapes[s][4], pl = shapes[s][5], in_h = 7, in_w = 9, c = dw_channels[ci];
                        const size_t out_h = (in_h + 2 * pt - dil * (kh - 1) - 1) / st + 1, out_w = (in_w + 2 * pl - dil * (kw - 1) - 1) / st + 1;
                        const struct mlcc_qs8_conv_geometry g = {c, in_h, in_w, out_h, out_w, kh, kw, st, st, dil, dil, pt, pl, c, 1};
                        for (size_t i = 0; i < in_h * in_w * c; ++i) x[i] = fill_byte(fill, i);
                        for (size_t i = 0; i < kh * kw * c; ++i) dw_w[i] = fill_weight(fill);
                        requant(c, dw_bias, dw_mult, dw_shift, fill == 0 && ci % 2);
                        if (fill == 1) {  /* shifts 32 .. 52 (the whole range of AVX-512 VNNI's 3x3 loops) and a zero multiplier */
                            for (size_t j = 0; j < c; ++j) dw_shift[j] = 32 + (int32_t)(next() % 21u);
                            dw_mult[c / 2] = 0;
                        }
                        const int32_t y_min = fill == 1 ? (flip ? 10 : -100) : flip ? 0 : -128;  /* fill 1: a fused clamp */
                        const int32_t y_max = fill == 1 ? (flip ? 200 : 90) : flip ? 255 : 127;
                        const struct mlcc_qs8_requant rq = {dw_bias, dw_mult, dw_shift, (int32_t)(next() % 50u), y_min, y_max};
                        const uint8_t x_zero = (uint8_t)next();
                        memset(ywant, 0xAA, sizeof ywant);
                        memset(ygot, 0xAA, sizeof ygot);
                        mlcc_qs8_dwconv_nhwc__reference(&g, x, x_zero, flip ? 0x80 : 0, dw_w, ywant, &rq);
                        dws[v].fn(&g, x, x_zero, flip ? 0x80 : 0, dw_w, ygot, &rq);
                        ++cases;
                        if (memcmp(ywant, ygot, sizeof ywant)) {
                            if (differ < 5) printf("%s: shape %zu channels %zu flip %d fill %d differs\n", dws[v].name, s, c, flip, fill);
                            ++differ;
                        }
                    }
                }
            }
        }
    }

    /* the NHWC driver against qs8-gemm's NCHW one: 3x3 same, 3x3 stride 2, 1x1 in place, 1x1 stride 2 */
    static const size_t convs[][4] = {{3, 1, 1}, {3, 2, 1}, {1, 1, 0}, {1, 2, 0}, {2, 2, 1}, {3, 1, 0}};
    static uint8_t xc[7 * 9 * 8], xl[7 * 9 * 8], yc[7 * 9 * MAX_N], yl[7 * 9 * MAX_N];
    static _Alignas(8) uint8_t patches[64 * 9 * 8 + 8];
    static int8_t wc[MAX_N * 80], wl[MAX_N * 72], wr[MAX_N * 72];
    /* form 0: the gathering driver (5 channels); form 1 + v: the indirect one through igemms[v] (8 or 3) */
    for (size_t form = 0; form <= sizeof igemms / sizeof igemms[0]; ++form)
    for (size_t s = 0; s < sizeof convs / sizeof convs[0]; ++s) {
        for (int flip = 0; flip < 2; ++flip) {
            const size_t kk = convs[s][0], st = convs[s][1], pad = convs[s][2], c = form ? (s % 2 ? 3 : 8) : 5, n = 17, in_h = 7, in_w = 9;
            const size_t out_h = (in_h + 2 * pad - kk) / st + 1, out_w = (in_w + 2 * pad - kk) / st + 1, k = c * kk * kk;
            const size_t ldw = (k + 15) & ~(size_t)15;
            const struct mlcc_qs8_conv_geometry g = {c, in_h, in_w, out_h, out_w, kk, kk, st, st, 1, 1, pad, pad, 1, n};
            for (size_t i = 0; i < in_h * in_w * c; ++i) xc[i] = (uint8_t)next();
            for (size_t ch = 0; ch < c; ++ch)
                for (size_t p = 0; p < in_h * in_w; ++p) xl[p * c + ch] = xc[ch * in_h * in_w + p];
            memset(wc, 0, sizeof wc);
            for (size_t j = 0; j < n; ++j)
                for (size_t ch = 0; ch < c; ++ch)
                    for (size_t t = 0; t < kk * kk; ++t) wc[j * ldw + ch * kk * kk + t] = wl[j * k + t * c + ch] = (int8_t)next();
            if (form == 0) {
                pack_as(gemms[0].pairs, n, k, wl, k, packed);
            } else {  /* the indirect driver's layout: each tap's channels padded to a run of 4 with zeros */
                const size_t run = mlcc_qs8_conv_nhwc_indirect_run(c);
                memset(wr, 0, sizeof wr);
                for (size_t j = 0; j < n; ++j)
                    for (size_t t = 0; t < kk * kk; ++t) memcpy(wr + j * kk * kk * run + t * run, wl + j * k + t * c, c);
                pack(n, kk * kk * run, wr, kk * kk * run, packed);
            }
            requant(n, bias, mult, shift, 0);
            const struct mlcc_qs8_requant rq = {bias, mult, shift, 3, flip ? 0 : -128, flip ? 255 : 127};
            const uint8_t x_zero = (uint8_t)next();
            mlcc_qs8_conv_nchw(&g, xc, x_zero, flip ? 0x80 : 0, wc, ldw, yc, &rq, patches, 8, mlcc_qs8_gemm__reference);
            if (form == 0) {
                mlcc_qs8_conv_nhwc(&g, xl, x_zero, flip ? 0x80 : 0, packed, yl, &rq, patches, 8, gemms[0].fn);
            } else {
                mlcc_qs8_conv_nhwc_indirect(&g, xl, x_zero, flip ? 0x80 : 0, packed, yl, &rq, patches, 7, igemms[form - 1].fn);
            }
            ++cases;
            for (size_t j = 0; j < n; ++j) {
                for (size_t p = 0; p < out_h * out_w; ++p) {
                    if (yc[j * out_h * out_w + p] != yl[p * n + j]) {
                        if (differ < 5) printf("conv_nhwc form %zu: shape %zu flip %d channel %zu pixel %zu differs\n", form, s, flip, j, p);
                        ++differ;
                        j = n;
                        break;
                    }
                }
            }
        }
    }

    /* mlcc_qs8_conv_nhwc_rows (each igemm form) against mlcc_qs8_conv_nchw: 1 or 3 channels, each kernel row one
     * run; kernel h w, stride h w, pad top left, dilation h: an image's 3x3 stride 2, 3x3 same, a 5x4 stride 2
     * (DS-CNN's 10x4 stem, smaller), rows dilated (4 and 3 of them), a 2x5 without padding on top */
    static const size_t row_shapes[][7] = {{3, 3, 2, 2, 1, 1, 1}, {3, 3, 1, 1, 1, 1, 1}, {5, 4, 2, 2, 2, 1, 1},
                                           {4, 3, 1, 2, 1, 1, 2}, {3, 3, 2, 1, 1, 1, 2}, {2, 5, 1, 1, 0, 2, 1}};
    for (size_t v = 0; v < sizeof igemms / sizeof igemms[0]; ++v)
    for (size_t s = 0; s < sizeof row_shapes / sizeof row_shapes[0]; ++s) {
        for (size_t ci = 0; ci < 2; ++ci) {
            for (int flip = 0; flip < 2; ++flip) {
                const size_t kh = row_shapes[s][0], kw = row_shapes[s][1], sh = row_shapes[s][2], sw = row_shapes[s][3];
                const size_t pt = row_shapes[s][4], pl = row_shapes[s][5], dil = row_shapes[s][6];
                const size_t c = ci ? 3 : 1, n = flip ? 8 : 17, in_h = 7, in_w = 9, k = c * kh * kw;
                const size_t out_h = (in_h + 2 * pt - dil * (kh - 1) - 1) / sh + 1, out_w = (in_w + 2 * pl - kw) / sw + 1;
                const size_t ldw = (k + 15) & ~(size_t)15, run = mlcc_qs8_conv_nhwc_rows_run(kw, c);
                const struct mlcc_qs8_conv_geometry g = {c, in_h, in_w, out_h, out_w, kh, kw, sh, sw, dil, 1, pt, pl, 1, n};
                for (size_t i = 0; i < in_h * in_w * c; ++i) xc[i] = (uint8_t)next();
                for (size_t ch = 0; ch < c; ++ch)
                    for (size_t p = 0; p < in_h * in_w; ++p) xl[p * c + ch] = xc[ch * in_h * in_w + p];
                memset(wc, 0, sizeof wc);
                memset(wr, 0, sizeof wr);  /* each kernel row's kw * c bytes, then zero to its run */
                for (size_t j = 0; j < n; ++j)
                    for (size_t ch = 0; ch < c; ++ch)
                        for (size_t t = 0; t < kh * kw; ++t)
                            wc[j * ldw + ch * kh * kw + t] = wr[j * kh * run + t / kw * run + t % kw * c + ch] = (int8_t)next();
                pack(n, kh * run, wr, kh * run, packed);
                requant(n, bias, mult, shift, 0);
                const struct mlcc_qs8_requant rq = {bias, mult, shift, 3, flip ? 0 : -128, flip ? 255 : 127};
                const uint8_t x_zero = (uint8_t)next();
                const size_t rows = 7;  /* blocks of 7 output pixels: tiles of 8 rows and single rows */
                if (mlcc_qs8_conv_nhwc_rows_bytes(&g, rows) > sizeof patches) return 1;
                mlcc_qs8_conv_nchw(&g, xc, x_zero, flip ? 0x80 : 0, wc, ldw, yc, &rq, patches, 8, mlcc_qs8_gemm__reference);
                mlcc_qs8_conv_nhwc_rows(&g, xl, x_zero, flip ? 0x80 : 0, packed, yl, &rq, patches, s % 2 ? rows : 64, igemms[v].fn);
                ++cases;
                for (size_t j = 0; j < n; ++j) {
                    for (size_t p = 0; p < out_h * out_w; ++p) {
                        if (yc[j * out_h * out_w + p] != yl[p * n + j]) {
                            if (differ < 5) printf("conv_nhwc_rows %s: shape %zu channels %zu flip %d channel %zu pixel %zu differs\n", igemms[v].name, s, c, flip, j, p);
                            ++differ;
                            j = n;
                            break;
                        }
                    }
                }
            }
        }
    }
    printf("%u of %u cases differ\n", differ, cases);
    return 0;
}
