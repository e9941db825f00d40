/* The semihosting harness of a model's firmware image (NAME_firmware.elf on cortex-m targets), run on an
 * emulated board by qemu-system-arm. A generated NAME_firmware.c describes the model's tensors and static
 * buffers in an mlcc_board_model and calls mlcc_board_main (harness.c).
 *
 * The harness reads input0.bin, input1.bin, ... from the emulator's working directory (raw bytes, ONNX
 * order, exactly each tensor's size), runs the model once, writes output0.bin, ... the same way, and
 * prints "stack_bytes N" (the run's deepest stack, measured by painting) to the semihosting console.
 * Exit status: 0 done; 2 a file could not be read or written; 3 the model returned a non-zero status;
 * 4 the processor faulted (one "fault:" line says where). */
#ifndef MLCC_BOARD_H
#define MLCC_BOARD_H

#include <stddef.h>

typedef struct {
    const char *name;  /* the ONNX name, for messages */
    size_t nbytes;
    void *data;  /* a static buffer of nbytes (at least one byte) */
} mlcc_board_tensor;

typedef struct {
    int (*run_v)(const void *const *inputs, void *const *outputs, void *arena);
    const mlcc_board_tensor *inputs;
    size_t num_inputs;
    const mlcc_board_tensor *outputs;
    size_t num_outputs;
    const void **input_data;  /* num_inputs pointers, filled by the harness */
    void **output_data;
    void *arena;
} mlcc_board_model;

int mlcc_board_main(const mlcc_board_model *model);

#endif /* MLCC_BOARD_H */
