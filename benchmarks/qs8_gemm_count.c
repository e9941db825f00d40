/* One qs8-gemm row kernel, named at compile time (-DKERNEL=mlcc_qs8_gemm__neon), called CALLS times on a
 * product of M x N x K; benchmarks/qs8_gemm_isa.py counts the instructions an emulator executes for two
 * values of CALLS and divides the difference: instructions per call, setup and exit cancelled out. */
#include <stdint.h>

#include "mlcc/kernels/qs8-gemm.h"

#ifndef M
#define M 16
#endif
#ifndef N
#define N 16
#endif
#ifndef K
#define K 256
#endif

static uint8_t a[M * K], c[M * N];
static int8_t w[N * K];
static int32_t bias[N], mult[N], shift[N];

int main(void) {
    uint32_t state = 1u;
    for (int i = 0; i < M * K; ++i) a[i] = (uint8_t)((state = state * 1664525u + 1013904223u) >> 24);
    for (int i = 0; i < N * K; ++i) w[i] = (int8_t)((state = state * 1664525u + 1013904223u) >> 24);
    for (int j = 0; j < N; ++j) {
        bias[j] = j;
        mult[j] = 1 << 30;
        shift[j] = 20;
    }
    const struct mlcc_qs8_requant rq = {bias, mult, shift, 0, -128, 127};
    for (int call = 0; call < CALLS; ++call) KERNEL(M, N, K, a, K, 0, w, K, c, N, 1, &rq);
    return c[0] == 0xFF;  /* the results are used */
}
