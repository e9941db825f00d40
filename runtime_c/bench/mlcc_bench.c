/* mlcc_bench.c: the timing harness of `mlcc bench`. It is never part of a model's product build.
 *
 * mlcc_bench_time calls a model's NAME_run_v through a pointer and stores each call's nanoseconds;
 * mlcc_bench_time_parallel the same for NAME_run_parallel with a thread pool.
 * Linked with the model's sources and -DMLCC_BENCH_RUN_V=NAME_run_v, mlcc_bench_linked calls it directly
 * (wasm32, where Python cannot hand over a function pointer). With -DMLCC_PROFILE -DMLCC_PROFILE_STEPS=N
 * on NAME.c and on this file, it also defines the per-step hooks NAME.c calls and records every step of
 * every timed call, on the clock mlcc_bench_step_clock sets (monotonic unless told; the caller's choice is
 * mlcc/bench.py's step_clock). Calls are timed on CLOCK_MONOTONIC (WASI's monotonic clock on wasm32);
 * mlcc_bench_linked also reads the calling thread's CPU time, which a shared machine's other load barely changes. With
 * -DMLCC_BENCH_RUN_PARALLEL=NAME_run_parallel (hosts with the runtime's pool), mlcc_bench_linked_parallel
 * does the same on a pool of N threads: a step's time is then the calling thread's, from its start to its
 * last task's end; profiled, its parallel-for is wrapped to count each step's hand-offs and tasks and each
 * thread's time in them (mlcc_bench_profile_tasks), and mlcc_bench_linked_serial runs the same tasks one by
 * one on the calling thread, timing each.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <string.h>
#include <time.h>

#define MLCC_BENCH_API __attribute__((visibility("default")))

typedef int (*mlcc_run_v_fn)(const void *const *inputs, void *const *outputs, void *arena);

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__wasm__)
/* WASI has no CPU clock: the runner gives its thread's, the one the module runs on. */
__attribute__((import_module("mlcc_bench"), import_name("thread_cpu_ns"))) uint64_t mlcc_bench_thread_cpu_ns(void);
#else
static uint64_t mlcc_bench_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Runs `warmup` untimed calls, then `repeat` timed ones into ns[repeat] and, unless NULL, their thread CPU
 * time into cpu_ns[repeat]; returns the last call's status (a call with NULL arguments returns at once: that
 * measures the harness's own overhead). */
MLCC_BENCH_API int mlcc_bench_time(mlcc_run_v_fn run, const void *const *inputs, void *const *outputs,
                                   void *arena, int warmup, int repeat, uint64_t *ns, uint64_t *cpu_ns)
{
    int status = 0;
    for (int i = 0; i < warmup; ++i) {
        status = run(inputs, outputs, arena);
    }
    for (int i = 0; i < repeat; ++i) {
        const uint64_t cpu_start = cpu_ns == NULL ? 0 : mlcc_bench_thread_cpu_ns();
        const uint64_t start = now_ns();
        status = run(inputs, outputs, arena);
        ns[i] = now_ns() - start;
        if (cpu_ns != NULL) cpu_ns[i] = mlcc_bench_thread_cpu_ns() - cpu_start;
    }
    return status;
}

typedef int (*mlcc_run_parallel_fn)(const void *const *inputs, void *const *outputs, void *arena,
                                    const void *parallel);

static uint64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* mlcc_bench_time for NAME_run_parallel with the given mlcc_parallel; cpu_ns is the process's CPU time (every
 * thread's, the pool's waiting included), not the calling thread's. */
