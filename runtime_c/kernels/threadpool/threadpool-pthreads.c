/* mlcc/threadpool.h on POSIX threads and C11 atomics, on the job protocol of threadpool-job.h. Workers wait
 * for a new generation spinning for 100 us (a model's steps follow each other within microseconds), then
 * asleep on a condition; the caller, after taking tasks itself, spins for the workers' last ones. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "mlcc/threadpool.h"
#include "threadpool-job.h"

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() ((void)0)
#endif

/* How long a waiting worker spins before it sleeps, and the caller before it yields (nanoseconds). */
#define SPIN_NS 100000u
#define CALLER_SPIN_NS 20000u

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct mlcc_threadpool {
    unsigned threads;
    pthread_t *workers;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    struct job job;
    _Atomic unsigned sleepers;
    _Atomic int stop;
};

static void *worker(void *pool_)
{
    struct mlcc_threadpool *pool = (struct mlcc_threadpool *)pool_;
    uint64_t seen = 0;
    for (;;) {
        const uint64_t until = now_ns() + SPIN_NS;
        for (unsigned spins = 1; job_generation(&pool->job) == seen && !atomic_load(&pool->stop); ++spins) {
            CPU_RELAX();
            if (spins % 64u != 0) continue;
            if (now_ns() > until) break;
            /* a thread waiting for this core (the caller itself, woken onto it on a busy machine) runs first */
            sched_yield();
        }
        if (job_generation(&pool->job) == seen && !atomic_load(&pool->stop)) {
            pthread_mutex_lock(&pool->lock);
            atomic_fetch_add(&pool->sleepers, 1u);
            while (job_generation(&pool->job) == seen && !atomic_load(&pool->stop))
                pthread_cond_wait(&pool->wake, &pool->lock);
            atomic_fetch_sub(&pool->sleepers, 1u);
            pthread_mutex_unlock(&pool->lock);
        }
        if (atomic_load(&pool->stop)) return NULL;
        seen = job_generation(&pool->job);
        job_run_tasks(&pool->job, 1, NULL);
    }
}

static void wake_sleepers(struct mlcc_threadpool *pool)
{
    if (atomic_load(&pool->sleepers) == 0u) return;
    pthread_mutex_lock(&pool->lock);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
}

void mlcc_threadpool_parallel_for(void *ctx, void (*task)(void *args, size_t i), void *args, size_t n)
{
    struct mlcc_threadpool *pool = (struct mlcc_threadpool *)ctx;
    if (job_run_inline(pool == NULL ? 1u : pool->threads, task, args, n)) return;
    job_publish(&pool->job, task, args, n);
    wake_sleepers(pool);
    job_run_tasks(&pool->job, 0, NULL);
    const uint64_t until = now_ns() + CALLER_SPIN_NS;
    for (unsigned spins = 1; !job_finished(&pool->job, n); ++spins) {
        if (spins % 64u != 0 || now_ns() < until) CPU_RELAX();
        else sched_yield();  /* a worker was preempted mid-task: let it finish */
    }
}

mlcc_threadpool *mlcc_threadpool_create(unsigned threads)
{
    if (threads == 0u) return NULL;
    struct mlcc_threadpool *pool = (struct mlcc_threadpool *)calloc(1, sizeof *pool);
    if (pool == NULL) return NULL;
    pool->threads = threads;
    job_init(&pool->job);
    atomic_init(&pool->sleepers, 0u);
    atomic_init(&pool->stop, 0);
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pool->workers = (pthread_t *)calloc(threads, sizeof(pthread_t));
    if (pool->workers == NULL) {
        mlcc_threadpool_destroy(pool);
        return NULL;
    }
    for (unsigned i = 1; i < threads; ++i) {
        if (pthread_create(&pool->workers[i], NULL, worker, pool) != 0) {
            pool->threads = i;  /* join the ones started */
            mlcc_threadpool_destroy(pool);
            return NULL;
        }
    }
    return pool;
}

void mlcc_threadpool_destroy(mlcc_threadpool *pool)
{
    if (pool == NULL) return;
    atomic_store(&pool->stop, 1);
    pthread_mutex_lock(&pool->lock);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    if (pool->workers != NULL)
        for (unsigned i = 1; i < pool->threads; ++i) pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->wake);
    pthread_mutex_destroy(&pool->lock);
    free(pool->workers);
    free(pool);
}

mlcc_parallel mlcc_threadpool_parallel(mlcc_threadpool *pool)
{
    mlcc_parallel parallel = {mlcc_threadpool_parallel_for, pool, pool == NULL ? 1u : pool->threads};
    return parallel;
}
