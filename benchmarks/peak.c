/* peak.c: this core's fp32 FMA throughput, the ceiling the benchmark table compares achieved rates to.
 *
 * Each loop keeps independent accumulators in registers (FMA latency 4 cycles x 2 ports needs at least 8;
 * 16 of the 32 zmm registers, 12 of the 16 ymm ones so none spills) that `acc = acc * a + b` updates; a and
 * b come from memory so nothing folds, and the accumulators' sum stays live so nothing is dropped. Check
 * with objdump that each loop body is only vfmadd instructions on registers.
 * Prints one JSON line: GFLOP/s per ISA named on the command line, the best of 200 runs of about a
 * millisecond each, so that a busy machine's interruptions drop out. With --median, the median of the runs
 * instead (--runs N of them): the rate under the machine's conditions of the moment, which the benchmark
 * pairs with each model's timed runs, medians both.
 */
#define _POSIX_C_SOURCE 199309L
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define FMA_LOOP(NAME, VEC, LANES, ACCUMULATORS, SET1, FMADD, ADD, STORE)                                   \
    __attribute__((noinline)) static double NAME(const float *ab, long iterations)         \
    {                                                                                      \
        const VEC a = SET1(ab[0]), b = SET1(ab[1]);                                        \
        VEC acc[ACCUMULATORS];                                                             \
        for (int j = 0; j < ACCUMULATORS; ++j) acc[j] = SET1(ab[2] + (float)j);           \
        const double start = now_s();                                                      \
        for (long i = 0; i < iterations; ++i) {                                            \
            for (int j = 0; j < ACCUMULATORS; ++j) acc[j] = FMADD(acc[j], a, b);          \
        }                                                                                  \
        const double seconds = now_s() - start;                                            \
        VEC sum = acc[0];                                                                  \
        for (int j = 1; j < ACCUMULATORS; ++j) sum = ADD(sum, acc[j]);                     \
        float out[LANES];                                                                  \
        STORE(out, sum);                                                                   \
        if (out[0] == 12345.0f) printf("%g\n", (double)out[0]); /* keeps the result live */ \
        return 2.0 * LANES * ACCUMULATORS * (double)iterations / seconds / 1e9;            \
    }

__attribute__((target("avx512f")))
FMA_LOOP(fma_avx512, __m512, 16, 16, _mm512_set1_ps, _mm512_fmadd_ps, _mm512_add_ps, _mm512_storeu_ps)
__attribute__((target("avx2,fma")))
FMA_LOOP(fma_avx2, __m256, 8, 12, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps)

static int by_value(const void *x, const void *y)
{
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The best or the median rate of `runs` runs (at most MAX_RUNS). */
#define MAX_RUNS 1000
static double rate(double (*loop)(const float *, long), const float *ab, int runs, int median)
{
    static double rates[MAX_RUNS];
    for (int run = 0; run < runs; ++run) rates[run] = loop(ab, 400000L);
    qsort(rates, (size_t)runs, sizeof rates[0], by_value);
    return median ? rates[runs / 2] : rates[runs - 1];
}

/* usage: peak [--runs N] [--median] ISA...  with ISA avx512 or avx2 (the caller checks the CPU has it) */
int main(int argc, char **argv)
{
    /* a and b near 1 and 0 keep the accumulators finite; argc makes them unknown at compile time */
    const float ab[3] = {0.999999f, 1e-7f * (float)argc, 1.0f};
    int runs = 200, median = 0, i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; ++i) {
        if (strcmp(argv[i], "--median") == 0) {
            median = 1;
        } else if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else {
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS) return 2;
    for (int j = i; j < argc; ++j)
        if (strcmp(argv[j], "avx512") != 0 && strcmp(argv[j], "avx2") != 0) return 2;
    printf("{");
    for (int j = i; j < argc; ++j)
        printf("%s\"%s\": %.2f", j > i ? ", " : "", argv[j],
               rate(strcmp(argv[j], "avx512") == 0 ? fma_avx512 : fma_avx2, ab, runs, median));
    printf("}\n");
    return 0;
}
