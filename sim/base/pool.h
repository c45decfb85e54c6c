/*
 * pool.h -- the one worker pool: n tasks over k threads, the calling
 * thread among them, and the number of cores this process may use.
 *
 * A pool keeps its threads between batches (the trainer runs one batch
 * per inner step), so starting a batch costs a wake-up, not a thread.
 * Tasks are handed out in index order from a shared counter; what a task
 * computes must not depend on which thread runs it, and anything that
 * combines results does so after the batch, in index order: results are
 * then the same for every thread count.
 */
#ifndef DILOSIM_POOL_H
#define DILOSIM_POOL_H

#include <stddef.h>
#include <stdint.h>

#define POOL_MAX_THREADS 1024

typedef struct pool pool;

/* The CPUs this process may run on (its affinity mask, as taskset or a
 * batch system's cgroup sets it), at least 1, at most POOL_MAX_THREADS;
 * the online count when the mask cannot be read. */
int pool_cpu_count(void);

/* A pool of `threads` workers in all (threads - 1 new ones; <= 0 means
 * pool_cpu_count()).  Fewer threads are started when the system refuses
 * more (pool_threads says how many); NULL only when out of memory. */
pool *pool_new(int threads);

/* Joins the threads and frees the pool; NULL is allowed. */
void pool_free(pool *p);

/* Workers of the pool, the calling thread included. */
int pool_threads(const pool *p);

/* A task: index i of the batch.  Returns 0, or a non-zero code (with a
 * message of at most errlen bytes in err) that stops the batch. */
typedef int (*pool_task)(void *ctx, int64_t i, char *err, size_t errlen);

/* Runs task(ctx, i) for i = 0..n-1 on the pool and the calling thread
 * and returns when every started task is done.  After a task fails no
 * further index is handed out; the result is the code and message of the
 * LOWEST failed index (every lower index was handed out before it, so
 * this does not depend on the thread count), or 0.  Call from one thread
 * at a time. */
int pool_run(pool *p, int64_t n, pool_task task, void *ctx, char *err,
             size_t errlen);

/* pool_run on a pool of `threads` (at most n) made for the one batch. */
int pool_for(int threads, int64_t n, pool_task task, void *ctx, char *err,
             size_t errlen);

#endif
