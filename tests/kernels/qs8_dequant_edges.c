/* qs8-packed's dequantizing forms (mlcc_qs8_packed_gemm_f32 / _s32) against a direct computation from the
 * unpacked weights, values compared exactly (floats bit for bit): the reference, and every vector form this
 * build has. m around the row tiles (2, 4, 8), n around the 16-column panel, k around the 4-byte quads; uint8
 * and int8 rows, zero points at both ends, extreme bytes (what a saturating pair sum gets wrong); the float
 * epilogue per tensor, per column, without scale, with and without the offset. Prints "D of N cases differ". */
#include <stdio.h>
#include <string.h>

#include "qs8_packed_edges.h"

struct form {
    const char *name;
    void (*f32)(size_t, size_t, size_t, const uint8_t *, size_t, uint8_t, const int8_t *, float *, size_t,
                const struct mlcc_qs8_dequant *);
    void (*s32)(size_t, size_t, size_t, const uint8_t *, size_t, uint8_t, const int8_t *, int32_t *, size_t,
                const struct mlcc_qs8_dequant *);
};

int main(void) {
    state = 2024u;  /* this harness's own stream */
    static const struct form forms[] = {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__) && defined(__AVX512BW__)
        {"avx512vnni", mlcc_qs8_packed_gemm_f32__avx512vnni, mlcc_qs8_packed_gemm_s32__avx512vnni},
#endif
#if defined(__AVX2__)
        {"avx2", mlcc_qs8_packed_gemm_f32__avx2, mlcc_qs8_packed_gemm_s32__avx2},
#endif
#if defined(__ARM_NEON) && defined(__ARM_FEATURE_DOTPROD) && defined(__aarch64__)
        {"neondot", mlcc_qs8_packed_gemm_f32__neondot, mlcc_qs8_packed_gemm_s32__neondot},
#endif
#if defined(__ARM_NEON)
        {"neon", mlcc_qs8_packed_gemm_f32__neon, mlcc_qs8_packed_gemm_s32__neon},
#endif
#if defined(__wasm_simd128__)
        {"wasmsimd", mlcc_qs8_packed_gemm_f32__wasmsimd, mlcc_qs8_packed_gemm_s32__wasmsimd},
#endif
        {"reference", mlcc_qs8_packed_gemm_f32__reference, mlcc_qs8_packed_gemm_s32__reference},
    };
    static _Alignas(64) int8_t packed[PANELS * 64 * (1 + (MAX_K + 3) / 4)];
    static int8_t w[MAX_N * MAX_K];
    static uint8_t a[MAX_M * (MAX_K + 3)];
    static int32_t acc[MAX_M * MAX_N], got32[MAX_M * (MAX_N + 1)], want32[MAX_M * (MAX_N + 1)];
    static float got[MAX_M * (MAX_N + 1)], want[MAX_M * (MAX_N + 1)], scale[MAX_N], offset[MAX_N];
    static int16_t work[128 * ((MAX_K + 7) / 8)];  /* mlcc_qs8_packed_dequant_work_bytes(MAX_K) */
    static const size_t ms[] = {1, 2, 3, 4, 5, 8, 9, 19}, ns[] = {1, 15, 16, 17, 40}, ks[] = {1, 3, 4, 5, 16, 27, 80};
    unsigned cases = 0, differ = 0;
    for (size_t v = 0; v < sizeof forms / sizeof forms[0]; ++v) {
        for (int fill = 0; fill < 3; ++fill) {
            for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; ++mi) {
                for (size_t ni = 0; ni < sizeof ns / sizeof ns[0]; ++ni) {
                    for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ++ki) {
                        for (int uint8_rows = 0; uint8_rows < 2; ++uint8_rows) {
                            const size_t m = ms[mi], n = ns[ni], k = ks[ki], lda = k + 3, ldc = n + 1;
                            const uint8_t a_flip = uint8_rows ? 0x80 : 0;
                            for (size_t i = 0; i < m * lda; ++i) a[i] = fill == 0 ? (uint8_t)next() : fill == 1 ? 255u : (uint8_t)(i % 2 ? 0 : 128);
                            for (size_t i = 0; i < n * k; ++i) w[i] = fill_weight(fill);
                            pack(n, k, w, k, packed);
                            /* zero points at the ends of the range and between */
                            const int32_t lowest = uint8_rows ? 0 : -128, a_zero = fill == 1 ? lowest : fill == 2 ? lowest + 255 : lowest + (int32_t)(next() % 256u);
                            for (size_t i = 0; i < m; ++i) {
                                for (size_t j = 0; j < n; ++j) {
                                    int32_t sum = 0;
                                    for (size_t p = 0; p < k; ++p) {
                                        const int32_t value = uint8_rows ? (int32_t)a[i * lda + p] : (int32_t)(int8_t)a[i * lda + p];
                                        sum += (value - a_zero) * w[j * k + p];
                                    }
                                    acc[i * n + j] = sum;
                                }
                            }
                            for (size_t j = 0; j < n; ++j) {
                                scale[j] = (float)(next() % 1000u + 1u) * 1.7e-5f;
                                offset[j] = (float)((int32_t)(next() % 2001u) - 1000) * 3.1e-3f;
                            }
                            /* epilogue: 0 scale per tensor + offset, 1 per column + offset, 2 per column, 3 Cast alone */
                            const int epilogue = (int)((mi + ni + ki) % 4);
                            const struct mlcc_qs8_dequant dq = {a_zero, epilogue == 3 ? NULL : scale, epilogue == 0 ? 0u : 1u,
                                                                epilogue < 2 ? offset : NULL, work};
                            memset(want, 0xAA, sizeof want);
                            memset(got, 0xAA, sizeof got);
                            memset(want32, 0xAA, sizeof want32);
                            memset(got32, 0xAA, sizeof got32);
                            for (size_t i = 0; i < m; ++i) {
                                for (size_t j = 0; j < n; ++j) {
                                    float y = (float)acc[i * n + j];
                                    if (dq.scale) y = y * dq.scale[j * dq.scale_step];
                                    if (dq.offset) y = y + dq.offset[j];
                                    want[i * ldc + j] = y;
                                    want32[i * ldc + j] = acc[i * n + j];
                                }
                            }
                            forms[v].f32(m, n, k, a, lda, a_flip, packed, got, ldc, &dq);
                            forms[v].s32(m, n, k, a, lda, a_flip, packed, got32, ldc, &dq);
                            cases += 2;
                            if (memcmp(want, got, sizeof want)) {
                                if (differ < 5) printf("f32 %s: m %zu n %zu k %zu uint8 %d fill %d epilogue %d differs\n", forms[v].name, m, n, k, uint8_rows, fill, epilogue);
                                ++differ;
                            }
                            if (memcmp(want32, got32, sizeof want32)) {
                                if (differ < 5) printf("s32 %s: m %zu n %zu k %zu uint8 %d fill %d differs\n", forms[v].name, m, n, k, uint8_rows, fill);
                                ++differ;
                            }
                        }
                    }
                }
            }
        }
    }
    printf("%u of %u cases differ\n", differ, cases);
    return 0;
}
