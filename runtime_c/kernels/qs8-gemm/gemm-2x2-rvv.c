/* qs8-gemm for the RISC-V vector extension (RVV 1.0, any VLEN): tiles of 2 rows x 2 columns, k in strips of
 * VLEN/8 bytes. vwmul multiplies 8-bit pairs into 16-bit lanes (a product of two 8-bit values fits: (-128)^2
 * = 2^14) and vwadd.wv adds them into 32-bit lanes, so the result is exact; the last, shorter strip adds under
 * the tail-undisturbed policy, so lanes past it keep their sums and no scalar tail is needed. One reduction
 * per output at the end. Rows and columns past the product's edge reuse the first and are not stored. */
#if defined(__riscv_vector)
#include <riscv_vector.h>

#include "mlcc/kernels/qs8-gemm.h"

static inline vint32m4_t mac(vint32m4_t acc, vint8m1_t x, vint8m1_t b, size_t vl) {
    return __riscv_vwadd_wv_i32m4_tu(acc, acc, __riscv_vwmul_vv_i16m2(x, b, vl), vl);
}

static inline vint8m1_t load_row(const uint8_t *a, uint8_t flip, size_t vl) {
    return __riscv_vreinterpret_v_u8m1_i8m1(__riscv_vxor_vx_u8m1(__riscv_vle8_v_u8m1(a, vl), flip, vl));
}

static inline int32_t sum_lanes(vint32m4_t v, size_t vlmax) {
    return __riscv_vmv_x_s_i32m1_i32(__riscv_vredsum_vs_i32m4_i32m1(v, __riscv_vmv_s_x_i32m1(0, 1), vlmax));
}

void mlcc_qs8_gemm__rvv(size_t m, size_t n, size_t k, const uint8_t *a, size_t lda, uint8_t a_flip,
                        const int8_t *w, size_t ldw, uint8_t *c, size_t c_rs, size_t c_cs,
                        const struct mlcc_qs8_requant *rq) {
    const size_t vlmax = __riscv_vsetvlmax_e32m4();  /* = vsetvlmax_e8m1: one 32-bit lane per byte of a strip */
    for (size_t i = 0; i < m; i += 2) {
        const size_t mr = MLCC_MIN(2, m - i);
        const uint8_t *a0 = a + i * lda, *a1 = mr > 1 ? a0 + lda : a0;
        for (size_t j = 0; j < n; j += 2) {
            const size_t nr = MLCC_MIN(2, n - j);
            const int8_t *w0 = w + j * ldw, *w1 = nr > 1 ? w0 + ldw : w0;
            vint32m4_t acc00 = __riscv_vmv_v_x_i32m4(0, vlmax), acc01 = acc00, acc10 = acc00, acc11 = acc00;
            for (size_t p = 0; p < k;) {
                const size_t vl = __riscv_vsetvl_e8m1(k - p);
                const vint8m1_t x0 = load_row(a0 + p, a_flip, vl), x1 = load_row(a1 + p, a_flip, vl);
                const vint8m1_t b0 = __riscv_vle8_v_i8m1(w0 + p, vl), b1 = __riscv_vle8_v_i8m1(w1 + p, vl);
                acc00 = mac(acc00, x0, b0, vl);
                acc01 = mac(acc01, x0, b1, vl);
                acc10 = mac(acc10, x1, b0, vl);
                acc11 = mac(acc11, x1, b1, vl);
                p += vl;
            }
            const int32_t sums[2][2] = {{sum_lanes(acc00, vlmax), sum_lanes(acc01, vlmax)},
                                        {sum_lanes(acc10, vlmax), sum_lanes(acc11, vlmax)}};
            for (size_t r = 0; r < mr; ++r) {
                for (size_t q = 0; q < nr; ++q) {
                    c[(i + r) * c_rs + (j + q) * c_cs] =
                        mlcc_qs8_requantize(rq->bias[j + q] + sums[r][q], rq->multiplier[j + q], rq->shift[j + q], rq);
                }
            }
        }
    }
}
#endif
