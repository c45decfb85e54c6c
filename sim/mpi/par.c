/*
 * par.c -- batches over the ranks of an MPI job (see par.h).
 *
 * Messages (MPI_BYTE, the ranks share one byte order):
 *   ASK     rank -> 0   int32 credit: tasks it can hold (once a batch)
 *   TASK    0 -> rank   int64 task
 *   RESULT  rank -> 0   int64 task, int32 code, int32 more credit (1, or
 *                       more to hold more tasks), then the result (code
 *                       0) or the message
 *   DONE    0 -> rank   int32 code, int32 message length, the message,
 *                       then the packed results (a shared batch)
 *   LEAVE   rank -> 0   int32 exit status: it is in par_end
 *   STATUS  0 -> rank   int32 exit status of the job
 * A rank starts with 2 tasks a thread and asks for more as it learns how
 * long a task takes, to hold PAR_AHEAD_NS of work a thread (at most
 * PAR_DEPTH_MAX tasks).  A batch ends when every task handed out has come
 * back and every rank has asked (or left); rank 0 then sends DONE.
 *
 * On each rank one mutex guards the batch: rank 0's queue, failure and
 * deliveries; another rank's inbox and outbox.
 */
#include "sim/mpi/par.h"
#include "sim/base/msg.h"

#include <math.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TAG_ASK = 1, TAG_TASK, TAG_RESULT, TAG_DONE, TAG_LEAVE, TAG_STATUS };

#define POLL_MIN_NS 250000L
#define POLL_MAX_NS 1000000L

struct par {
    int rank, size;
    par_schedule schedule;
    char *gone; /* rank 0: ranks that left (par_end) */
};

/* A task held by a rank other than 0, then its result waiting to be
 * sent: one of the batch's nodes (PAR_DEPTH_MAX a thread; the rank holds
 * at most cap of them, its credit). */
typedef struct result {
    struct result *next;
    int64_t i;
    int32_t rc;
    char *data; /* result or message (NULL: out of memory) */
    size_t len;
} result;

/* One batch on one rank. */
typedef struct {
    par *p;
    const par_batch *b;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* not rank 0: a task arrived, or quit */
    /* rank 0 */
    int64_t next;     /* PAR_QUEUE: the next task */
    int64_t *next_of; /* PAR_STATIC: each rank's next task */
    int stopped;      /* a task failed: hand out no more */
    int64_t fail_i;
    int fail_rc;
    char fail_msg[PAR_MSG_MAX];
    int running; /* local threads still taking tasks */
    /* the other ranks */
    int cap;                 /* tasks held at most (the credit asked) */
    int64_t ran, ran_ns;     /* tasks computed, and their time */
    result *nodes;           /* PAR_DEPTH_MAX per thread */
    result *spare;           /* unused nodes */
    result *in, **in_tail;   /* tasks to compute, in order */
    result *out, **out_tail; /* results to send */
    int quit;
} batch;

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* The poll's sleep: *ns, then doubled up to POLL_MAX_NS. */
static void nap(long *ns) {
    struct timespec t = {0, *ns};
    nanosleep(&t, NULL);
    *ns = *ns * 2 > POLL_MAX_NS ? POLL_MAX_NS : *ns * 2;
}

static void put32(char *p, int32_t x) {
    memcpy(p, &x, 4);
}
static void put64(char *p, int64_t x) {
    memcpy(p, &x, 8);
}
static int32_t get32(const char *p) {
    int32_t x;
    memcpy(&x, p, 4);
    return x;
}
static int64_t get64(const char *p) {
    int64_t x;
    memcpy(&x, p, 8);
    return x;
}

/* Receives the probed message into a malloc'ed buffer with a NUL after
 * it (*len bytes).  Out of memory, the job cannot go on without the
 * message: it is aborted (as a rank that dies ends it). */
