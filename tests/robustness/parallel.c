/* Thread-pool driver for one generated model (DRIVER_MODEL_HEADER, DRIVER_MODEL_RUN_V, DRIVER_MODEL_RUN_PARALLEL,
 * DRIVER_MODEL_ARENA_BYTES name it), for ThreadSanitizer.
 *
 * usage: parallel THREADS ITERATIONS N_IN IN_BYTES... OUT_BYTES...
 *
 * Fills the inputs with seeded values in [-1, 1) (float inputs), runs NAME_run_v once for the reference, then
 * NAME_run_parallel on the runtime's pool of THREADS threads ITERATIONS times, each with a fresh arena
 * content and poisoned outputs, and checks every output byte against the reference. Prints "identical" and
 * exits 0, or exits 3 on a mismatch. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include DRIVER_MODEL_HEADER
#include "mlcc/threadpool.h"

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "parallel: %s %s\n", what, detail);
    exit(2);
}

#define MAX_TENSORS 64

int main(int argc, char **argv)
{
    const void *inputs[MAX_TENSORS + 1];
    void *outputs[MAX_TENSORS + 1], *reference[MAX_TENSORS + 1];
    size_t out_bytes[MAX_TENSORS];
    const size_t arena_bytes = DRIVER_MODEL_ARENA_BYTES > 0 ? DRIVER_MODEL_ARENA_BYTES : 64u;
    uint32_t seed = 12345u;
    long mismatches = 0;
    int n_in, n_out, arg = 4;

    if (argc < 5) fail("usage:", "parallel THREADS ITERATIONS N_IN IN_BYTES... OUT_BYTES...");
    const unsigned threads = (unsigned)atoi(argv[1]);
    const long iterations = atol(argv[2]);
    n_in = atoi(argv[3]);
    n_out = argc - 4 - n_in;
    if (n_in < 0 || n_in > MAX_TENSORS || n_out < 1 || n_out > MAX_TENSORS) fail("bad tensor counts", argv[3]);
    for (int i = 0; i < n_in; i++) {
        const size_t n = (size_t)atol(argv[arg++]);
        float *x = (float *)malloc(n > 0 ? n : 1u);
        if (x == NULL) fail("out of memory", "");
        for (size_t j = 0; j < n / sizeof(float); j++) {
            seed = seed * 1664525u + 1013904223u;
            x[j] = (float)(seed >> 8) / 8388608.0f - 1.0f;
        }
        inputs[i] = x;
    }
    for (int o = 0; o < n_out; o++) {
        out_bytes[o] = (size_t)atol(argv[arg++]);
        outputs[o] = malloc(out_bytes[o] > 0 ? out_bytes[o] : 1u);
        reference[o] = malloc(out_bytes[o] > 0 ? out_bytes[o] : 1u);
        if (outputs[o] == NULL || reference[o] == NULL) fail("out of memory", "");
    }
    unsigned char *arena_block = (unsigned char *)malloc(arena_bytes + 64u);
    if (arena_block == NULL) fail("out of memory", "arena");
    void *arena = arena_block + (64u - (uintptr_t)arena_block % 64u) % 64u;
    memset(arena, 0, arena_bytes);
    if (DRIVER_MODEL_RUN_V(inputs, reference, arena) != 0) fail("run_v failed", "");

    mlcc_threadpool *pool = mlcc_threadpool_create(threads);
    if (pool == NULL) fail("no thread pool", argv[1]);
    const mlcc_parallel parallel = mlcc_threadpool_parallel(pool);
    for (long it = 0; it < iterations; it++) {
        memset(arena, (int)(0xA5 + it), arena_bytes);
        for (int o = 0; o < n_out; o++) memset(outputs[o], 0xCD, out_bytes[o]);
        if (DRIVER_MODEL_RUN_PARALLEL(inputs, outputs, arena, &parallel) != 0) fail("run_parallel failed", "");
        for (int o = 0; o < n_out; o++)
            if (memcmp(outputs[o], reference[o], out_bytes[o]) != 0) mismatches++;
    }
    mlcc_threadpool_destroy(pool);
    if (mismatches != 0) {
        printf("%ld outputs differ from NAME_run_v's\n", mismatches);
        return 3;
    }
    printf("identical: %ld runs on %u threads\n", iterations, threads);
    return 0;
}