MLCC_BENCH_API int mlcc_bench_time_parallel(mlcc_run_parallel_fn run, const void *const *inputs,
                                            void *const *outputs, void *arena, const void *parallel, int warmup,
                                            int repeat, uint64_t *ns, uint64_t *cpu_ns)
{
    int status = 0;
    for (int i = 0; i < warmup; ++i) {
        status = run(inputs, outputs, arena, parallel);
    }
    for (int i = 0; i < repeat; ++i) {
        const uint64_t cpu_start = cpu_ns == NULL ? 0 : process_cpu_ns();
        const uint64_t start = now_ns();
        status = run(inputs, outputs, arena, parallel);
        ns[i] = now_ns() - start;
        if (cpu_ns != NULL) cpu_ns[i] = process_cpu_ns() - cpu_start;
    }
    return status;
}
#endif

#if defined(MLCC_PROFILE)
static uint64_t step_ns[MLCC_PROFILE_STEPS];
static uint64_t step_start;
static int current_step;
/* The clock the step hooks read (the caller picks it: mlcc_bench_step_clock) and what an empty step reads on it */
static uint64_t (*step_clock)(void) = now_ns;
static uint64_t step_clock_cost;

void mlcc_profile_begin(int step)
{
    current_step = step;  /* steps never nest */
    step_start = step_clock();
}

void mlcc_profile_end(int step)
{
    const uint64_t elapsed = step_clock() - step_start;
    step_ns[step] += elapsed > step_clock_cost ? elapsed - step_clock_cost : 0u;
}

/* The step hooks' clock: the calling thread's CPU time (thread_cpu != 0; a system call, 1-2 us a read on a
 * VM, but what other load on a shared machine barely changes) or monotonic (wall) time; then the median
 * reading of an empty step on it, which each step's time is taken off from then on (returned). */
MLCC_BENCH_API uint64_t mlcc_bench_step_clock(int thread_cpu)
{
    enum { SAMPLES = 63 };
    uint64_t empty[SAMPLES];
    step_clock = thread_cpu ? mlcc_bench_thread_cpu_ns : now_ns;
    for (int i = 0; i < SAMPLES; ++i) {
        const uint64_t start = step_clock();
        empty[i] = step_clock() - start;
    }
    for (int i = 1; i < SAMPLES; ++i) {  /* insertion sort: a few dozen values */
        const uint64_t v = empty[i];
        int j = i;
        for (; j > 0 && empty[j - 1] > v; --j) empty[j] = empty[j - 1];
        empty[j] = v;
    }
    step_clock_cost = empty[SAMPLES / 2];
    return step_clock_cost;
}
#endif

#if defined(MLCC_BENCH_RUN_V)
int MLCC_BENCH_RUN_V(const void *const *inputs, void *const *outputs, void *arena);

/* `repeat` timed calls of the model linked in: total_ns[repeat] per call, cpu_ns[repeat] its thread CPU time
 * (unless NULL) and, when profiling, steps_ns[repeat][MLCC_PROFILE_STEPS] per step. Returns the last call's
 * status. */
MLCC_BENCH_API int mlcc_bench_linked(const void *const *inputs, void *const *outputs, void *arena, int repeat,
                                     uint64_t *total_ns, uint64_t *cpu_ns, uint64_t *steps_ns)
{
    int status = 0;
    for (int r = 0; r < repeat; ++r) {
#if defined(MLCC_PROFILE)
        memset(step_ns, 0, sizeof step_ns);
#endif
        const uint64_t cpu_start = cpu_ns == NULL ? 0 : mlcc_bench_thread_cpu_ns();
        const uint64_t start = now_ns();
        status = MLCC_BENCH_RUN_V(inputs, outputs, arena);
        total_ns[r] = now_ns() - start;
        if (cpu_ns != NULL) cpu_ns[r] = mlcc_bench_thread_cpu_ns() - cpu_start;
#if defined(MLCC_PROFILE)
        memcpy(steps_ns + (size_t)r * MLCC_PROFILE_STEPS, step_ns, sizeof step_ns);
#else
        (void)steps_ns;
#endif
    }
    return status;
}
#endif

#if defined(MLCC_BENCH_RUN_PARALLEL)
#include "mlcc/threadpool.h"

