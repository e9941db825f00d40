/* mlcc_board_main: inputs in from host files, one run of the model, outputs out, the run's stack depth
 * measured by painting (see board.h). */
#include "board.h"

#include <stdint.h>

#include "semihost.h"

enum { EXIT_IO = 2, EXIT_MODEL = 3 };

#define PAINT 0xC5A5A5C5u
extern uint32_t __stack_limit;  /* the lowest word of the stack region (board.ld) */

static char *text(char *out, const char *s)
{
    while (*s) *out++ = *s++;
    return out;
}

static char *decimal(char *out, size_t value)
{
    char digits[24];
    int n = 0;
    do digits[n++] = (char)('0' + value % 10u); while ((value /= 10u) != 0);
    while (n) *out++ = digits[--n];
    return out;
}

static char *file_name(char *out, const char *stem, size_t index)
{
    out = decimal(text(out, stem), index);
    return text(out, ".bin");
}

static int fail(const char *what, const char *path, const mlcc_board_tensor *tensor)
{
    char line[256], *p = line;
    p = text(text(text(p, "error: "), what), path);
    if (tensor != 0) {
        p = text(text(text(p, ": tensor '"), tensor->name), "' takes exactly ");
        p = text(decimal(p, tensor->nbytes), " bytes");
    }
    *text(p, "\n") = '\0';
    semihost_print(line);
    return EXIT_IO;
}

static int read_input(size_t index, const mlcc_board_tensor *tensor)
{
    char path[32];
    *file_name(path, "input", index) = '\0';
    const int handle = semihost_open(path, SEMIHOST_READ_BINARY);
    if (handle < 0) return fail("cannot read ", path, 0);
    const long length = semihost_file_length(handle);
    const size_t got = length == (long)tensor->nbytes ? semihost_read(handle, tensor->data, tensor->nbytes) : 0;
    semihost_close(handle);
    return length == (long)tensor->nbytes && got == tensor->nbytes ? 0 : fail("", path, tensor);
}

static int write_output(size_t index, const mlcc_board_tensor *tensor)
{
    char path[32];
    *file_name(path, "output", index) = '\0';
    const int handle = semihost_open(path, SEMIHOST_WRITE_BINARY);
    if (handle < 0) return fail("cannot write ", path, 0);
    const size_t put = semihost_write(handle, tensor->data, tensor->nbytes);
    semihost_close(handle);
    return put == tensor->nbytes ? 0 : fail("cannot write ", path, 0);
}

static uintptr_t stack_pointer(void)
{
    uintptr_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

/* Paints the free stack below this frame (the loops need none of it: no calls, no red zone on Arm), runs, and returns the
 * depth the run reached below the caller's stack pointer. noinline: its frame is the one measured from. */
__attribute__((noinline)) static int paint_and_run(const mlcc_board_model *model, size_t *depth)
{
    const uintptr_t top = stack_pointer();
    volatile uint32_t *word = &__stack_limit;
    while ((uintptr_t)word < top) *word++ = PAINT;
    const int status = model->run_v(model->input_data, model->output_data, model->arena);
    word = &__stack_limit;
    while ((uintptr_t)word < top && *word == PAINT) ++word;
    *depth = top - (uintptr_t)word;
    return status;
}

int mlcc_board_main(const mlcc_board_model *model)
{
    for (size_t i = 0; i < model->num_inputs; ++i) {
        const int status = read_input(i, &model->inputs[i]);
        if (status != 0) return status;
        model->input_data[i] = model->inputs[i].data;
    }
    for (size_t i = 0; i < model->num_outputs; ++i) model->output_data[i] = model->outputs[i].data;
    size_t depth = 0;
    const int status = paint_and_run(model, &depth);
    char line[64];
    *text(decimal(text(line, "stack_bytes "), depth), "\n") = '\0';
    semihost_print(line);
    if (status != 0) {
        char message[64], *p = text(message, "error: the model returned status ");
        if (status < 0) *p++ = '-';
        *text(decimal(p, status < 0 ? 0u - (size_t)status : (size_t)status), "\n") = '\0';
        semihost_print(message);
        return EXIT_MODEL;
    }
    for (size_t i = 0; i < model->num_outputs; ++i) {
        const int written = write_output(i, &model->outputs[i]);
        if (written != 0) return written;
    }
    return 0;
}
