/* The runtime's optional thread pool for Linux targets (pthreads): an mlcc_parallel for NAME_run_parallel.
 * Nothing else in the runtime needs it; firmware and applications with a pool of their own fill an
 * mlcc_parallel themselves. Built into the host and Linux libraries (libNAME.so, libNAME.a). */
#ifndef MLCC_THREADPOOL_H
#define MLCC_THREADPOOL_H

#include "mlcc/parallel.h"
#include "mlcc/runtime.h"

typedef struct mlcc_threadpool mlcc_threadpool;

/* A pool running tasks on `threads` threads: the caller of parallel_for and threads - 1 workers, which wait
 * between calls (spinning briefly, then asleep). NULL when threads is 0 or a thread cannot be started. */
MLCC_EXPORT mlcc_threadpool *mlcc_threadpool_create(unsigned threads);

/* Stops and joins the workers; NULL is ignored. No parallel_for may be running. */
MLCC_EXPORT void mlcc_threadpool_destroy(mlcc_threadpool *pool);

/* The pool as an mlcc_parallel (ctx the pool, max_threads its threads). One thread at a time may call its
 * parallel_for: a pool serves one model run at a time. */
MLCC_EXPORT mlcc_parallel mlcc_threadpool_parallel(mlcc_threadpool *pool);

/* The pool's parallel_for (ctx an mlcc_threadpool *). */
MLCC_EXPORT void mlcc_threadpool_parallel_for(void *ctx, void (*task)(void *args, size_t i), void *args, size_t n);

#endif /* MLCC_THREADPOOL_H */
