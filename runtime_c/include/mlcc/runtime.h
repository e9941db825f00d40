/* mlcc runtime: what generated models and kernels share. Portable C99, no libc state, no heap. */
#ifndef MLCC_RUNTIME_H
#define MLCC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "mlcc/isa.h"  /* MLCC_ISA_NAME: kernels named for the ISA they are built for */

/* Status codes returned by NAME_run / NAME_run_v. */
#define MLCC_OK 0
#define MLCC_ERROR_NULL_ARGUMENT 1
#define MLCC_ERROR_MISALIGNED_ARENA 2
/* An If's run-time condition chose a branch mlcc could not compile for the built shapes (the build warned). */
#define MLCC_ERROR_UNCOMPILED_BRANCH 3
/* NAME_run_dims: a run-time dimension outside its range (nothing was read or written). */
#define MLCC_ERROR_DIM_RANGE 4

#define MLCC_ARENA_ALIGNMENT 64

#if defined(__GNUC__) || defined(__clang__)
#define MLCC_RESTRICT __restrict__
#define MLCC_ALIGNED(n) __attribute__((aligned(n)))
#define MLCC_EXPORT __attribute__((visibility("default")))
#else
#define MLCC_RESTRICT
#define MLCC_ALIGNED(n)
#define MLCC_EXPORT
#endif

#define MLCC_MIN(a, b) ((a) < (b) ? (a) : (b))
#define MLCC_MAX(a, b) ((a) > (b) ? (a) : (b))

#endif /* MLCC_RUNTIME_H */
