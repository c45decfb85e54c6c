/*
 * pool.c -- a persistent worker pool over pthreads and the affinity core
 * count (see pool.h).
 *
 * One mutex guards the batch: the next index, the count of tasks still
 * running, the lowest failure.  Threads sleep on `go` between batches and
 * the caller waits on `done`; a generation counter tells a woken thread
 * that a new batch has started.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "sim/base/pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TASK_ERR_MAX 2048

struct pool {
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    pthread_t *th;
    int started;  /* threads created (the caller is not one) */
    unsigned gen; /* batch generation */
    int quit;
    /* the batch */
    pool_task task;
    void *ctx;
    int64_t n, next, failed_i;
    int running; /* threads inside the batch */
    int failed_rc;
    char *err;
    size_t errlen;
};

int pool_cpu_count(void) {
    cpu_set_t set;
    long n = 0;
#ifndef __EMSCRIPTEN__ /* WebAssembly (sim/wasm) has no affinity mask */
    if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
#else
    (void)set;
#endif
    if (n < 1) n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > POOL_MAX_THREADS ? POOL_MAX_THREADS : (int)n;
}

/* Takes and runs tasks of the current batch; called with mu held,
 * returns with mu held. */
static void work(pool *p) {
    char msg[TASK_ERR_MAX];
    while (p->next < p->n && p->failed_i == p->n) {
        int64_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        msg[0] = 0;
        int rc = p->task(p->ctx, i, msg, sizeof msg);
        pthread_mutex_lock(&p->mu);
        if (rc && i < p->failed_i) {
            p->failed_i = i;
            p->failed_rc = rc;
            if (p->errlen) snprintf(p->err, p->errlen, "%s", msg);
        }
    }
}

static void *thread_main(void *arg) {
    pool *p = arg;
    pthread_mutex_lock(&p->mu);
    /* Threads are made by pool_new, before any batch (gen 0): a batch
     * started before this thread first runs is still one to join. */
    unsigned seen = 0;
    for (;;) {
        while (!p->quit && p->gen == seen) pthread_cond_wait(&p->go, &p->mu);
        if (p->quit) break;
        seen = p->gen;
        p->running++;
        work(p);
        if (--p->running == 0) pthread_cond_broadcast(&p->done);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

pool *pool_new(int threads) {
    if (threads <= 0) threads = pool_cpu_count();
    if (threads > POOL_MAX_THREADS) threads = POOL_MAX_THREADS;
    pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->th = calloc((size_t)threads, sizeof *p->th);
    if (!p->th || pthread_mutex_init(&p->mu, NULL)) {
        free(p->th);
        free(p);
        return NULL;
    }
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    /* Workers inherit a mask that blocks the termination signals, so a
     * handler (sim/out/outfile's temp-file cleanup) runs on the threads that
     * own the state it reads, never on a worker. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    while (p->started < threads - 1 &&
           !pthread_create(&p->th[p->started], NULL, thread_main, p))
        p->started++;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return p;
}

void pool_free(pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = 1;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->started; i++) pthread_join(p->th[i], NULL);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    pthread_mutex_destroy(&p->mu);
    free(p->th);
    free(p);
}

int pool_threads(const pool *p) {
    return p->started + 1;
}

int pool_run(pool *p, int64_t n, pool_task task, void *ctx, char *err,
             size_t errlen) {
    if (n <= 0) return 0;
    pthread_mutex_lock(&p->mu);
    p->task = task;
    p->ctx = ctx;
    p->n = n;
    p->next = 0;
    p->failed_i = n;
    p->failed_rc = 0;
    p->err = err;
    p->errlen = errlen;
    if (p->started && n > 1) {
        p->gen++;
        pthread_cond_broadcast(&p->go);
    }
    p->running++;
    work(p);
    p->running--;
    while (p->running > 0) pthread_cond_wait(&p->done, &p->mu);
    int rc = p->failed_rc;
    p->task = NULL;
    pthread_mutex_unlock(&p->mu);
    return rc;
}

int pool_for(int threads, int64_t n, pool_task task, void *ctx, char *err,
             size_t errlen) {
    if (threads <= 0) threads = pool_cpu_count();
    if (n < threads) threads = n < 1 ? 1 : (int)n;
    pool *p = pool_new(threads);
    if (!p) { /* out of memory for threads: run here */
        pool one = {.task = task,
                    .ctx = ctx,
                    .n = n,
                    .failed_i = n,
                    .err = err,
                    .errlen = errlen};
        pthread_mutex_init(&one.mu, NULL);
        pthread_mutex_lock(&one.mu);
        work(&one);
        pthread_mutex_unlock(&one.mu);
        pthread_mutex_destroy(&one.mu);
        return one.failed_rc;
    }
    int rc = pool_run(p, n, task, ctx, err, errlen);
    pool_free(p);
    return rc;
}
