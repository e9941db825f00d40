/* The job protocol both runtime pools share (threadpool-pthreads.c, threadpool-wasm-workers.c); each pool
 * keeps only how its threads wait for a job and how the caller waits for the last tasks.
 *
 * One job at a time: its task and arguments, and a 64-bit state word holding the job's generation and the
 * tasks not yet claimed, [front, back). The caller claims from the front and the workers from the back, each
 * by a compare-and-swap of the whole word, so a thread that wakes late finds the job's tasks all claimed and
 * claims nothing; the task and arguments read after a claim are the claimed job's (the caller publishes a
 * new job only after every task of the last one has finished). The two ends keep a step's first tasks (its
 * first output rows, pixels or columns) on the caller and its last on the workers from one step to the
 * next, so the rows a thread writes are, mostly, the rows it reads in the next step, still in its core's
 * cache; taken in turn from one end, every other task moved between cores at every step. */
#ifndef MLCC_THREADPOOL_JOB_H
#define MLCC_THREADPOOL_JOB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define JOB_INDEX_BITS 20u
#define JOB_INDEX_MASK ((UINT64_C(1) << JOB_INDEX_BITS) - 1u)
#define JOB_MAX_TASKS JOB_INDEX_MASK
#define JOB_GENERATION(s) ((s) >> (2u * JOB_INDEX_BITS))
#define JOB_BACK(s) (((s) >> JOB_INDEX_BITS) & JOB_INDEX_MASK)
#define JOB_FRONT(s) ((s) & JOB_INDEX_MASK)

typedef void (*job_task_fn)(void *args, size_t i);

struct job {
    _Atomic uint64_t state;
    _Atomic(job_task_fn) task;
    _Atomic(void *) args;
    _Atomic uint32_t done;  /* tasks of the current job that have returned */
};

static inline void job_init(struct job *job)
{
    atomic_init(&job->state, 0u);
    atomic_init(&job->task, NULL);
    atomic_init(&job->args, NULL);
    atomic_init(&job->done, 0u);
}

/* The current job's generation: a thread waiting for work waits for it to change. */
static inline uint64_t job_generation(struct job *job)
{
    return JOB_GENERATION(atomic_load(&job->state));
}

/* Whether n tasks run on the calling thread alone (one thread, fewer than two tasks, or more than the state
 * word counts); if so, runs them. */
static inline int job_run_inline(unsigned threads, job_task_fn task, void *args, size_t n)
{
    if (threads >= 2u && n >= 2u && n <= JOB_MAX_TASKS) return 0;
    for (size_t i = 0; i < n; ++i) task(args, i);
    return 1;
}

/* Makes n tasks of `task` the current job (the last job's tasks have all returned); its generation. */
static inline uint64_t job_publish(struct job *job, job_task_fn task, void *args, size_t n)
{
    atomic_store_explicit(&job->task, task, memory_order_relaxed);
    atomic_store_explicit(&job->args, args, memory_order_relaxed);
    atomic_store(&job->done, 0u);
    const uint64_t generation = job_generation(job) + 1u;
    atomic_store(&job->state, generation << (2u * JOB_INDEX_BITS) | (uint64_t)n << JOB_INDEX_BITS);
    return generation;
}

/* Claims and runs tasks of the current job until none is left unclaimed, from the front (the caller) or the
 * back (workers), counting each in `ran` (if not NULL) before it counts as done. */
static inline void job_run_tasks(struct job *job, int from_back, _Atomic uint32_t *ran)
{
    uint64_t s = atomic_load(&job->state);
    while (JOB_FRONT(s) < JOB_BACK(s)) {
        const uint64_t claimed = from_back ? s - (UINT64_C(1) << JOB_INDEX_BITS) : s + 1u;
        if (!atomic_compare_exchange_weak(&job->state, &s, claimed)) continue;
        const size_t i = (size_t)(from_back ? JOB_BACK(s) - 1u : JOB_FRONT(s));
        const job_task_fn task = atomic_load_explicit(&job->task, memory_order_relaxed);
        task(atomic_load_explicit(&job->args, memory_order_relaxed), i);
        if (ran != NULL) atomic_fetch_add_explicit(ran, 1u, memory_order_relaxed);
        atomic_fetch_add(&job->done, 1u);
        s = atomic_load(&job->state);
    }
}

/* Whether every task of the current job has returned. */
static inline int job_finished(struct job *job, size_t n)
{
    return atomic_load(&job->done) >= n;
}

#endif /* MLCC_THREADPOOL_JOB_H */
