/* The runtime's pool for WebAssembly threads (targets with thread_pool = "wasm-workers"): NAME.mjs starts
 * Web Workers (worker_threads in Node), each instantiating NAME.wasm on the same shared memory with a stack
 * of its own, and each calls mlcc_wasm_pool_work, which runs tasks until mlcc_wasm_pool_stop. The thread
 * that calls NAME_run_parallel with mlcc_wasm_pool_parallel's struct publishes each step's tasks, takes
 * tasks itself, then waits for the ones workers hold.
 *
 * The job protocol is threadpool-job.h's, shared with the pthreads pool. Workers wait spinning for a while, then asleep in memory.atomic.wait32 on a 32-bit copy of the generation;
 * the caller notifies when one sleeps. The caller never sleeps: a browser's main thread may not block in
 * Atomics.wait (it traps there), so it spins, and only for tasks already running on a worker, never for a
 * worker to start one (it claims every task no worker has). */
#include <stdatomic.h>
#include <stdint.h>

#include "mlcc/parallel.h"
#include "threadpool-job.h"

#if !defined(__wasm__) || !defined(__wasm_atomics__)
#error "threadpool-wasm-workers.c needs WebAssembly with atomics (-matomics -mbulk-memory)"
#endif

#define EXPORT(name) __attribute__((export_name(name), visibility("default")))

/* Atomic loads a waiting worker spins before it sleeps (wasm has no clock without imports): about 100 us at
 * the 1 ns a load node 20 takes on an AMD EPYC (Zen 4), past the gap between two steps. */
#define SPIN_LOADS 100000u

/* Keeps the spin's loads: without it clang merges a loop of atomic loads that does nothing else into one,
 * and a worker slept right after each job (every step then paid a wake-up). */
#define SPIN_BARRIER() __asm__ __volatile__("" ::: "memory")

/* One pool per memory: it lives in the module's static data, which every instance shares. */
static struct {
    struct job job;
    _Atomic uint32_t generation;  /* JOB_GENERATION(job.state), 32 bits wide for memory.atomic.wait32 */
    _Atomic uint32_t sleepers;
    _Atomic uint32_t stop;
    _Atomic uint32_t worker_tasks;  /* tasks the workers ran: whether they take part */
} pool;

static void pool_parallel_for(void *ctx, void (*task)(void *args, size_t i), void *args, size_t n);

static mlcc_parallel parallel = {pool_parallel_for, NULL, 1u};

static void pool_parallel_for(void *ctx, void (*task)(void *args, size_t i), void *args, size_t n)
{
    (void)ctx;
    if (job_run_inline(parallel.max_threads, task, args, n)) return;
    atomic_store(&pool.generation, (uint32_t)job_publish(&pool.job, task, args, n));
    if (atomic_load(&pool.sleepers) != 0u)
        __builtin_wasm_memory_atomic_notify((int *)&pool.generation, UINT32_MAX);
    job_run_tasks(&pool.job, 0, NULL);
    while (!job_finished(&pool.job, n)) SPIN_BARRIER();  /* the tasks left are running on workers */
}

/* The pool as an mlcc_parallel for NAME_run_parallel, with `threads` threads (the caller and threads - 1
 * workers in mlcc_wasm_pool_work); 1 runs every task on the caller. */
EXPORT("mlcc_wasm_pool_parallel") const mlcc_parallel *mlcc_wasm_pool_parallel(unsigned threads)
{
    parallel.max_threads = threads == 0u ? 1u : threads;
    return &parallel;
}

/* A worker's loop: runs tasks of each new job until mlcc_wasm_pool_stop. */
EXPORT("mlcc_wasm_pool_work") void mlcc_wasm_pool_work(void)
{
    uint32_t seen = atomic_load(&pool.generation);
    while (!atomic_load(&pool.stop)) {
        for (unsigned spins = 0; spins < SPIN_LOADS && atomic_load(&pool.generation) == seen; ++spins) {
            SPIN_BARRIER();
            if (atomic_load_explicit(&pool.stop, memory_order_relaxed)) return;
        }
        if (atomic_load(&pool.generation) == seen) {
            atomic_fetch_add(&pool.sleepers, 1u);
            if (atomic_load(&pool.generation) == seen && !atomic_load(&pool.stop))
                __builtin_wasm_memory_atomic_wait32((int *)&pool.generation, (int)seen, -1);
            atomic_fetch_sub(&pool.sleepers, 1u);
            continue;
        }
        seen = atomic_load(&pool.generation);
        job_run_tasks(&pool.job, 1, &pool.worker_tasks);
    }
}

/* Tasks the workers have run since the module was loaded. */
EXPORT("mlcc_wasm_pool_worker_tasks") unsigned mlcc_wasm_pool_worker_tasks(void)
{
    return atomic_load_explicit(&pool.worker_tasks, memory_order_relaxed);
}

/* Makes every worker return from mlcc_wasm_pool_work (after the task it runs). */
EXPORT("mlcc_wasm_pool_stop") void mlcc_wasm_pool_stop(void)
{
    atomic_store(&pool.stop, 1u);
    __builtin_wasm_memory_atomic_notify((int *)&pool.generation, UINT32_MAX);
}
