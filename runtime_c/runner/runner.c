/* mlcc_runner_main: the generic part of every NAME_runner (see mlcc/runner.h). This is a host program,
 * not model code: it allocates its buffers with malloc, reads and writes files, and reads the clock. */
#define _POSIX_C_SOURCE 199309L
#include "mlcc/runner.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { EXIT_USAGE = 1, EXIT_IO = 2, EXIT_MODEL = 3 };

static int fail(const char *program, const char *what, const char *detail)
{
    fprintf(stderr, "%s: %s %s\n", program, what, detail);
    return EXIT_IO;
}

/* malloc never returns NULL for a zero-size tensor here: every buffer has at least one byte. */
static void *allocate(size_t nbytes)
{
    return malloc(nbytes > 0 ? nbytes : 1u);
}

static int read_tensor(const char *program, const char *path, const mlcc_runner_tensor *tensor, void *data)
{
    FILE *f = fopen(path, "rb");
    size_t got;
    int extra;
    if (f == NULL) return fail(program, "cannot read", path);
    got = fread(data, 1, tensor->nbytes, f);
    extra = fgetc(f);
    fclose(f);
    if (got != tensor->nbytes || extra != EOF) {
        fprintf(stderr, "%s: %s: input '%s' takes exactly %lu bytes\n", program, path, tensor->name,
                (unsigned long)tensor->nbytes);
        return EXIT_IO;
    }
    return 0;
}

static int write_tensor(const char *program, const char *path, const mlcc_runner_tensor *tensor, const void *data)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) return fail(program, "cannot write", path);
    if (fwrite(data, 1, tensor->nbytes, f) != tensor->nbytes) {
        fclose(f);
        return fail(program, "cannot write", path);
    }
    return fclose(f) == 0 ? 0 : fail(program, "cannot write", path);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int usage(const mlcc_runner_model *model, const char *program)
{
    fprintf(stderr, "usage: %s [--warmup N] [--repeat N] INPUT... OUTPUT...\n"
                    "  %lu input file(s), then %lu output file(s): raw tensor bytes in ONNX order\n",
            program, (unsigned long)model->num_inputs, (unsigned long)model->num_outputs);
    return EXIT_USAGE;
}

static int parse_count(const char *text, long *count)
{
    char *end;
    *count = strtol(text, &end, 10);
    return *end == '\0' && end != text && *count >= 0;
}

int mlcc_runner_main(int argc, char **argv, const mlcc_runner_model *model)
{
    const char *program = argc > 0 ? argv[0] : model->name;
    const size_t tensors = model->num_inputs + model->num_outputs;
    long warmup = 0, repeat = 1;
    int arg = 1, status = 0, timed = 0, error = 0;
    const void **inputs;
    void **outputs;
    unsigned char *arena_memory;
    void *arena;
    size_t i;

    while (arg + 1 < argc && strncmp(argv[arg], "--", 2) == 0) {
        long *count = strcmp(argv[arg], "--warmup") == 0 ? &warmup : strcmp(argv[arg], "--repeat") == 0 ? &repeat : NULL;
        if (count == NULL || !parse_count(argv[arg + 1], count)) return usage(model, program);
        timed |= count == &repeat;
        arg += 2;
    }
    if ((size_t)(argc - arg) != tensors || repeat < 1) return usage(model, program);

    /* pointer tables hold at least one entry: C has no empty arrays and the model may have no inputs */
    inputs = (const void **)calloc(model->num_inputs + 1, sizeof *inputs);
    outputs = (void **)calloc(model->num_outputs + 1, sizeof *outputs);
    arena_memory = (unsigned char *)allocate(model->arena_bytes + model->arena_align);
    if (inputs == NULL || outputs == NULL || arena_memory == NULL) return fail(program, "out of memory for", "the buffers");
    arena = arena_memory + (model->arena_align - (uintptr_t)arena_memory % model->arena_align) % model->arena_align;

    for (i = 0; i < model->num_inputs && !error; ++i) {
        void *data = allocate(model->inputs[i].nbytes);
        if (data == NULL) return fail(program, "out of memory for", model->inputs[i].name);
        error = read_tensor(program, argv[arg + (int)i], &model->inputs[i], data);
        inputs[i] = data;
    }
    for (i = 0; i < model->num_outputs && !error; ++i) {
        outputs[i] = allocate(model->outputs[i].nbytes);
        if (outputs[i] == NULL) return fail(program, "out of memory for", model->outputs[i].name);
    }
    if (error) return error;

    for (long r = 0; r < warmup + repeat && status == 0; ++r) {
        const uint64_t start = now_ns();
        status = model->run_v(inputs, outputs, arena);
        if (timed && r >= warmup) printf("run_ns %llu\n", (unsigned long long)(now_ns() - start));
    }
    if (status != 0) {
        fprintf(stderr, "%s: %s_run_v returned status %d\n", program, model->name, status);
        return EXIT_MODEL;
    }
    for (i = 0; i < model->num_outputs && !error; ++i) {
        error = write_tensor(program, argv[arg + (int)(model->num_inputs + i)], &model->outputs[i], outputs[i]);
    }
    return error;
}