static char *receive(const MPI_Status *st, int *len) {
    MPI_Get_count(st, MPI_BYTE, len);
    char *buf = malloc((size_t)*len + 1);
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Recv(buf, *len, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    buf[*len] = 0;
    return buf;
}

static void send32(int to, int tag, int32_t x) {
    MPI_Send(&x, 4, MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

int par_init(int *argc, char ***argv, par_schedule schedule, par **out,
             char *err, size_t errlen) {
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) !=
        MPI_SUCCESS)
        return msg_set(err, errlen, -1, "MPI_Init_thread failed");
    par *p = calloc(1, sizeof *p);
    if (p) MPI_Comm_size(MPI_COMM_WORLD, &p->size);
    if (!p || !(p->gone = calloc((size_t)p->size, 1))) {
        free(p);
        MPI_Finalize();
        return msg_set(err, errlen, -1, "out of memory");
    }
    if (provided < MPI_THREAD_FUNNELED) {
        free(p->gone);
        free(p);
        MPI_Finalize();
        return msg_set(err, errlen, -1,
                       "this MPI gives no thread support "
                       "(MPI_THREAD_FUNNELED needed)");
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &p->rank);
    p->schedule = schedule;
    *out = p;
    return 0;
}

int par_rank(const par *p) {
    return p->rank;
}
int par_size(const par *p) {
    return p->size;
}

/* ---------------------------------------------------------------------
 * Rank 0
 */

/* The next task for rank r (under mu): 1 and *i, or 0 when there is none
 * (all handed out, or stopped). */
static int take(batch *t, int r, int64_t *i) {
    if (t->stopped) return 0;
    int64_t *next = t->p->schedule == PAR_STATIC ? &t->next_of[r] : &t->next;
    if (*next >= t->b->n) return 0;
    *i = *next;
    *next += t->p->schedule == PAR_STATIC ? t->p->size : 1;
    return 1;
}

/* 1 when no task is left to hand out (under mu). */
static int exhausted(const batch *t) {
    if (t->stopped) return 1;
    if (t->p->schedule == PAR_QUEUE) return t->next >= t->b->n;
    for (int r = 0; r < t->p->size; r++)
        if (t->next_of[r] < t->b->n) return 0;
    return 1;
}

/* Records a failure (under mu); the lowest task wins (a rank lost: -1). */
static void fail(batch *t, int64_t i, int rc, const char *msg) {
    t->stopped = 1;
    if (t->fail_rc && t->fail_i <= i) return;
    t->fail_i = i;
    t->fail_rc = rc ? rc : MSG_EFAIL;
    msg_set(t->fail_msg, sizeof t->fail_msg, 0, "%s", msg);
}

/* Task i's outcome (under mu). */
static void finish(batch *t, int64_t i, char *res, size_t len, int rc,
                   const char *msg) {
    if (rc) {
        free(res);
        res = NULL;
        fail(t, i, rc, msg);
    }
    t->b->deliver(t->b->ctx, i, res, len, rc, msg);
}

static void *local_thread(void *arg) {
    batch *t = arg;
    char *msg = malloc(PAR_MSG_MAX);
    int64_t i;
    pthread_mutex_lock(&t->mu);
    while (take(t, 0, &i)) {
        pthread_mutex_unlock(&t->mu);
        char *res = NULL;
        size_t len = 0;
        int rc = msg ? t->b->compute(t->b->ctx, i, &res, &len, msg, PAR_MSG_MAX)
                     : MSG_ENOMEM;
        pthread_mutex_lock(&t->mu);
        finish(t, i, res, len, rc, msg ? msg : "out of memory");
    }
    t->running--;
    pthread_mutex_unlock(&t->mu);
    free(msg);
    return NULL;
}

/* Per other rank, during a batch. */
typedef struct {
    int asked;      /* its ASK came (or it left) */
    int64_t credit; /* tasks it can take now */
    int64_t out;    /* tasks it holds */
} peer;

/* Handles one probed message of rank 0's batch loop; *held counts the
 * tasks the other ranks hold. */
static void on_message(batch *t, peer *pe, const MPI_Status *st,
                       int64_t *held) {
    int w = st->MPI_SOURCE, len;
    char *m = receive(st, &len);
    if (st->MPI_TAG == TAG_ASK && len == 4) {
        pe[w].asked = 1;
        pe[w].credit = get32(m);
    } else if (st->MPI_TAG == TAG_RESULT && len >= 16) {
        int64_t i = get64(m);
        int rc = get32(m + 8), more = get32(m + 12);
        size_t n = (size_t)len - 16;
        memmove(m, m + 16, n + 1); /* the result (or message) and its NUL */
        pthread_mutex_lock(&t->mu);
        finish(t, i, rc ? NULL : m, n, rc, m);
        pthread_mutex_unlock(&t->mu);
        if (!rc) m = NULL; /* deliver took it */
        pe[w].out--, pe[w].credit += more, (*held)--;
    } else if (st->MPI_TAG == TAG_LEAVE) {
        char msg[128];
        snprintf(msg, sizeof msg,
                 "rank %d stopped before the batch was "
                 "done (exit status %d; its input differs from rank 0's?)",
                 w, len == 4 ? get32(m) : -1);
        t->p->gone[w] = 1;
        pthread_mutex_lock(&t->mu);
        fail(t, -1, MSG_EFAIL, msg);
        pthread_mutex_unlock(&t->mu);
        *held -= pe[w].out;
        pe[w].out = 0;
        pe[w].asked = 1;
    }
    free(m);
}

/* Hands tasks to the ranks that have credit; 1 if any went out. */
static int hand_out(batch *t, peer *pe, int64_t *held) {
    int sent = 0;
    for (int w = 1; w < t->p->size; w++) {
        while (!t->p->gone[w] && pe[w].asked && pe[w].credit > 0) {
            int64_t i;
            pthread_mutex_lock(&t->mu);
            int ok = take(t, w, &i);
            pthread_mutex_unlock(&t->mu);
            if (!ok) break;
            char m[8];
            put64(m, i);
            MPI_Send(m, 8, MPI_BYTE, w, TAG_TASK, MPI_COMM_WORLD);
            pe[w].credit--, pe[w].out++, (*held)++;
            sent = 1;
        }
    }
    return sent;
}

/* DONE to every rank still here: the outcome and, on success, the packed
 * results. */
static void send_done(batch *t) {
    char *packed = NULL;
    size_t np = 0;
    if (!t->fail_rc && t->b->pack && t->b->pack(t->b->ctx, &packed, &np))
        fail(t, -1, MSG_ENOMEM, "out of memory");
    size_t nm = t->fail_rc ? strlen(t->fail_msg) : 0;
    size_t n = 8 + nm + (t->fail_rc ? 0 : np);
    char *m = malloc(n);
    if (m) {
        put32(m, t->fail_rc);
        put32(m + 4, (int32_t)nm);
        memcpy(m + 8, t->fail_msg, nm);
        if (!t->fail_rc && np) memcpy(m + 8 + nm, packed, np);
    }
    for (int w = 1; w < t->p->size; w++) {
        if (t->p->gone[w]) continue;
        if (m) MPI_Send(m, (int)n, MPI_BYTE, w, TAG_DONE, MPI_COMM_WORLD);
        else send32(w, TAG_DONE, MSG_ENOMEM); /* too short: a failure */
    }
    free(m);
    free(packed);
}

static int run_master(batch *t) {
    par *p = t->p;
    const par_batch *b = t->b;
    int size = p->size;
    t->next = b->first;
    if (p->schedule == PAR_STATIC) {
        if (!(t->next_of = malloc((size_t)size * sizeof *t->next_of)))
            return MSG_ENOMEM;
        for (int r = 0; r < size; r++) t->next_of[r] = b->first + r;
    }
    peer *pe = calloc((size_t)size, sizeof *pe);
    pthread_t *th = malloc((size_t)b->jobs * sizeof *th);
    if (!pe || !th) {
        free(pe);
        free(th);
        return MSG_ENOMEM;
    }
    /* Alone, this thread computes too; else it serves the other ranks
     * (and computes only when no thread could be started). */
    int started = 0, want = size == 1 ? b->jobs - 1 : b->jobs;
    pthread_mutex_lock(&t->mu); /* the threads wait until running is set */
    while (started < want &&
           !pthread_create(&th[started], NULL, local_thread, t))
        started++;
    int inline_too = size == 1 || !started;
    t->running = started + inline_too;
    pthread_mutex_unlock(&t->mu);
    if (inline_too) local_thread(t);
    int64_t held = 0;
    for (long ns = POLL_MIN_NS;;) {
        int flag, busy = 0;
        MPI_Status st;
        while (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                          &st) == MPI_SUCCESS &&
               flag) {
            on_message(t, pe, &st, &held);
            busy = 1;
        }
        busy |= hand_out(t, pe, &held);
        int over = held == 0;
        for (int w = 1; w < size; w++) over &= pe[w].asked || p->gone[w];
        pthread_mutex_lock(&t->mu);
        over &= t->running == 0 && exhausted(t);
        pthread_mutex_unlock(&t->mu);
        if (over) break;
        if (busy) ns = POLL_MIN_NS;
        else nap(&ns);
    }
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
    send_done(t);
    free(pe);
    free(th);
    free(t->next_of);
    return MSG_OK;
}

