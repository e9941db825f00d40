/* Parallel steps: NAME_run_parallel hands the caller's parallel-for to the kernels of large steps, which cut
 * their output into tasks (rows or columns of a product, output tiles, points of a transform). A task writes
 * only its own part of the output and its own stack: no two tasks share a workspace, and each output element
 * is computed by the same arithmetic in the same order whatever the number of threads, so the results are
 * bit-identical for any thread count. Small steps run inline on the calling thread. */
#ifndef MLCC_PARALLEL_H
#define MLCC_PARALLEL_H

#include <stddef.h>

/* mlcc_parallel: begin (generated headers carry this block as it is) */
#ifndef MLCC_PARALLEL_DEFINED
#define MLCC_PARALLEL_DEFINED
/* A parallel-for the caller provides (its own thread pool, an RTOS's tasks, or the runtime's optional
 * pthreads pool, mlcc/threadpool.h). parallel_for(ctx, task, args, n) must call task(args, i) once for every
 * i < n, on any of its threads and in any order, and return when all n calls have returned; the calling
 * thread may run some of them. Tasks never call parallel_for themselves, take no locks and do not
 * allocate. max_threads: how many threads run tasks at once (a large step is cut into a few tasks per
 * thread); 0 or 1, or a NULL parallel_for, runs everything on the calling thread. */
typedef struct mlcc_parallel {
    void (*parallel_for)(void *ctx, void (*task)(void *args, size_t i), void *args, size_t n);
    void *ctx;
    unsigned max_threads;
} mlcc_parallel;
#endif
/* mlcc_parallel: end */

/* Multiply-adds (or element operations) below which a step runs inline: a dispatch to a pool costs
 * microseconds, about 100,000 multiply-adds of one core. */
#ifndef MLCC_PARALLEL_MIN_WORK
#define MLCC_PARALLEL_MIN_WORK 200000.0f
#endif

/* Tasks per thread a large step is cut into: a thread that the OS preempts while it holds a task delays the
 * step by that task only, the others' threads taking the rest. */
#ifndef MLCC_PARALLEL_TASKS_PER_THREAD
#define MLCC_PARALLEL_TASKS_PER_THREAD 4u
#endif

/* How many tasks to cut `units` independent units of `work` multiply-adds into: 1 (run inline) without a
 * parallel-for, on one thread, or for small work; else up to MLCC_PARALLEL_TASKS_PER_THREAD per thread,
 * each at least MLCC_PARALLEL_MIN_WORK / 2, a multiple of the threads (3 equal tasks on 2 threads take as
 * long as 4: one thread runs two), never more than the units. */
static inline size_t mlcc_parallel_tasks(const mlcc_parallel *parallel, size_t units, float work)
{
    if (parallel == NULL || parallel->parallel_for == NULL || parallel->max_threads < 2u
        || work < MLCC_PARALLEL_MIN_WORK)
        return 1u;
    const size_t threads = parallel->max_threads;
    size_t tasks = threads * MLCC_PARALLEL_TASKS_PER_THREAD;
    const float most = work / (0.5f * MLCC_PARALLEL_MIN_WORK);
    if ((float)tasks > most) tasks = (size_t)most;
    tasks = tasks < threads ? threads : tasks / threads * threads;
    return units < tasks ? (units == 0 ? 1u : units) : tasks;
}

/* Units [begin, end) of task i of `tasks` over `units`: consecutive, each within one unit of the others. */
static inline size_t mlcc_parallel_begin(size_t units, size_t tasks, size_t i)
{
    const size_t extra = units % tasks;
    return units / tasks * i + (i < extra ? i : extra);
}

/* The first unit of task j of the `count` tasks over `units` (at least `count`) of one thread's share, their
 * sizes halving in the order the share's thread claims them (`shrinking`: j 0 first, else j count - 1 first),
 * each at least one unit: a share of 4 tasks is 8/15, 4/15, 2/15 and 1/15 of it. A thread that ends its
 * share early takes the other's last tasks, the smallest, so two threads a few percent apart in speed (a
 * core reading the other's lines, a step's uneven rows) still end together: with even tasks the faster
 * waits up to a whole task, an eighth of the step. More than 8 tasks a share (or fewer units than tasks)
 * are cut evenly. */
static inline size_t mlcc_parallel_guided_begin(size_t units, size_t count, size_t j, int shrinking)
{
    if (count > 8u || units < count) return mlcc_parallel_begin(units, count, j);
    if (!shrinking) return units - mlcc_parallel_guided_begin(units, count, count - j, 1);  /* the mirror image */
    const size_t total = ((size_t)1 << count) - 1u;
    const size_t before = total + 1u - ((size_t)1 << (count - j));  /* the weights of tasks [0, j) */
    return j + ((units - count) * 2u * before + total) / (2u * total);  /* rounded: an extra unit goes first */
}

/* The first unit of task i when `threads` threads claim `tasks` tasks over `units`: where the tasks are a
 * multiple of the threads, the units are cut into one even share per thread first and each share into its
 * tasks, so the caller (claiming from the front) and the workers (from the back) meet with even work; the
 * tasks of a share shrink towards where its thread meets the others (mlcc_parallel_guided_begin): the
 * caller's share towards its end, the workers' towards their beginnings. Cut evenly in one go, a
 * remainder's extra units all fall on the front tasks: 14 rows in 8 tasks are 2,2,2,2 | 2,2,1,1 (8 rows
 * against 6, a step 15% slower than 7 and 7). */
static inline size_t mlcc_parallel_share_begin(size_t units, size_t tasks, size_t threads, size_t i)
{
    if (threads < 2u || tasks % threads != 0u || i >= tasks) return mlcc_parallel_begin(units, tasks, i);
    const size_t per_share = tasks / threads, share = i / per_share;
    const size_t first = mlcc_parallel_begin(units, threads, share);
    return first + mlcc_parallel_guided_begin(mlcc_parallel_begin(units, threads, share + 1u) - first, per_share,
                                              i % per_share, share == 0u);
}

/* body(args, begin, end) over every unit of [0, units), cut into `tasks` ranges (mlcc_parallel_tasks) by
 * per-thread shares (mlcc_parallel_share_begin), inline when that is 1. */
struct mlcc_parallel_range_job {
    void (*body)(void *args, size_t begin, size_t end);
    void *args;
    size_t units, tasks, threads;
};

static inline void mlcc_parallel_range_task(void *job_, size_t i)
{
    const struct mlcc_parallel_range_job *job = (const struct mlcc_parallel_range_job *)job_;
    job->body(job->args, mlcc_parallel_share_begin(job->units, job->tasks, job->threads, i),
              mlcc_parallel_share_begin(job->units, job->tasks, job->threads, i + 1u));
}

static inline void mlcc_parallel_ranges(const mlcc_parallel *parallel, size_t tasks, size_t units,
                                        void (*body)(void *args, size_t begin, size_t end), void *args)
{
    if (tasks <= 1u || units <= 1u) {
        body(args, 0u, units);
        return;
    }
    struct mlcc_parallel_range_job job = {body, args, units, tasks, parallel->max_threads};
    parallel->parallel_for(parallel->ctx, mlcc_parallel_range_task, &job, tasks);
}

#endif /* MLCC_PARALLEL_H */
