/*
 * sweep.h -- a grid of scenarios run in parallel, one CSV row each.
 *
 * A sweep runs every point of
 *
 *     variants x dimension 1 x ... x dimension K
 *
 * numbered row-major (the variant slowest, the last dimension fastest;
 * see grid.h).  The variants are the scenario's own ("variants" section,
 * in document order) or those asked for, in the order asked; a scenario
 * without variants runs its base.  The dimensions come from the
 * scenario's "sweep" section (in document order) and from --vary options:
 * a --vary of a key the section names replaces that dimension's values in
 * place, any other --vary adds a dimension after the section's, in
 * command-line order.
 *
 * Point p loads the scenario with its variant merged in and the --set
 * overrides followed by one "KEY=VALUE" per dimension, and is run by
 * run_simulate.  Every point is loaded once before anything runs, so a
 * bad value is reported at once, as an input error naming the point:
 *
 *     point 17 (variant=dp, network.bandwidth_gbps=-1): <loader message>
 *
 * (points are numbered from 1, as the data rows of the CSV), the loader's
 * message naming where the value came from: "FILE:LINE:COL:
 * sweep.KEY[i]: ..." for the scenario's sweep section (scn_doc_load_from),
 * "--vary KEY=SPEC: KEY: ..." for a --vary.  A bad spec in the section is
 * "FILE:LINE:COL: sweep.KEY: what is wrong".
 *
 * The output is CSV: a header, then one row per point in point order,
 * whatever the number of threads (same input, same bytes):
 *
 *     variant,KEY1,...,KEYK,compute_utilization,goodput,wall_time_s,
 *     compute_time_s,bytes_sent_total,peak_link_gbps,avg_link_gbps,syncs,
 *     failures,lost_compute_s,recovery_bytes,finished,events
 *     [,energy_kwh_total]
 *
 * (the variant column only when the scenario has variants; the last only
 * when some point gives workers.power_w or network.joules_per_gb: the
 * run's energy_kwh total, 0 at a point that gives neither; the KEY columns
 * as given, holding the values as the grid wrote them; times (*_s) the
 * exact decimal seconds of the run's integer ns (report_seconds), bytes
 * and counts whole numbers, the other numbers as the shortest decimal
 * that reads back exactly, "inf" for an infinite one).
 * Fields holding a comma, a quote or a line break are quoted as in
 * RFC 4180.
 *
 * A shard (shard K of nshards N) writes only the rows of the points p
 * with p % N == K-1, in point order; it needs an output path.
 *
 * With an output path OUT, its symbolic links are followed to the file
 * TARGET they name (OUT itself when it is no link), and the file starts
 * with a comment line before the header (sweepfile.h):
 *
 *     # dilosim sweep digest 0123456789abcdef (dilosim 0.8.0, REV)
 *     # dilosim sweep digest 0123456789abcdef shard 2/3 of 12 points (...)
 *
 * a 64-bit digest (hex) of the whole sweep: of the point count, the
 * header, and every point's resolved configuration (scn_config.digest)
 * and values as its row writes them, folded in point order: another
 * scenario, variant, --set or grid (even one writing a value otherwise)
 * gives another digest; a shard's line also says which shard it is.
 * (The stream gets no such line.)
 * Rows go to TARGET.partial (flushed row by row); once every row is
 * written it is fsync'ed and renamed to TARGET: TARGET never exists
 * half-written.  When TARGET is a device or a FIFO the rows are written
 * straight to it (no partial file, no resume).  With resume:
 *   - when TARGET holds another digest, or something that is not a sweep
 *     file (no digest line), or another part of this sweep (another
 *     shard, the whole sweep for a shard, a shard for the whole), an
 *     input error:
 *     "OUT: written by another scenario or sweep (digest X in the file,
 *     Y for this sweep)", "OUT: no sweep digest (...)" or "OUT: holds
 *     shard 2/3, not shard 1/3 (same sweep)";
 *   - when it has this sweep's digest, header and all its rows (each
 *     starting with its point's values), nothing runs and a note goes to
 *     the log;
 *   - else when TARGET.partial exists, the same digest check, then its
 *     header must be this sweep's (else "TARGET.partial: header differs
 *     from this sweep"); its complete rows are kept (each must start with
 *     its point's values; a last line without its newline is dropped) and
 *     only the other points run.
 * On any error TARGET.partial is removed, unless resume was asked for:
 * then it is kept with the rows finished so far, to resume from (a signal
 * keeps it too).  A name the system refuses as too long is an input
 * error.  A write error is "PATH: write error: why" (the stream: "write
 * error: why").
 *
 * The scenario file is read and parsed once per variant (scn_doc_open);
 * each point copies that document (scn_doc_load), so "-" (standard input)
 * works for a scenario without variants or with exactly one --variant.
 *
 * Threads: the worker pool (sim/base/pool.h) hands points out in order; the
 * worker that finishes a point writes every row that is now next in
 * order.  Points load and run in parallel.
 *
 * Elsewhere (other processes, sim/mpi/): a runner given in the spec
 * replaces the pool.  The sweep that writes the output calls it once the
 * output is open, to compute rows sweep_kept .. sweep_count - 1 with
 * sweep_compute (anywhere, in any order) and hand each to sweep_deliver
 * (in this process).  A worker sweep (spec.worker) only plans the grid
 * (no validation, no output) and calls the runner, which then computes
 * the rows another process's runner asks for.
 */