/* ---------------------------------------------------------------------
 * The other ranks
 */

static void *remote_thread(void *arg) {
    batch *t = arg;
    char *msg = malloc(PAR_MSG_MAX);
    pthread_mutex_lock(&t->mu);
    for (;;) {
        while (!t->quit && !t->in) pthread_cond_wait(&t->cv, &t->mu);
        if (t->quit) break;
        result *r = t->in;
        if (!(t->in = r->next)) t->in_tail = &t->in;
        pthread_mutex_unlock(&t->mu);
        int64_t t0 = now_ns();
        r->rc = msg ? t->b->compute(t->b->ctx, r->i, &r->data, &r->len, msg,
                                    PAR_MSG_MAX)
                    : MSG_ENOMEM;
        int64_t took = now_ns() - t0;
        if (r->rc) {
            free(r->data);
            r->data = strdup(msg ? msg : "out of memory");
            r->len = r->data ? strlen(r->data) : 0;
        }
        pthread_mutex_lock(&t->mu);
        r->next = NULL;
        *t->out_tail = r;
        t->out_tail = &r->next;
        t->ran++;
        t->ran_ns += took;
    }
    pthread_mutex_unlock(&t->mu);
    free(msg);
    return NULL;
}

/* The tasks this rank should hold: PAR_AHEAD_NS of work a thread, one
 * more than that, at most PAR_DEPTH_MAX (under mu). */
