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

/* packed: the file holds the tensor at run-time sizes, so any whole number of elements up to nbytes */
static int read_tensor(const char *program, const char *path, const mlcc_runner_tensor *tensor, int packed, void *data)
{
    FILE *f = fopen(path, "rb");
    size_t got;
    int extra;
    if (f == NULL) return fail(program, "cannot read", path);
    got = fread(data, 1, tensor->nbytes, f);
    extra = fgetc(f);
    fclose(f);
    if (packed && extra == EOF && got % tensor->element_bytes == 0) return 0;
    if (got != tensor->nbytes || extra != EOF) {
        fprintf(stderr, "%s: %s: input '%s' takes %s %lu bytes\n", program, path, tensor->name,
                packed ? "at most" : "exactly", (unsigned long)tensor->nbytes);
        return EXIT_IO;
    }
    return 0;
}

static int write_tensor(const char *program, const char *path, size_t nbytes, const void *data)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL) return fail(program, "cannot write", path);
    if (fwrite(data, 1, nbytes, f) != nbytes) {
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
    fprintf(stderr, "usage: %s [--warmup N] [--repeat N]%s INPUT... OUTPUT...\n"
                    "  %lu input file(s), then %lu output file(s): raw tensor bytes in ONNX order\n",
            program, model->num_dims ? " --dims D0,D1,..." : "", (unsigned long)model->num_inputs,
            (unsigned long)model->num_outputs);
    if (model->num_dims) fprintf(stderr, "  --dims: the %lu run-time sizes, in NAME_dims's order\n", (unsigned long)model->num_dims);
    return EXIT_USAGE;
}

/* "D0,D1,...": exactly count whole numbers */
static int parse_dims(const char *text, size_t *dims, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        char *end;
        const unsigned long long value = strtoull(text, &end, 10);
        if (end == text || *text == '-' || *end != (i + 1 < count ? ',' : '\0')) return 0;
        dims[i] = (size_t)value;
        text = end + 1;
    }
    return 1;
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
    size_t *dims = NULL, *shapes = NULL, shape_count = 0;
    unsigned char *arena_memory;
    void *arena;
    size_t i;

    for (i = 0; i < model->num_outputs; ++i) shape_count += model->outputs[i].rank;
    while (arg + 1 < argc && strncmp(argv[arg], "--", 2) == 0) {
        if (strcmp(argv[arg], "--dims") == 0 && model->num_dims > 0 && dims == NULL) {
            dims = (size_t *)calloc(model->num_dims, sizeof *dims);
            if (dims == NULL || !parse_dims(argv[arg + 1], dims, model->num_dims)) return usage(model, program);
            arg += 2;
            continue;
        }
        long *count = strcmp(argv[arg], "--warmup") == 0 ? &warmup : strcmp(argv[arg], "--repeat") == 0 ? &repeat : NULL;
        if (count == NULL || !parse_count(argv[arg + 1], count)) return usage(model, program);
        timed |= count == &repeat;
        arg += 2;
    }
    if ((size_t)(argc - arg) != tensors || repeat < 1) return usage(model, program);
    if (dims != NULL && (shapes = (size_t *)calloc(shape_count + 1, sizeof *shapes)) == NULL)
        return fail(program, "out of memory for", "the output shapes");

    /* pointer tables hold at least one entry: C has no empty arrays and the model may have no inputs */
    inputs = (const void **)calloc(model->num_inputs + 1, sizeof *inputs);
    outputs = (void **)calloc(model->num_outputs + 1, sizeof *outputs);
    arena_memory = (unsigned char *)allocate(model->arena_bytes + model->arena_align);
    if (inputs == NULL || outputs == NULL || arena_memory == NULL) return fail(program, "out of memory for", "the buffers");
    arena = arena_memory + (model->arena_align - (uintptr_t)arena_memory % model->arena_align) % model->arena_align;

    for (i = 0; i < model->num_inputs && !error; ++i) {
        void *data = allocate(model->inputs[i].nbytes);
        if (data == NULL) return fail(program, "out of memory for", model->inputs[i].name);
        error = read_tensor(program, argv[arg + (int)i], &model->inputs[i], dims != NULL, data);
        inputs[i] = data;
    }
    for (i = 0; i < model->num_outputs && !error; ++i) {
        outputs[i] = allocate(model->outputs[i].nbytes);
        if (outputs[i] == NULL) return fail(program, "out of memory for", model->outputs[i].name);
    }
    if (error) return error;

    for (long r = 0; r < warmup + repeat && status == 0; ++r) {
        const uint64_t start = now_ns();
        status = dims != NULL ? model->run_dims(dims, inputs, outputs, shapes, arena) : model->run_v(inputs, outputs, arena);
        if (timed && r >= warmup) printf("run_ns %llu\n", (unsigned long long)(now_ns() - start));
    }
    if (status != 0) {
        fprintf(stderr, "%s: %s_%s returned status %d\n", program, model->name, dims != NULL ? "run_dims" : "run_v", status);
        return EXIT_MODEL;
    }
    for (i = 0, shape_count = 0; i < model->num_outputs && !error; ++i) {
        size_t nbytes = model->outputs[i].nbytes;
        if (dims != NULL) {  /* packed at this run's shape, which is printed */
            nbytes = model->outputs[i].element_bytes;
            printf("output_shape");
            for (size_t d = 0; d < model->outputs[i].rank; ++d, ++shape_count) {
                nbytes *= shapes[shape_count];
                printf(" %lu", (unsigned long)shapes[shape_count]);
            }
            printf("\n");
        }
        error = write_tensor(program, argv[arg + (int)(model->num_inputs + i)], nbytes, outputs[i]);
    }
    return error;
}
