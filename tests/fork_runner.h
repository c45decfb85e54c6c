/*
 * fork_runner.h -- runners that compute every task in a child process of
 * its own, last task first, for tests of the seams another process (an
 * MPI rank) runs tasks through (table.h's table_runner, sweep.h's
 * sweep_runner).
 *
 * A child shares nothing with the test after the fork: what the task
 * writes outside the bytes it declares (a table task's out, a sweep row)
 * is lost, as it is on another rank, so a result that depends on such a
 * write differs from the threads' one.
 */
#ifndef DILOSIM_TESTS_FORK_RUNNER_H
#define DILOSIM_TESTS_FORK_RUNNER_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim/study/sweep.h"
#include "sim/study/table.h"

/* Runs fn(ctx, i, &bytes, &len, err) in a child; returns its code and, on
 * success, the bytes (malloc'ed) it produced; the message in err. */
typedef int (*fork_fn)(void *ctx, int64_t i, char **bytes, size_t *len,
                       char *err, size_t errlen);

static inline int fork_call(fork_fn fn, void *ctx, int64_t i, char **bytes,
                            size_t *len, char *err, size_t errlen) {
    int fd[2];
    ck_assert_int_eq(pipe(fd), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) { /* code, length, then the bytes or the message */
        close(fd[0]);
        char *b = NULL;
        size_t n = 0;
        int32_t rc = fn(ctx, i, &b, &n, err, errlen);
        if (rc) {
            b = err;
            n = strlen(err);
        }
        if (write(fd[1], &rc, 4) != 4 ||
            write(fd[1], &n, sizeof n) != (ssize_t)sizeof n ||
            (n && write(fd[1], b, n) != (ssize_t)n))
            _exit(1);
        _exit(0);
    }
    close(fd[1]);
    int32_t rc;
    size_t n;
    FILE *f = fdopen(fd[0], "rb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fread(&rc, 4, 1, f), 1);
    ck_assert_int_eq(fread(&n, sizeof n, 1, f), 1);
    char *b = malloc(n + 1);
    ck_assert_ptr_nonnull(b);
    ck_assert_uint_eq(fread(b, 1, n, f), n);
    b[n] = 0;
    fclose(f);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (rc) {
        snprintf(err, errlen, "%s", b);
        free(b);
        b = NULL;
    }
    *bytes = b;
    *len = n;
    return rc;
}

/* ---- table_runner ------------------------------------------------------ */

typedef struct {
    table_task_fn task;
    table_out_fn out;
    void *ctx;
} fork_table;

static inline int fork_table_task(void *ctx, int64_t i, char **bytes,
                                  size_t *len, char *err, size_t errlen) {
    fork_table *t = ctx;
    int rc = t->task(t->ctx, (int)i, err, errlen);
    if (rc) return rc;
    void *at;
    t->out(t->ctx, (int)i, &at, len);
    *bytes = at;
    return 0;
}

/* Counts the batches it ran in *(int *)self. */
static inline int fork_table_run(void *self, int n, int jobs,
                                 table_task_fn task, table_out_fn out,
                                 void *ctx, table_progress *pr, char *err,
                                 size_t errlen) {
    (void)jobs;
    ++*(int *)self;
    fork_table t = {task, out, ctx};
    int rc = 0;
    char msg[1024];
    for (int i = n - 1; i >= 0; i--) {
        char *b;
        size_t len;
        int got = fork_call(fork_table_task, &t, i, &b, &len, msg, sizeof msg);
        if (!got) {
            void *at;
            size_t want;
            out(ctx, i, &at, &want);
            ck_assert_uint_eq(len, want);
            memcpy(at, b, len);
            free(b);
        } else {
            rc = got; /* the lowest failed index's, as the last one seen */
            snprintf(err, errlen, "%s", msg);
        }
        table_progress_step(pr);
    }
    return rc;
}

/* ---- sweep_runner ------------------------------------------------------ */

static inline int fork_sweep_row(void *ctx, int64_t j, char **bytes,
                                 size_t *len, char *err, size_t errlen) {
    int rc = sweep_compute(ctx, j, bytes, err, errlen);
    *len = *bytes ? strlen(*bytes) : 0;
    return rc;
}

/* Computes the rows last first, each in a child, and delivers them. */
static inline int fork_sweep_run(void *ctx, sweep *sw, int jobs, char *err,
                                 size_t errlen) {
    (void)ctx, (void)jobs, (void)err, (void)errlen;
    char msg[2048];
    for (int64_t j = sweep_count(sw) - 1; j >= sweep_kept(sw); j--) {
        char *row;
        size_t len;
        int rc = fork_call(fork_sweep_row, sw, j, &row, &len, msg, sizeof msg);
        sweep_deliver(sw, j, row, rc, msg);
    }
    return 0;
}

#endif
