/* The command-line driver of a built model (NAME_runner on Linux targets): a generated NAME_runner.c
 * describes the model in an mlcc_runner_model and calls mlcc_runner_main (runtime_c/runner/runner.c).
 *
 * usage: NAME_runner [--warmup N] [--repeat N] INPUT... OUTPUT...
 *
 * Each INPUT is a file holding one input tensor's raw bytes (C order, the target's byte order), in ONNX
 * order, of exactly the tensor's size; each OUTPUT is written the same way. With --repeat N the model
 * runs N times after --warmup N untimed runs, and each timed run prints "run_ns NANOSECONDS" to stdout.
 * Exit status: 0 done; 1 bad usage; 2 a file could not be read or written, or memory ran out;
 * 3 the model returned a non-zero status. */
#ifndef MLCC_RUNNER_H
#define MLCC_RUNNER_H

#include <stddef.h>

typedef struct {
    const char *name;  /* the ONNX name, for messages */
    size_t nbytes;
} mlcc_runner_tensor;

typedef struct {
    const char *name;
    int (*run_v)(const void *const *inputs, void *const *outputs, void *arena);
    const mlcc_runner_tensor *inputs;
    size_t num_inputs;
    const mlcc_runner_tensor *outputs;
    size_t num_outputs;
    size_t arena_bytes;
    size_t arena_align;
} mlcc_runner_model;

int mlcc_runner_main(int argc, char **argv, const mlcc_runner_model *model);

#endif /* MLCC_RUNNER_H */
