/* Test driver for one generated model, compiled with it by tests/robustness (DRIVER_MODEL_HEADER and
 * DRIVER_MODEL_RUN_V name the model). Every buffer is allocated at its exact size, so AddressSanitizer sees
 * any access past an input, an output, or the arena.
 *
 * usage: driver ARENA_BYTES GUARDS_FILE N_IN in.bin... N_OUT out.bin NBYTES...
 *
 * GUARDS_FILE lists "offset length" ranges of the arena that no step may touch (gaps between planned
 * tensors, a tensor's padding, slack after the arena). They are filled with a canary before the run and
 * must still hold it after; under AddressSanitizer they are also poisoned, so a read or write there
 * stops the run at the faulting instruction. Exit 0 on success, 3 if a canary changed. */
#define _POSIX_C_SOURCE 200112L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include DRIVER_MODEL_HEADER

#define DRIVER_NAME "driver"
#include "driver_io.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define CANARY 0xA5u
#define MAX_TENSORS 64
#define MAX_GUARDS 4096

int main(int argc, char **argv)
{
    static size_t guard_offset[MAX_GUARDS], guard_length[MAX_GUARDS];
    const void *inputs[MAX_TENSORS + 1];
    void *outputs[MAX_TENSORS + 1];
    size_t arena_bytes, n_guards = 0, i, j;
    unsigned long long offset, length;
    int n_in, n_out, arg = 3, status, damaged = 0;
    unsigned char *arena;
    void *arena_memory;
    FILE *guards;

    if (argc < 4) fail("usage:", "driver ARENA_BYTES GUARDS_FILE N_IN in... N_OUT out NBYTES...");
    arena_bytes = (size_t)strtoull(argv[1], NULL, 10);
    guards = fopen(argv[2], "r");
    if (guards == NULL) fail("cannot read", argv[2]);
    while (n_guards < MAX_GUARDS && fscanf(guards, "%llu %llu", &offset, &length) == 2) {
        if (offset + length > arena_bytes) fail("guard outside the arena in", argv[2]);
        guard_offset[n_guards] = (size_t)offset;
        guard_length[n_guards++] = (size_t)length;
    }
    fclose(guards);

    n_in = atoi(argv[arg++]);
    if (n_in < 0 || n_in > MAX_TENSORS || arg + n_in >= argc) fail("bad input count", argv[arg - 1]);
    for (i = 0; i < (size_t)n_in; i++) inputs[i] = read_file(argv[arg++]);
    n_out = atoi(argv[arg++]);
    if (n_out < 0 || n_out > MAX_TENSORS || arg + 2 * n_out > argc) fail("bad output count", argv[arg - 1]);
    for (i = 0; i < (size_t)n_out; i++) {
        size_t n = (size_t)strtoull(argv[arg + 2 * i + 1], NULL, 10);
        outputs[i] = malloc(n > 0 ? n : 1u);
        if (outputs[i] == NULL) fail("out of memory for", argv[arg + 2 * i]);
    }

    if (posix_memalign(&arena_memory, 64, arena_bytes > 0 ? arena_bytes : 64u) != 0) fail("out of memory for", "the arena");
    arena = (unsigned char *)arena_memory;
    for (j = 0; j < n_guards; j++) {
        memset(arena + guard_offset[j], (int)CANARY, guard_length[j]);
        POISON(arena + guard_offset[j], guard_length[j]);
    }

    status = DRIVER_MODEL_RUN_V(inputs, outputs, arena);

    for (j = 0; j < n_guards; j++) {
        UNPOISON(arena + guard_offset[j], guard_length[j]);
        for (i = 0; i < guard_length[j]; i++) {
            if (arena[guard_offset[j] + i] != CANARY) {
                fprintf(stderr, "driver: arena byte %lu (guard %lu+%lu) was written\n",
                        (unsigned long)(guard_offset[j] + i), (unsigned long)guard_offset[j], (unsigned long)guard_length[j]);
                damaged = 1;
                break;
            }
        }
    }
    if (status != 0) {
        fprintf(stderr, "driver: run returned %d\n", status);
        return 1;
    }
    for (i = 0; i < (size_t)n_out; i++) write_file(argv[arg + 2 * i], outputs[i], (size_t)strtoull(argv[arg + 2 * i + 1], NULL, 10));
    for (i = 0; i < (size_t)n_in; i++) free((void *)inputs[i]);
    for (i = 0; i < (size_t)n_out; i++) free(outputs[i]);
    free(arena_memory);
    return damaged ? 3 : 0;
}
