/* Reentrancy driver for one generated model (DRIVER_MODEL_HEADER, DRIVER_MODEL_RUN_V, DRIVER_MODEL_ARENA_BYTES name it).
 *
 * usage: threads ITERATIONS N_IN a_in.bin... b_in.bin... N_OUT a_out.bin... b_out.bin... NBYTES...
 *
 * Runs input set A and input set B once each on one thread (the reference, written to the out files),
 * then runs A and B concurrently on two threads, each with its own arena and outputs, ITERATIONS times,
 * and checks every result is byte-identical to the reference. Exit 0 on success, 3 on a mismatch. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include DRIVER_MODEL_HEADER

#define DRIVER_NAME "threads"
#include "driver_io.h"

#define MAX_TENSORS 64

struct job {
    const void *inputs[MAX_TENSORS + 1];
    void *outputs[MAX_TENSORS + 1];
    void *reference[MAX_TENSORS + 1];
    void *arena;
    long iterations, mismatches, failures;
};

static int n_out;
static size_t out_bytes[MAX_TENSORS];

static void *worker(void *arg)
{
    struct job *job = (struct job *)arg;
    long it;
    int o;
    for (it = 0; it < job->iterations; it++) {
        for (o = 0; o < n_out; o++) memset(job->outputs[o], 0xCD, out_bytes[o]);
        if (DRIVER_MODEL_RUN_V(job->inputs, job->outputs, job->arena) != 0) job->failures++;
        for (o = 0; o < n_out; o++)
            if (memcmp(job->outputs[o], job->reference[o], out_bytes[o]) != 0) job->mismatches++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    struct job jobs[2];
    pthread_t threads[2];
    int n_in, arg = 3, t, i;
    const size_t arena_bytes = DRIVER_MODEL_ARENA_BYTES > 0 ? DRIVER_MODEL_ARENA_BYTES : 64u;

    if (argc < 4) fail("usage:", "threads ITERATIONS N_IN a_in... b_in... N_OUT a_out... b_out... NBYTES...");
    memset(jobs, 0, sizeof jobs);
    n_in = atoi(argv[2]);
    if (n_in < 0 || n_in > MAX_TENSORS || arg + 2 * n_in >= argc) fail("bad input count", argv[2]);
    for (t = 0; t < 2; t++)
        for (i = 0; i < n_in; i++) jobs[t].inputs[i] = read_file(argv[arg++]);
    n_out = atoi(argv[arg++]);
    if (n_out < 0 || n_out > MAX_TENSORS || arg + 3 * n_out > argc) fail("bad output count", argv[arg - 1]);
    for (i = 0; i < n_out; i++) out_bytes[i] = (size_t)strtoull(argv[arg + 2 * n_out + i], NULL, 10);

    for (t = 0; t < 2; t++) {
        void *arena;
        if (posix_memalign(&arena, 64, arena_bytes) != 0) fail("out of memory for", "an arena");
        jobs[t].arena = arena;
        jobs[t].iterations = strtol(argv[1], NULL, 10);
        for (i = 0; i < n_out; i++) {
            jobs[t].outputs[i] = malloc(out_bytes[i] > 0 ? out_bytes[i] : 1u);
            jobs[t].reference[i] = malloc(out_bytes[i] > 0 ? out_bytes[i] : 1u);
            if (jobs[t].outputs[i] == NULL || jobs[t].reference[i] == NULL) fail("out of memory for", "outputs");
        }
        /* the single-threaded reference, with this job's own arena */
        if (DRIVER_MODEL_RUN_V(jobs[t].inputs, jobs[t].reference, jobs[t].arena) != 0) fail("reference run failed", "");
        for (i = 0; i < n_out; i++) write_file(argv[arg + t * n_out + i], jobs[t].reference[i], out_bytes[i]);
    }
    for (t = 0; t < 2; t++)
        if (pthread_create(&threads[t], NULL, worker, &jobs[t]) != 0) fail("cannot start", "a thread");
    for (t = 0; t < 2; t++) pthread_join(threads[t], NULL);
    for (t = 0; t < 2; t++) {
        if (jobs[t].failures || jobs[t].mismatches) {
            fprintf(stderr, "threads: job %d: %ld failed runs, %ld mismatching outputs in %ld iterations\n",
                    t, jobs[t].failures, jobs[t].mismatches, jobs[t].iterations);
            return 3;
        }
    }
    return 0;
}
