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
 * (points are numbered from 1, as the data rows of the CSV).
 *
 * The output is CSV: a header, then one row per point in point order,
 * whatever the number of threads (same input, same bytes):
 *
 *     variant,KEY1,...,KEYK,compute_utilization,goodput,wall_time_s,
 *     compute_time_s,bytes_sent_total,peak_link_gbps,avg_link_gbps,syncs,
 *     failures,lost_compute_s,recovery_bytes,finished,events
 *
 * (the variant column only when the scenario has variants; the KEY columns
 * as given, holding the values as the grid wrote them; times (*_s) the
 * exact decimal seconds of the run's integer ns (report_seconds), bytes
 * and counts whole numbers, the other numbers as the shortest decimal
 * that reads back exactly, "inf" for an infinite one).
 * Fields holding a comma, a quote or a line break are quoted as in
 * RFC 4180.
 *
 * With an output path OUT, its symbolic links are followed to the file
 * TARGET they name (OUT itself when it is no link), and the file starts
 * with a comment line before the header:
 *
 *     # dilosim sweep digest 0123456789abcdef
 *
 * a 64-bit digest (hex) of every point's resolved configuration
 * (scn_config.digest, folded in point order): another scenario, variant,
 * --set or grid gives another digest.  (The stream gets no such line.)
 * Rows go to TARGET.partial (flushed row by row); once every row is
 * written it is fsync'ed and renamed to TARGET: TARGET never exists
 * half-written.  When TARGET is a device or a FIFO the rows are written
 * straight to it (no partial file, no resume).  With resume:
 *   - when TARGET holds another digest, or something that is not a sweep
 *     file (no digest line), an input error:
 *     "OUT: written by another scenario or sweep (digest X in the file,
 *     Y for this sweep)" or "OUT: no sweep digest (...)";
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
 * Threads: the worker pool (models/pool.h) hands points out in order; the
 * worker that finishes a point writes every row that is now next in
 * order.  Points load and run in parallel.
 */
#ifndef DILOSIM_SWEEP_H
#define DILOSIM_SWEEP_H

#include <stdint.h>
#include <stdio.h>

#define SWEEP_MAX_DIMS 32             /* dimensions, section and --vary */
#define SWEEP_MAX_POINTS 10000000     /* points of one sweep */

typedef struct {
    const char *scenario;              /* the scenario file */
    const char *const *vary;           /* "KEY=SPEC", nvary of them */
    int nvary;
    const char *const *variants;       /* the variants to run, nvariants */
    int nvariants;                     /*   of them; 0: all */
    const char *const *sets;           /* "KEY=VALUE" overrides of every */
    int nset;                          /*   point; none may be a swept key */
    int jobs;                          /* worker threads, >= 1 */
    int full;                          /* --full: no fast-forward */
    const char *out;                   /* OUT, or NULL: rows to `stream` */
    int resume;                        /* needs out */
    FILE *stream;                      /* where rows go without out */
    FILE *log;                         /* notes (nothing to do); or NULL */
    /* points done (kept ones included) of total, or NULL; called from
     * one thread at a time */
    void (*progress)(void *ctx, int64_t done, int64_t total);
    void *progress_ctx;
} sweep_spec;

/* Runs the sweep.  Returns 0, or a MSG_E* code (models/msg.h) with one
 * line in err: MSG_EINPUT for a bad spec, key, variant, point value or
 * scenario, a resume file of another sweep, a name too long; MSG_ENOMEM,
 * MSG_EIO (a file that cannot be read or written), MSG_EFAIL (OUT.partial
 * in use by another sweep); a point's load or run fails with the
 * loader's or run_simulate's code, unchanged.  msg_exit_status gives the
 * command's exit status (2 for MSG_EINPUT, else 1). */
int sweep_run(const sweep_spec *s, char *err, size_t errlen);

#endif
