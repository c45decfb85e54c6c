/*
 * par.h -- batches of tasks spread over the processes (ranks) of an MPI
 * job: a queue on rank 0 hands the tasks out, in index order, to its own
 * threads and to the other ranks as they ask, and rank 0 receives every
 * result.
 *
 * Every rank runs the same program and calls par_run for the same
 * batches in the same order (a table's evaluations, then its solves; a
 * sweep's rows).  Rank 0 knows the batch (its first and last task); the
 * others only compute the tasks it sends them.  A rank holds tasks ahead
 * of its threads, PAR_AHEAD_NS of work a thread (4 ms, as it measures
 * them; 2 tasks a thread to start with, at most PAR_DEPTH_MAX), and asks
 * for one more with each result it sends back, so that its threads never
 * wait for the next task though rank 0 answers only every 0.25 to 1 ms.
 *
 * Only the thread that called par_init calls MPI (MPI_THREAD_FUNNELED):
 * it polls for messages, sleeping a little longer each time nothing
 * arrives (0.25 ms up to 1 ms), so that a rank waiting for work leaves
 * its core to the ranks computing; the rank's `jobs` threads compute.
 *
 * A rank killed while the job runs ends it: mpirun stops every other rank
 * (SIGTERM), so nothing here waits for a rank that is gone.
 */
#ifndef DILOSIM_PAR_H
#define DILOSIM_PAR_H

#include <stddef.h>
#include <stdint.h>

#define PAR_AHEAD_NS 4000000 /* work a rank holds ahead per thread */
#define PAR_DEPTH_MAX 64     /* tasks a rank holds per thread, at most */
#define PAR_MSG_MAX 8192     /* a failure's message */

/* How rank 0 hands tasks out. */
typedef enum {
    PAR_QUEUE, /* in index order, to whichever rank asks (the default) */
    PAR_STATIC /* task first + k to rank k % size, all at once */
} par_schedule;

typedef struct par par;

/* Starts MPI (MPI_Init_thread, funneled) and the job's state.  Returns
 * 0, or -1 with a message in err (MPI is then not usable). */
int par_init(int *argc, char ***argv, par_schedule schedule, par **out,
             char *err, size_t errlen);

int par_rank(const par *p);
int par_size(const par *p);

/* A batch.  compute runs on any rank, on `jobs` threads at once: it
 * returns 0 and its result (*res malloc'ed, *len bytes; taken by the
 * engine), or a MSG_E* code and a message.  deliver runs on rank 0, one
 * call at a time, once per task computed: the result (its bytes, with a
 * NUL after them, taken by deliver; NULL on failure), or the failure's
 * code and message.  pack and unpack (both or neither) share the
 * results with every rank once the batch has succeeded: rank 0 packs
 * them into one buffer (malloc'ed), the others unpack it. */
typedef struct {
    int (*compute)(void *ctx, int64_t i, char **res, size_t *len, char *err,
                   size_t errlen);
    void (*deliver)(void *ctx, int64_t i, char *res, size_t len, int rc,
                    const char *msg);
    int (*pack)(void *ctx, char **buf, size_t *len);
    void (*unpack)(void *ctx, const char *buf, size_t len);
    void *ctx;
    int64_t first, n; /* rank 0: tasks first .. n - 1 */
    int jobs;         /* compute threads of this rank, >= 1 */
} par_batch;

/* Runs a batch (every rank, see above).  After a task fails no further
 * one is handed out, and the batch fails with the lowest failed task's
 * code and message, on every rank (a rank that stopped taking part is a
 * failure too, "rank R stopped ...").  Returns 0 or that code. */
int par_run(par *p, const par_batch *b, char *err, size_t errlen);

/* Ends the job: every rank gives its exit status; rank 0's is returned
 * on every rank (ranks still inside a batch rank 0 is not in are told it
 * failed).  MPI_Finalize; frees p. */
int par_end(par *p, int status);

#endif