#ifndef DILOSIM_SWEEP_H
#define DILOSIM_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#define SWEEP_MAX_DIMS 32         /* dimensions, section and --vary */
#define SWEEP_MAX_POINTS 10000000 /* points of one sweep */

typedef struct sweep sweep;

/* Computes the rows of sw (see above); jobs is the spec's thread count.
 * Returns 0, or a MSG_E* code with a message (the rows' own failures go
 * to sweep_deliver). */
typedef int (*sweep_runner)(void *ctx, sweep *sw, int jobs, char *err,
                            size_t errlen);

typedef struct {
    const char *scenario;    /* the scenario file */
    const char *const *vary; /* "KEY=SPEC", nvary of them */
    int nvary;
    const char *const *variants; /* the variants to run, nvariants */
    int nvariants;               /*   of them; 0: all */
    const char *const *sets;     /* "KEY=VALUE" overrides of every */
    int nset;                    /*   point; none may be a swept key */
    int jobs;                    /* worker threads, >= 1 */
    int full;                    /* --full: no fast-forward */
    const char *out;             /* OUT, or NULL: rows to `stream` */
    int resume;                  /* needs out */
    FILE *stream;                /* where rows go without out */
    FILE *log;                   /* notes (nothing to do); or NULL */
    /* points done (kept ones included) of total, or NULL; called from
     * one thread at a time */
    void (*progress)(void *ctx, int64_t done, int64_t total);
    void *progress_ctx;
    int shard, nshards;  /* shard K of N (1 <= K <= N); N 0:
                                          the whole sweep */
    sweep_runner runner; /* NULL: the worker pool */
    void *runner_ctx;
    int worker; /* 1: plan and call the runner only */
} sweep_spec;

/* Runs the sweep.  Returns 0, or a MSG_E* code (sim/base/msg.h) with one
 * line in err: MSG_EINPUT for a bad spec, key, variant, point value or
 * scenario, a resume file of another sweep, a name too long; MSG_ENOMEM,
 * MSG_EIO (a file that cannot be read or written), MSG_EFAIL (OUT.partial
 * in use by another sweep); a point's load or run fails with the
 * loader's or run_simulate's code, unchanged.  msg_exit_status gives the
 * command's exit status (2 for MSG_EINPUT, else 1). */
int sweep_run(const sweep_spec *s, char *err, size_t errlen);

/* For a runner: the rows to compute are sweep_kept(sw) (the rows a resume
 * kept; 0 on a worker) to sweep_count(sw) - 1 (the output's rows). */
int64_t sweep_kept(const sweep *sw);
int64_t sweep_count(const sweep *sw);

/* The file the rows go to until the sweep is complete (TARGET.partial,
 * links followed), or NULL (no output file, a device or a FIFO, a
 * worker). */
const char *sweep_partial(const sweep *sw);

/* Computes row j's text (loads its point and runs it; thread-safe, any
 * sweep of the same spec).  Returns 0 and *row (malloc'ed), or the code
 * and message of sweep_run's failure of that point (*row NULL). */
int sweep_compute(const sweep *sw, int64_t j, char **row, char *err,
                  size_t errlen);

/* Hands row j over to the writing sweep (thread-safe): its text (taken;
 * rc 0), or its failure (rc and msg, as sweep_compute gave them).  Rows
 * are written in order as they become next; after a failure no later row
 * is written, and the lowest failed row's error is sweep_run's.  Returns
 * 0, or that failure's code once there is one (stop computing). */
int sweep_deliver(sweep *sw, int64_t j, char *row, int rc, const char *msg);

#endif
