/* What a step pays for reading its input from the other core's cache: a producer pinned to CPU 0 writes a
 * 28x28x192 float tensor (MobileNetV2's middle activations, 588 KiB, fits one core's L2), then a consumer
 * pinned to CPU 0 (the same core) or CPU 1 (the other) reads it once into a multiply-add over a second tensor,
 * as a memory-bound step (depthwise, a 1x1 with few channels) does; the consumer's pass is timed. The thread
 * pool's two-ended claiming (runtime_c/kernels/threadpool/threadpool-job.h) exists because of this: taking a
 * step's tasks in turn from one end moved every other task's rows between cores from one step to the next.
 *
 *     cc -O3 -march=native -pthread benchmarks/cross_core.c -o /tmp/cross_core && /tmp/cross_core
 *
 * AMD EPYC (Zen 4) VM, 2 vCPUs, under load 10: same core 12.5 us (min) / 14.5 (median), other core
 * 24-25 / 48-57: a memory-bound pass over data another core just wrote takes twice as long, or more.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ELEMENTS (28u * 28u * 192u)
#define ROUNDS 400

static float *produced, *accumulated;
static _Atomic int turn; /* 0: the producer's, 1: the consumer's */
static int consumer_cpu;
static uint64_t pass_ns[ROUNDS];

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *consumer(void *unused)
{
    (void)unused;
    pin(consumer_cpu);
    for (int r = 0; r < ROUNDS; ++r) {
        while (atomic_load(&turn) != 1) sched_yield();
        const uint64_t start = now_ns();
        for (size_t i = 0; i < ELEMENTS; ++i) accumulated[i] = produced[i] * 1.5f + accumulated[i];
        pass_ns[r] = now_ns() - start;
        atomic_store(&turn, 0);
    }
    return NULL;
}

static int by_value(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(void)
{
    produced = aligned_alloc(64, ELEMENTS * sizeof(float));
    accumulated = aligned_alloc(64, ELEMENTS * sizeof(float));
    if (produced == NULL || accumulated == NULL) return 1;
    memset(accumulated, 0, ELEMENTS * sizeof(float));
    pin(0);
    for (int round = 0; round < 4; ++round) {  /* same, other, same, other: a slow spell falls on both */
        consumer_cpu = round % 2;
        atomic_store(&turn, 0);
        pthread_t thread;
        if (pthread_create(&thread, NULL, consumer, NULL) != 0) return 1;
        for (int r = 0; r < ROUNDS; ++r) {
            while (atomic_load(&turn) != 0) sched_yield();
            for (size_t i = 0; i < ELEMENTS; ++i) produced[i] = (float)r + (float)(i & 7u);
            atomic_store(&turn, 1);
        }
        pthread_join(thread, NULL);
        qsort(pass_ns, ROUNDS, sizeof pass_ns[0], by_value);
        printf("input written by the %s core: pass min %.1f us, median %.1f us\n", round % 2 ? "other" : "same ",
               (double)pass_ns[0] / 1e3, (double)pass_ns[ROUNDS / 2] / 1e3);
    }
    free(produced);
    free(accumulated);
    return 0;
}
