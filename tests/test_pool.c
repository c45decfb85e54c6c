/*
 * test_pool.c -- the worker pool: every index run once whatever the
 * thread count, the lowest failure reported, batches on a kept pool, and
 * the core count taken from the affinity mask.
 */
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/base/pool.h"
#include "check_main.h"

typedef struct {
    int *hits;
    int64_t fail_from; /* indices >= this fail (their index as message) */
} job;

static int task(void *ctx, int64_t i, char *err, size_t errlen) {
    job *j = ctx;
    __atomic_add_fetch(&j->hits[i], 1, __ATOMIC_RELAXED);
    if (i >= j->fail_from) {
        snprintf(err, errlen, "index %lld", (long long)i);
        return 7;
    }
    return 0;
}

START_TEST(test_every_index_once) {
    for (int threads = 1; threads <= 8; threads *= 2) {
        int hits[1000] = {0};
        job j = {hits, 1000};
        char err[64] = "";
        ck_assert_int_eq(pool_for(threads, 1000, task, &j, err, sizeof err), 0);
        for (int i = 0; i < 1000; i++) ck_assert_int_eq(hits[i], 1);
        ck_assert_str_eq(err, "");
    }
}
END_TEST

START_TEST(test_lowest_failure_wins) {
    for (int threads = 1; threads <= 8; threads *= 2) {
        int hits[500] = {0};
        job j = {hits, 123};
        char err[64] = "";
        ck_assert_int_eq(pool_for(threads, 500, task, &j, err, sizeof err), 7);
        ck_assert_str_eq(err, "index 123");
        for (int i = 0; i <= 123; i++) ck_assert_int_eq(hits[i], 1);
    }
}
END_TEST

START_TEST(test_kept_pool_runs_batches) {
    pool *p = pool_new(4);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_ge(pool_threads(p), 1);
    ck_assert_int_le(pool_threads(p), 4);
    for (int b = 0; b < 200; b++) {
        int hits[17] = {0};
        job j = {hits, 17};
        ck_assert_int_eq(pool_run(p, 1 + b % 17, task, &j, NULL, 0), 0);
        for (int i = 0; i < 17; i++) ck_assert_int_eq(hits[i], i < 1 + b % 17);
    }
    ck_assert_int_eq(pool_run(p, 0, task, NULL, NULL, 0), 0);
    pool_free(p);
    pool_free(NULL);
}
END_TEST

/* --jobs defaulted to the online core count, not the CPUs this process
 * may use (taskset -c 0 ran as many threads as the machine has). */
/* Two tasks that each wait (up to 2 s) for the other to start: they pass
 * only when two threads run them at once. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int arrived;
} meet;

static int meet_task(void *ctx, int64_t i, char *err, size_t errlen) {
    (void)i;
    meet *m = ctx;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    pthread_mutex_lock(&m->mu);
    m->arrived++;
    pthread_cond_broadcast(&m->cv);
    int rc = 0;
    while (m->arrived < 2 && rc == 0)
        rc = pthread_cond_timedwait(&m->cv, &m->mu, &until);
    int ok = m->arrived >= 2;
    pthread_mutex_unlock(&m->mu);
    if (ok) return 0;
    snprintf(err, errlen, "alone after 2 s");
    return 1;
}

/* A new pool's threads take part in its first batch.  They used to read
 * the batch generation only once they ran, so a batch started at once
 * (pool_for) could bump it first: they then waited for the next batch,
 * and the caller ran every task alone (sweeps ran on one core). */
START_TEST(test_new_threads_join_the_first_batch) {
    for (int k = 0; k < 20; k++) {
        meet m = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
        char err[64] = "";
        ck_assert_msg(pool_for(2, 2, meet_task, &m, err, sizeof err) == 0,
                      "round %d: %s", k, err);
    }
}
END_TEST

/* Records whether its thread blocks SIGTERM, then meets the other task
 * (so the two run on two threads: the caller and a worker). */
typedef struct {
    meet m;
    int blocked[2];
} mask_meet;

static int mask_task(void *ctx, int64_t i, char *err, size_t errlen) {
    mask_meet *mm = ctx;
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    mm->blocked[i] = sigismember(&cur, SIGTERM);
    return meet_task(&mm->m, i, err, errlen);
}

/* Workers block the termination signals, so the output files' cleanup
 * handler runs on the caller's thread, and the caller's mask is left as
 * it was: of two tasks met on two threads, exactly one (the worker's)
 * runs with SIGTERM blocked. */
START_TEST(test_workers_block_termination_signals) {
    mask_meet mm = {{PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0},
                    {-1, -1}};
    char err[64] = "";
    ck_assert_msg(pool_for(2, 2, mask_task, &mm, err, sizeof err) == 0, "%s",
                  err);
    ck_assert_int_eq(mm.blocked[0] + mm.blocked[1], 1);
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    ck_assert(!sigismember(&cur, SIGTERM));
}
END_TEST

START_TEST(test_cpu_count_from_affinity) {
    cpu_set_t set;
    ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
    ck_assert_int_eq(pool_cpu_count(), CPU_COUNT(&set));
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int first = 0;
        while (!CPU_ISSET(first, &set)) first++;
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(first, &one);
        if (sched_setaffinity(0, sizeof one, &one)) _exit(3);
        _exit(pool_cpu_count() == 1 ? 0 : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status));
    ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

static Suite *make_suite(void) {
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_add_test(tc, test_every_index_once);
    tcase_add_test(tc, test_lowest_failure_wins);
    tcase_add_test(tc, test_kept_pool_runs_batches);
    tcase_add_test(tc, test_cpu_count_from_affinity);
    tcase_add_test(tc, test_new_threads_join_the_first_batch);
    tcase_add_test(tc, test_workers_block_termination_signals);
    suite_add_tcase(s, tc);
    return s;
}

CHECK_MAIN(make_suite)