static int wanted(const batch *t) {
    if (!t->ran) return t->cap;
    double each = (double)t->ran_ns / (double)t->ran;
    double per = 1 + ceil(PAR_AHEAD_NS / (each > 1 ? each : 1));
    return t->b->jobs * (int)(per < PAR_DEPTH_MAX ? per : PAR_DEPTH_MAX);
}

/* Sends the results computed so far, asking for more tasks when this
 * rank should hold more; 1 if there were any. */
static int send_results(batch *t) {
    pthread_mutex_lock(&t->mu);
    result *r = t->out;
    t->out = NULL;
    t->out_tail = &t->out;
    int want = wanted(t), grow = r && want > t->cap ? want - t->cap : 0;
    t->cap += grow;
    pthread_mutex_unlock(&t->mu);
    int any = r != NULL;
    while (r) {
        result *next = r->next;
        size_t n = 16 + r->len;
        char *m = malloc(n), oom[16 + sizeof "out of memory"];
        if (!m) { /* the task must come back: as a failure */
            m = oom;
            n = sizeof oom - 1;
            r->rc = MSG_ENOMEM;
            memcpy(m + 16, "out of memory", sizeof "out of memory" - 1);
        } else if (r->len) {
            memcpy(m + 16, r->data, r->len);
        }
        put64(m, r->i);
        put32(m + 8, r->rc);
        put32(m + 12, 1 + grow);
        grow = 0;
        MPI_Send(m, (int)n, MPI_BYTE, 0, TAG_RESULT, MPI_COMM_WORLD);
        if (m != oom) free(m);
        free(r->data);
        *r = (result){0};
        pthread_mutex_lock(&t->mu);
        r->next = t->spare;
        t->spare = r;
        pthread_mutex_unlock(&t->mu);
        r = next;
    }
    return any;
}

/* The DONE message m (len bytes): the batch's code, message in err. */
static int on_done(batch *t, const char *m, int len, char *err, size_t errlen) {
    if (len < 8) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    int rc = get32(m), nm = get32(m + 4);
    if (nm < 0 || nm > len - 8) nm = 0;
    if (rc) return msg_set(err, errlen, rc, "%.*s", nm, m + 8);
    if (t->b->unpack)
        t->b->unpack(t->b->ctx, m + 8 + nm, (size_t)(len - 8 - nm));
    return MSG_OK;
}