int MLCC_BENCH_RUN_PARALLEL(const void *const *inputs, void *const *outputs, void *arena, const mlcc_parallel *parallel);

#if defined(MLCC_PROFILE)
#include <stdatomic.h>

/* What each step's parallel-for calls cost in one call of the model: hand-offs (parallel_for calls), tasks,
 * and each thread's time inside tasks (slot 0 the caller's), so work, imbalance between threads and what is
 * neither (hand-off, waiting for a thread) can be told apart. Monotonic time, not the thread's CPU time: that
 * clock is a system call (1-2 us a read here), which would add more than the smaller tasks cost. Threads past
 * the eighth share slots (a pool that large is beyond what this tabulates). */
#define PROFILE_SLOTS 8
static uint64_t step_calls[MLCC_PROFILE_STEPS], step_tasks[MLCC_PROFILE_STEPS];
static uint64_t step_busy_ns[MLCC_PROFILE_STEPS][PROFILE_SLOTS];
static mlcc_parallel pool_parallel;
static _Atomic unsigned next_slot;
static _Thread_local int thread_slot = -1;

struct profiled_job {
    void (*task)(void *args, size_t i);
    void *args;
    int step;
};

static void profiled_task(void *job_, size_t i)
{
    const struct profiled_job *job = (const struct profiled_job *)job_;
    if (thread_slot < 0) thread_slot = (int)(atomic_fetch_add(&next_slot, 1u) % PROFILE_SLOTS);
    const uint64_t start = now_ns();
    job->task(job->args, i);
    step_busy_ns[job->step][thread_slot] += now_ns() - start;  /* only this thread's slot */
}

static void profiled_parallel_for(void *ctx, void (*task)(void *args, size_t i), void *args, size_t n)
{
    const mlcc_parallel *inner = (const mlcc_parallel *)ctx;
    struct profiled_job job = {task, args, current_step};
    step_calls[current_step] += 1u;
    step_tasks[current_step] += n;
    inner->parallel_for(inner->ctx, profiled_task, &job, n);
}

/* Serial: the steps cut into tasks as for N threads, every task run in turn on the calling thread and timed
 * alone, each step's first SERIAL_TASKS in serial_ns (what a schedule of N threads is simulated from). */
#define SERIAL_TASKS 64
static uint64_t serial_ns[MLCC_PROFILE_STEPS][SERIAL_TASKS];
static uint64_t *out_serial_ns;

static void serial_parallel_for(void *ctx, void (*task)(void *args, size_t i), void *args, size_t n)
{
    (void)ctx;
    const uint64_t first = step_tasks[current_step];
    step_calls[current_step] += 1u;
    step_tasks[current_step] += n;
    for (size_t i = 0; i < n; ++i) {
        const uint64_t start = now_ns();
        task(args, i);
        const uint64_t ns = now_ns() - start;
        step_busy_ns[current_step][0] += ns;
        if (first + i < SERIAL_TASKS) serial_ns[current_step][first + i] = ns;
    }
}

static uint64_t *out_calls, *out_tasks, *out_busy_ns;

/* Where mlcc_bench_linked_parallel stores each timed call's counts: calls[repeat][steps],
 * tasks[repeat][steps], busy_ns[repeat][steps][PROFILE_SLOTS] (returned); NULLs store nothing. */
MLCC_BENCH_API int mlcc_bench_profile_tasks(uint64_t *calls, uint64_t *tasks, uint64_t *busy_ns)
{
    out_calls = calls;
    out_tasks = tasks;
    out_busy_ns = busy_ns;
    return PROFILE_SLOTS;
}

