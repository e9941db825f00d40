/* The command-line driver of a built model (NAME_runner on Linux targets): a generated NAME_runner.c
 * describes the model in an mlcc_runner_model and calls mlcc_runner_main (runtime_c/runner/runner.c).
 *
 * usage: NAME_runner [--warmup N] [--repeat N] [--dims D0,D1,...] INPUT... OUTPUT...
 *
 * Each INPUT is a file holding one input tensor's raw bytes (C order, the target's byte order), in ONNX
 * order, of exactly the tensor's size; each OUTPUT is written the same way. A model built with run-time
 * dimensions takes their sizes with --dims (NAME_dims's members in order) and runs NAME_run_dims: each INPUT
 * then holds the tensor packed at its shape for those sizes (at most the largest shape's bytes), each
 * OUTPUT is written packed at its shape, and every output's shape is printed as "output_shape D0 D1 ...". With --repeat N the model
 * runs N times after --warmup N untimed runs, and each timed run prints "run_ns NANOSECONDS" to stdout.
 * Exit status: 0 done; 1 bad usage; 2 a file could not be read or written, or memory ran out;
 * 3 the model returned a non-zero status. */
#ifndef MLCC_RUNNER_H
#define MLCC_RUNNER_H

#include <stddef.h>

typedef struct {
    const char *name;  /* the ONNX name, for messages */
    size_t nbytes;     /* at the largest sizes */
    size_t rank;
    size_t element_bytes;
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
    /* NAME_run_dims with NAME_dims read as an array of its size_t members; NULL and 0 for a static model */
    int (*run_dims)(const size_t *dims, const void *const *inputs, void *const *outputs, size_t *output_shapes,
                    void *arena);
    size_t num_dims;
} mlcc_runner_model;

int mlcc_runner_main(int argc, char **argv, const mlcc_runner_model *model);

#endif /* MLCC_RUNNER_H */