static int run_remote(batch *t, char *err, size_t errlen) {
    const par_batch *b = t->b;
    int nodes = PAR_DEPTH_MAX * b->jobs;
    t->cap = 2 * b->jobs;
    t->in_tail = &t->in;
    t->out_tail = &t->out;
    pthread_t *th = malloc((size_t)b->jobs * sizeof *th);
    if (!(t->nodes = calloc((size_t)nodes, sizeof *t->nodes)) || !th) {
        free(th);
        th = NULL;
        t->cap = nodes = 0; /* ask for nothing: rank 0 sends no task */
    }
    for (int k = 0; k < nodes; k++) {
        t->nodes[k].next = t->spare;
        t->spare = &t->nodes[k];
    }
    int started = 0;
    while (th && started < b->jobs &&
           !pthread_create(&th[started], NULL, remote_thread, t))
        started++;
    if (!started) t->cap = 0;
    send32(0, TAG_ASK, t->cap);
    int rc = MSG_OK, done = 0;
    for (long ns = POLL_MIN_NS; !done;) {
        int flag, busy = 0, len;
        MPI_Status st;
        for (MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
             flag && !done;
             MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st)) {
            char *m = receive(&st, &len);
            busy = 1;
            if (st.MPI_TAG == TAG_TASK && len == 8) {
                pthread_mutex_lock(&t->mu);
                result *r = t->spare; /* never NULL: rank 0 keeps to the
                                         credit */
                if (r) {
                    t->spare = r->next;
                    r->next = NULL;
                    r->i = get64(m);
                    *t->in_tail = r;
                    t->in_tail = &r->next;
                    pthread_cond_signal(&t->cv);
                }
                pthread_mutex_unlock(&t->mu);
            } else if (st.MPI_TAG == TAG_DONE) {
                rc = on_done(t, m, len, err, errlen);
                done = 1;
            }
            free(m);
        }
        busy |= send_results(t);
        if (busy) ns = POLL_MIN_NS;
        else if (!done) nap(&ns);
    }
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
    free(th);
    free(t->nodes);
    return rc;
}

int par_run(par *p, const par_batch *b, char *err, size_t errlen) {
    batch *t = calloc(1, sizeof *t);
    if (!t) return msg_set(err, errlen, MSG_ENOMEM, "out of memory");
    t->p = p;
    t->b = b;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    int rc;
    if (p->rank) {
        rc = run_remote(t, err, errlen);
    } else {
        rc = run_master(t);
        if (rc) msg_set(err, errlen, rc, "out of memory");
        else if ((rc = t->fail_rc)) msg_set(err, errlen, rc, "%s", t->fail_msg);
    }
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
    return rc;
}

int par_end(par *p, int status) {
    if (p->rank) {
        send32(0, TAG_LEAVE, status);
        int got = -1;
        for (long ns = POLL_MIN_NS; got < 0;) {
            int flag, len;
            MPI_Status st;
            MPI_Iprobe(0, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            if (!flag) {
                nap(&ns);
                continue;
            }
            char *m = receive(&st, &len);
            if (st.MPI_TAG == TAG_STATUS && len == 4) got = get32(m);
            free(m);
        }
        status = got;
    } else {
        /* Wait for every rank: one still in a batch rank 0 is not in
         * asks; it is told that batch failed. */
        for (long ns = POLL_MIN_NS;;) {
            int left = 1;
            for (int w = 1; w < p->size; w++) left &= p->gone[w];
            if (left) break;
            int flag, len;
            MPI_Status st;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
            if (!flag) {
                nap(&ns);
                continue;
            }
            char *m = receive(&st, &len);
            if (st.MPI_TAG == TAG_LEAVE) p->gone[st.MPI_SOURCE] = 1;
            if (st.MPI_TAG == TAG_ASK) {
                static const char why[] = "rank 0 stopped";
                char d[8 + sizeof why];
                put32(d, MSG_EFAIL);
                put32(d + 4, (int32_t)strlen(why));
                memcpy(d + 8, why, strlen(why));
                MPI_Send(d, (int)(8 + strlen(why)), MPI_BYTE, st.MPI_SOURCE,
                         TAG_DONE, MPI_COMM_WORLD);
            }
            free(m);
            ns = POLL_MIN_NS;
        }
        for (int w = 1; w < p->size; w++) send32(w, TAG_STATUS, status);
    }
    MPI_Finalize();
    free(p->gone);
    free(p);
    return status;
}
