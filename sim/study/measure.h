/*
 * measure.h -- what was measured on a buyer's own cluster, read strictly
 * for `dilosim calibrate`: runs, collectives, streams, step times and
 * outages, each row knowing the file and line it came from.
 *
 * The formats (meas_load tells them apart by their content):
 *
 * - Runs: a CSV whose header holds the columns
 *     method,workers,params,codec,H,fragments,tau,steps,step_time_s,
 *     bandwidth_gbps,latency_ms,wall_s
 *   in any order, and optionally sync_blocked_s and compute_s.  One row a
 *   run; a row describes the run's world (as the scenario keys
 *   method.name, workers.count, model.params, method.codec, method.H,
 *   method.fragments, method.tau, steps, model.step_time_s,
 *   network.bandwidth_gbps, network.latency_ms), the base scenario the
 *   rest.  An empty field sets nothing (DP has no H).
 * - Collectives: the text output of nccl-tests' all_reduce_perf: its
 *   "#  Rank ..." lines give the ranks; each data row "size count type
 *   redop root time algbw busbw #wrong time algbw busbw #wrong" one warm
 *   all-reduce of `size` bytes among the ranks, taking the out-of-place
 *   `time` (us).
 * - Streams: the JSON of `iperf3 --json`: end.sum_sent.bytes moved over
 *   start.test_start.num_streams TCP connections in end.sum_sent.seconds.
 * - Step times: a CSV with the header worker,step,seconds: one inner step
 *   of one worker.
 * - Outages: a CSV with the header worker,down_s,up_s: one failure of one
 *   worker, from the instant it went down to the one it was back.
 *
 * A line starting with '#' in a CSV is a comment.  Errors are one line,
 * "FILE:LINE:COL: what is wrong (expected ...)" (COL the field's first
 * byte), MSG_EINPUT.
 */
#ifndef DILOSIM_MEASURE_H
#define DILOSIM_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/config/scenario.h"

#define MEAS_MAX_FILES 64
#define MEAS_MAX_SETS 16 /* overrides of one run row */
#define MEAS_SET_MAX 96  /* bytes of one, with the NUL */

typedef enum {
    MEAS_RUN,       /* a whole run: measured = its wall time */
    MEAS_ALLREDUCE, /* one warm all-reduce: measured = its time */
    MEAS_STREAM     /* one iperf3 test: measured = its duration */
} meas_kind;

typedef struct {
    meas_kind kind;
    int file; /* index in meas_set.file */
    int line; /* 1-based line of the row (streams: of "end") */
    double measured_s;
    /* MEAS_RUN: the row's world as overrides, "key=value" in the order of
       the columns above; and the optional columns (NAN: absent) */
    int nset;
    char sets[MEAS_MAX_SETS][MEAS_SET_MAX];
    double sync_blocked_s, compute_s;
    /* MEAS_ALLREDUCE: bytes among ranks; MEAS_STREAM: bytes over streams */
    double bytes;
    int ranks, streams;
} meas_row;

typedef struct {
    int file, line;
    int worker;
    int64_t step;
    double seconds;
} meas_step;

typedef struct {
    int file, line;
    int worker;
    double down_s, up_s; /* up_s > down_s */
} meas_outage;

typedef enum {
    MEAS_FORMAT_RUNS,
    MEAS_FORMAT_NCCL,
    MEAS_FORMAT_IPERF3,
    MEAS_FORMAT_STEPS,
    MEAS_FORMAT_OUTAGES
} meas_format;

typedef struct {
    char *path;
    meas_format format;
    uint64_t digest; /* scn_digest_bytes of its contents */
    int rows;        /* rows (steps, outages) it gave */
} meas_file;

typedef struct {
    int nfiles;
    meas_file file[MEAS_MAX_FILES];
    int nrows;
    meas_row *rows;
    int nsteps;
    meas_step *steps;
    int noutages;
    meas_outage *outages;
} meas_set;

/* Reads the file at path, tells its format from its content, and appends
 * what it holds to *m (zeroed before the first call).  Returns 0, or
 * MSG_EINPUT (the file cannot be read, its format is none of the above, a
 * bad row: the message names file, line and column; a file with no row) /
 * MSG_ENOMEM, with a one-line message in err; *m then holds what earlier
 * calls appended. */
int meas_load(meas_set *m, const char *path, char *err, size_t errlen);

/* "runs", "nccl-tests", "iperf3", "step times", "outages". */
const char *meas_format_name(meas_format f);

/* Frees what meas_load appended; *m is left zeroed. */
void meas_free(meas_set *m);

/* What step times say about the workers (closed form, no simulation).
 * step_time_s is the median of worker 0's steps (the scenario's
 * model.step_time_s, speed 1); speed[i] that over worker i's median.  A
 * step slower than (1 + MEAS_STRAGGLER_MARGIN) times its worker's median
 * is a straggler's: probability = their share of all steps, slowdown =
 * the mean of their ratio to the median (1 when there is none).  Each
 * estimate with its standard error (NAN where one sample gives none). */
#define MEAS_STRAGGLER_MARGIN 0.2
typedef struct {
    int workers; /* 1 + the largest worker index; each must have steps */
    double step_time_s, step_time_se;
    double speed[SCN_MAX_WORKERS], speed_se[SCN_MAX_WORKERS];
    double straggler_prob, straggler_prob_se;
    double straggler_slowdown, straggler_slowdown_se;
    int64_t steps, slow_steps;
} meas_speeds;

/* Returns 0, or MSG_EINPUT with a one-line message (no step times, a
 * worker without steps, more than SCN_MAX_WORKERS workers). */
int meas_fit_speeds(const meas_set *m, meas_speeds *out, char *err,
                    size_t errlen);

/* What outages say about failures: over an observed span of `span_s`
 * seconds of `workers` workers (the caller's: the log does not say how
 * long it watched), MTBF = (workers x span - down time) / failures and
 * MTTR = the mean outage, in hours, with standard errors (exponential
 * times: MTBF / sqrt(failures); MTTR: the sample's). */
typedef struct {
    int64_t failures;
    double mtbf_hours, mtbf_hours_se;
    double mttr_hours, mttr_hours_se;
} meas_faults;

/* Returns 0, or MSG_EINPUT with a one-line message (no outage, an outage
 * past the span or of a worker >= workers, overlapping outages of one
 * worker). */
int meas_fit_faults(const meas_set *m, int workers, double span_s,
                    meas_faults *out, char *err, size_t errlen);

#endif