static void store_tasks(int r)
{
    if (out_calls != NULL && r >= 0) {
        memcpy(out_calls + (size_t)r * MLCC_PROFILE_STEPS, step_calls, sizeof step_calls);
        memcpy(out_tasks + (size_t)r * MLCC_PROFILE_STEPS, step_tasks, sizeof step_tasks);
        memcpy(out_busy_ns + (size_t)r * MLCC_PROFILE_STEPS * PROFILE_SLOTS, step_busy_ns, sizeof step_busy_ns);
    }
    if (out_serial_ns != NULL && r >= 0)
        memcpy(out_serial_ns + (size_t)r * MLCC_PROFILE_STEPS * SERIAL_TASKS, serial_ns, sizeof serial_ns);
    memset(step_calls, 0, sizeof step_calls);
    memset(step_tasks, 0, sizeof step_tasks);
    memset(step_busy_ns, 0, sizeof step_busy_ns);
    memset(serial_ns, 0, sizeof serial_ns);
}

/* mlcc_bench_linked_parallel with its steps cut as for `threads` threads but every task run on the calling
 * thread, each one's ns stored per call in task_ns[repeat][steps][SERIAL_TASKS], the counts where
 * mlcc_bench_profile_tasks says (slot 0 only); the last call's status. */
MLCC_BENCH_API int mlcc_bench_linked_serial(const void *const *inputs, void *const *outputs, void *arena,
                                            unsigned threads, int repeat, uint64_t *total_ns, uint64_t *steps_ns,
                                            uint64_t *task_ns)
{
    const mlcc_parallel parallel = {serial_parallel_for, NULL, threads};
    int status = 0;
    out_serial_ns = task_ns;
    store_tasks(-1);
    for (int r = 0; r < repeat; ++r) {
        memset(step_ns, 0, sizeof step_ns);
        const uint64_t start = now_ns();
        status = MLCC_BENCH_RUN_PARALLEL(inputs, outputs, arena, &parallel);
        total_ns[r] = now_ns() - start;
        memcpy(steps_ns + (size_t)r * MLCC_PROFILE_STEPS, step_ns, sizeof step_ns);
        store_tasks(r);
    }
    out_serial_ns = NULL;
    return status;
}
#endif

/* mlcc_bench_linked on the runtime's pool of `threads` threads (cpu_ns: the process's CPU time); -1 when the
 * pool cannot be started. */
MLCC_BENCH_API int mlcc_bench_linked_parallel(const void *const *inputs, void *const *outputs, void *arena,
                                              unsigned threads, int repeat, uint64_t *total_ns, uint64_t *cpu_ns,
                                              uint64_t *steps_ns)
{
    mlcc_threadpool *pool = mlcc_threadpool_create(threads);
    if (pool == NULL) return -1;
#if defined(MLCC_PROFILE)
    pool_parallel = mlcc_threadpool_parallel(pool);
    atomic_store(&next_slot, 1u);
    thread_slot = 0;  /* the caller's; workers take theirs at their first task */
    const mlcc_parallel parallel = {profiled_parallel_for, &pool_parallel, pool_parallel.max_threads};
    store_tasks(-1);  /* clears */
#else
    const mlcc_parallel parallel = mlcc_threadpool_parallel(pool);
#endif
    int status = 0;
    for (int r = 0; r < repeat; ++r) {
#if defined(MLCC_PROFILE)
        memset(step_ns, 0, sizeof step_ns);
#endif
        const uint64_t cpu_start = cpu_ns == NULL ? 0 : process_cpu_ns();
        const uint64_t start = now_ns();
        status = MLCC_BENCH_RUN_PARALLEL(inputs, outputs, arena, &parallel);
        total_ns[r] = now_ns() - start;
        if (cpu_ns != NULL) cpu_ns[r] = process_cpu_ns() - cpu_start;
#if defined(MLCC_PROFILE)
        memcpy(steps_ns + (size_t)r * MLCC_PROFILE_STEPS, step_ns, sizeof step_ns);
        store_tasks(r);
#else
        (void)steps_ns;
#endif
    }
    mlcc_threadpool_destroy(pool);
    return status;
}
#endif
